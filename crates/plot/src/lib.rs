//! The line charts of the workspace as SVG documents, drawn with `plotters`' SVG backend: one
//! [`Figure`] type for the simulator's plots (`docs/sim/*.svg`) and the benchmark report's
//! (`docs/perf/*.svg`).
//!
//! A figure has a title, a legend (every series label once, beside or above the panels),
//! and one or more [`Panel`]s in a grid, each a frame with a grid, tick labels, axis labels
//! and one polyline with point markers per [`Series`] (solid or dashed). Axes are linear or
//! logarithmic ([`Scale`]). Text is written as SVG `<text>` in a sans-serif font for the
//! viewer to render: no font library is needed to build or run it.
#![deny(missing_docs)]

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod labels;
pub use labels::{decade, number};

/// One line of a panel.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Colour, `0xRRGGBB`.
    pub color: u32,
    /// Dashed line.
    pub dashed: bool,
    /// Points `(x, y)`, drawn in order of x; on a logarithmic axis, points at or below zero
    /// (and non-finite ones) are left out.
    pub points: Vec<(f64, f64)>,
}

/// One panel of a figure.
#[derive(Clone, Debug, Default)]
pub struct Panel {
    /// Title above the panel (none when empty).
    pub title: String,
    /// Its lines.
    pub series: Vec<Series>,
}

/// How an axis maps values, where its ticks are and its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Linear: ticks at round steps (about 8); the y range is padded by 8 % of its span (at
    /// least 1).
    Linear,
    /// Logarithmic, base 2: the data's range (widened to one octave at least); ticks at powers
    /// of two, at most about 8 labelled.
    Log2,
    /// Logarithmic, base 10: whole decades; ticks at powers of ten, and at 2× and 5× them when
    /// the range spans at most 3 decades.
    Log10,
}

/// An axis: its label, scale and tick text.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Axis label.
    pub label: String,
    /// Scale.
    pub scale: Scale,
    /// Text of the tick at a value.
    pub tick: fn(f64) -> String,
}

impl Axis {
    /// A linear axis with [`number`] ticks.
    pub fn linear(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Linear,
            tick: number,
        }
    }

    /// A base-2 logarithmic axis with ticks written by `tick`.
    pub fn log2(label: impl Into<String>, tick: fn(f64) -> String) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log2,
            tick,
        }
    }

    /// A base-10 logarithmic axis with [`decade`] ticks.
    pub fn log10(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            scale: Scale::Log10,
            tick: decade,
        }
    }
}

/// Where the legend goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Legend {
    /// A column right of the panels.
    Right,
    /// Rows under the title, wrapped to the figure's width.
    Top,
}

/// A figure: a title, the axes every panel shares, panels in a grid of `columns`, a legend.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Title above everything.
    pub title: String,
    /// X axis of every panel.
    pub x: Axis,
    /// Y axis of every panel.
    pub y: Axis,
    /// The panels, row by row.
    pub panels: Vec<Panel>,
    /// Panels per row.
    pub columns: usize,
    /// Size of one panel in pixels (its title, tick labels and axis labels included).
    pub panel_size: (u32, u32),
    /// Where the legend goes.
    pub legend: Legend,
}

/// Height of the figure title's band.
const TITLE_H: u32 = 30;
/// Width of a right legend.
const LEGEND_W: u32 = 190;
/// Height of one row of a top legend, and the space under the rows.
const LEGEND_ROW_H: u32 = 18;
const LEGEND_GAP: u32 = 14;
/// Panel margins: left (a gap, then the y label and tick labels), right, top (title),
/// bottom (tick labels and x label, then a gap).
const LEFT: u32 = 56;
const LEFT_GAP: u32 = 6;
const RIGHT: u32 = 14;
const TOP: u32 = 28;
const TOP_UNTITLED: u32 = 10;
const BOTTOM: u32 = 34;
const BOTTOM_GAP: u32 = 6;
const FONT: &str = "sans-serif";
const GRID: RGBColor = RGBColor(0xe0, 0xe0, 0xe0);
const FRAME: RGBColor = RGBColor(0x44, 0x44, 0x44);

/// The sans-serif font of `px` pixels (plotters' SVG backend writes 1/1.24 of the size asked).
fn font(px: f64) -> FontDesc<'static> {
    (FONT, px * 1.24).into_font()
}

fn rgb(c: u32) -> RGBColor {
    RGBColor((c >> 16) as u8, (c >> 8) as u8, c as u8)
}

/// A value on an axis, as drawn (the logarithm on a logarithmic axis); `None` where it
/// cannot be drawn.
fn to_axis(scale: Scale, v: f64) -> Option<f64> {
    let t = match scale {
        Scale::Linear => v,
        Scale::Log2 if v > 0.0 => v.log2(),
        Scale::Log10 if v > 0.0 => v.log10(),
        _ => return None,
    };
    t.is_finite().then_some(t)
}

fn from_axis(scale: Scale, t: f64) -> f64 {
    match scale {
        Scale::Linear => t,
        Scale::Log2 => t.exp2(),
        Scale::Log10 => 10f64.powf(t),
    }
}

/// Ticks at multiples of 1, 2, 2.5 or 5 × 10^k, at most `n` steps over [lo, hi].
fn round_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let mag = 10f64.powf((span / n as f64).log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= n as f64)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + 1e-9 {
        // Snap away rounding noise so that the tick texts read 0.3, not 0.30000000000000004.
        v.push((t / step).round() * step);
        t += step;
    }
    v
}

/// The drawn range of an axis with the drawn values `lo..=hi`, and its ticks (drawn values).
fn range_and_ticks(scale: Scale, lo: f64, hi: f64, pad: bool) -> ((f64, f64), Vec<f64>) {
    match scale {
        Scale::Linear => {
            let (lo, hi) = if pad {
                let p = ((hi - lo) * 0.08).max(1.0);
                (lo - p, hi + p)
            } else if hi > lo {
                (lo, hi)
            } else {
                (lo, lo + 1.0)
            };
            ((lo, hi), round_ticks(lo, hi, 8))
        }
        Scale::Log2 => {
            let (lo, hi) = if hi - lo < 1.0 {
                (lo - 0.5, hi + 0.5)
            } else {
                (lo, hi)
            };
            let (k0, k1) = (lo.ceil() as i32, hi.floor() as i32);
            let step = ((k1 - k0) / 8 + 1).max(1);
            let ticks = (k0..=k1).step_by(step as usize).map(f64::from).collect();
            ((lo, hi), ticks)
        }
        Scale::Log10 => {
            let lo = lo.floor();
            let hi = hi.ceil().max(lo + 1.0);
            let few = hi - lo <= 3.0;
            let mut ticks = Vec::new();
            for d in lo as i32..=hi as i32 {
                for m in [1.0f64, 2.0, 5.0] {
                    let t = f64::from(d) + m.log10();
                    if (m == 1.0 || few) && t <= hi + 1e-9 {
                        ticks.push(t);
                    }
                }
            }
            ((lo, hi), ticks)
        }
    }
}

/// Width of a text in the figure's fonts, estimated (for laying out the legend).
fn text_width(s: &str) -> u32 {
    (6.5 * s.chars().count() as f64).round() as u32
}

/// A linear coordinate (of drawn values) with our ticks: grid lines and labels there only.
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Ticked {
        Ticked {
            inner: (lo..hi).into(),
            ticks,
        }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

impl Figure {
    /// Every series label once, in order of first appearance, with its style.
    fn legend_entries(&self) -> Vec<&Series> {
        let mut out: Vec<&Series> = Vec::new();
        for s in self.panels.iter().flat_map(|p| &p.series) {
            if !out.iter().any(|e| e.label == s.label) {
                out.push(s);
            }
        }
        out
    }

    /// Rows of a top legend: entries with their x offsets, wrapped at `width`.
    fn legend_rows(&self, width: u32) -> Vec<Vec<(u32, &Series)>> {
        let mut rows: Vec<Vec<(u32, &Series)>> = vec![Vec::new()];
        let mut x = 20;
        for s in self.legend_entries() {
            let w = 40 + text_width(&s.label);
            if x + w > width.saturating_sub(10) && x > 20 {
                rows.push(Vec::new());
                x = 20;
            }
            rows.last_mut().expect("a row").push((x, s));
            x += w;
        }
        rows
    }

    /// Renders the figure as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols).max(1);
        let (pw, ph) = self.panel_size;
        let grid_w = pw * cols as u32;
        let (width, top, right) = match self.legend {
            Legend::Right => (grid_w + LEGEND_W, TITLE_H, LEGEND_W),
            Legend::Top => {
                let n = self.legend_rows(grid_w).len() as u32;
                (grid_w, TITLE_H + n * LEGEND_ROW_H + LEGEND_GAP, 0)
            }
        };
        let height = top + ph * rows as u32;
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
            // Drawing into a string fails only on a bug of ours (e.g. a degenerate range):
            // write what there is rather than nothing.
            let _ = self.draw(&root, top, right, rows, cols);
            let _ = root.present();
        }
        svg
    }

    fn draw(&self, root: &Area<'_>, top: u32, right: u32, rows: usize, cols: usize) -> Result<()> {
        root.fill(&WHITE)?;
        let (width, _) = root.dim_in_pixel();
        let grid_w = width - right;
        let title = font(15.0)
            .style(FontStyle::Bold)
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(
            self.title.clone(),
            (grid_w as i32 / 2, 16),
            title,
        ))?;
        match self.legend {
            Legend::Top => {
                for (i, row) in self.legend_rows(grid_w).into_iter().enumerate() {
                    let y = (TITLE_H + LEGEND_ROW_H / 2 + LEGEND_ROW_H * i as u32) as i32;
                    for (x, s) in row {
                        legend_entry(root, s, x as i32, y)?;
                    }
                }
            }
            Legend::Right => {
                let x = (grid_w + 12) as i32;
                for (i, s) in self.legend_entries().into_iter().enumerate() {
                    let y = (top + TOP_UNTITLED + 14) as i32 + 20 * i as i32;
                    legend_entry(root, s, x, y)?;
                }
            }
        }
        let grid = root.margin(top, 0, 0, right);
        for (area, panel) in grid.split_evenly((rows, cols)).iter().zip(&self.panels) {
            self.panel(area, panel)?;
        }
        Ok(())
    }

    fn panel(&self, area: &Area<'_>, p: &Panel) -> Result<()> {
        let (xs, ys) = (self.x.scale, self.y.scale);
        // The drawn points of each series, in order of x.
        let lines: Vec<(&Series, Vec<(f64, f64)>)> = p
            .series
            .iter()
            .map(|s| {
                let mut pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter_map(|&(x, y)| Some((to_axis(xs, x)?, to_axis(ys, y)?)))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                (s, pts)
            })
            .collect();
        let all = || lines.iter().flat_map(|(_, pts)| pts.iter().copied());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for (x, y) in all() {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
        let empty = all().next().is_none();
        if empty {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        let ((x0, x1), xt) = range_and_ticks(xs, x0, x1, false);
        let ((y0, y1), yt) = range_and_ticks(ys, y0, y1, true);
        let top = if p.title.is_empty() {
            TOP_UNTITLED
        } else {
            TOP
        };
        let mut b = ChartBuilder::on(area);
        b.margin_top(top)
            .margin_right(RIGHT)
            .margin_bottom(BOTTOM_GAP)
            .margin_left(LEFT_GAP)
            .x_label_area_size(BOTTOM)
            .y_label_area_size(LEFT);
        let mut chart = b.build_cartesian_2d(Ticked::new(x0, x1, xt), Ticked::new(y0, y1, yt))?;
        let (xf, yf) = (self.x.tick, self.y.tick);
        let xl = move |t: &f64| xf(from_axis(xs, *t));
        let yl = move |t: &f64| yf(from_axis(ys, *t));
        chart
            .configure_mesh()
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(TRANSPARENT)
            .set_all_tick_mark_size(4)
            .x_label_formatter(&xl)
            .y_label_formatter(&yl)
            .label_style(font(11.0).color(&BLACK))
            .axis_desc_style(font(12.0).color(&BLACK))
            .x_desc(self.x.label.as_str())
            .y_desc(self.y.label.as_str())
            .draw()?;
        let plot = chart.plotting_area();
        let (px, py) = plot.get_pixel_range();
        if !p.title.is_empty() {
            let style = font(13.0)
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            let (ox, oy) = area.get_base_pixel();
            area.draw(&Text::new(
                p.title.clone(),
                ((px.start + px.end) / 2 - ox, py.start - oy - 8),
                style,
            ))?;
        }
        plot.draw(&Rectangle::new([(x0, y0), (x1, y1)], FRAME.stroke_width(1)))?;
        if empty {
            let style = font(12.0)
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center));
            plot.draw(&Text::new(
                "no data",
                ((x0 + x1) / 2.0, (y0 + y1) / 2.0),
                style,
            ))?;
        }
        for (s, pts) in lines {
            let line = rgb(s.color).stroke_width(2);
            if s.dashed {
                chart.draw_series(DashedLineSeries::new(pts.iter().copied(), 6, 4, line))?;
            } else {
                chart.draw_series(LineSeries::new(pts.iter().copied(), line))?;
            }
            chart.draw_series(
                pts.iter()
                    .map(|&c| Circle::new(c, 3, rgb(s.color).filled())),
            )?;
        }
        Ok(())
    }
}

/// A legend entry: a line sample (dashed or not) and the label, centred on `y`.
fn legend_entry(root: &Area<'_>, s: &Series, x: i32, y: i32) -> Result<()> {
    let style = rgb(s.color).stroke_width(2);
    let sample = [(x, y), (x + 24, y)];
    if s.dashed {
        root.draw(&DashedPathElement::new(sample, 6, 4, style))?;
    } else {
        root.draw(&PathElement::new(sample, style))?;
    }
    let text = font(12.0)
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    root.draw(&Text::new(s.label.clone(), (x + 30, y), text))?;
    Ok(())
}

#[cfg(test)]
mod tests;
