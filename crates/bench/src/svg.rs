//! Hand-written SVG line charts on log–log axes (no plotting dependency): one figure of
//! several panels (one per rank count), one polyline per implementation, a shared legend.

use std::fmt::Write;

/// One line of a panel.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// CSS colour.
    pub color: String,
    /// Dashed line (for the floors).
    pub dashed: bool,
    /// `(x, y)` points; points with x ≤ 0 or y ≤ 0 are left out (log axes).
    pub points: Vec<(f64, f64)>,
}

/// One panel of a figure.
#[derive(Clone, Debug)]
pub struct Panel {
    /// Panel title (e.g. `np = 8`).
    pub title: String,
    /// Its lines.
    pub series: Vec<Series>,
}

/// A figure: a title, axis labels, panels in a grid of `columns`.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Figure title.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// The panels.
    pub panels: Vec<Panel>,
    /// Panels per row.
    pub columns: usize,
    /// Label of x = 2^k ticks (e.g. byte sizes as `64K`); x ticks are powers of two.
    pub x_tick: fn(f64) -> String,
}

const PW: f64 = 440.0; // panel width
const PH: f64 = 300.0; // panel height
const ML: f64 = 62.0; // margins inside a panel
const MR: f64 = 14.0;
const MT: f64 = 28.0;
const MB: f64 = 40.0;
const TOP: f64 = 62.0; // figure title + legend

/// Byte sizes as `8`, `64`, `1K`, `64K`, `1M`.
pub fn size_label(x: f64) -> String {
    let v = x.round() as u64;
    if v >= 1 << 20 && v % (1 << 20) == 0 {
        format!("{}M", v >> 20)
    } else if v >= 1 << 10 && v % (1 << 10) == 0 {
        format!("{}K", v >> 10)
    } else {
        v.to_string()
    }
}

/// Plain integers (`2`, `4`, `16`).
pub fn int_label(x: f64) -> String {
    format!("{}", x.round() as u64)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Y tick label: 1, 10, 100, 1000, 10k, ...
fn y_label(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{}k", v / 1e3)
    } else if v >= 1.0 {
        format!("{v}")
    } else {
        format!("{v:.2}")
    }
}

impl Figure {
    /// Render the figure as a complete SVG document.
    pub fn render(&self) -> String {
        let cols = self.columns.max(1);
        let rows = self.panels.len().div_ceil(cols).max(1);
        let width = PW * cols as f64;
        // Legend: every series name once, in order of first appearance, wrapped to the
        // figure's width.
        let mut legend: Vec<(&str, &str, bool, f64, f64)> = Vec::new();
        let (mut lx, mut ly) = (20.0, 42.0);
        for p in &self.panels {
            for ser in &p.series {
                if legend.iter().any(|e| e.0 == ser.name) {
                    continue;
                }
                let w = 40.0 + 6.5 * ser.name.chars().count() as f64;
                if lx + w > width - 10.0 && lx > 20.0 {
                    lx = 20.0;
                    ly += 18.0;
                }
                legend.push((&ser.name, &ser.color, ser.dashed, lx, ly));
                lx += w;
            }
        }
        let top = TOP + (ly - 42.0);
        let height = top + PH * rows as f64;
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">"#
        );
        let _ = writeln!(
            s,
            r#"<rect width="100%" height="100%" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            width / 2.0,
            esc(&self.title)
        );
        for (name, color, dashed, x, y) in legend {
            let dash = if dashed {
                r#" stroke-dasharray="5,3""#
            } else {
                ""
            };
            let _ = writeln!(
                s,
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{color}" stroke-width="2.5"{dash}/><text x="{}" y="{}">{}</text>"#,
                x + 24.0,
                x + 28.0,
                y + 4.0,
                esc(name)
            );
        }
        for (k, p) in self.panels.iter().enumerate() {
            let ox = PW * (k % cols) as f64;
            let oy = top + PH * (k / cols) as f64;
            self.panel(&mut s, p, ox, oy);
        }
        s.push_str("</svg>\n");
        s
    }

    fn panel(&self, s: &mut String, p: &Panel, ox: f64, oy: f64) {
        let pts: Vec<(f64, f64)> = p
            .series
            .iter()
            .flat_map(|x| x.points.iter().copied())
            .filter(|&(x, y)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite())
            .collect();
        let (x0, x1, y0, y1) = (ox + ML, ox + PW - MR, oy + MT, oy + PH - MB);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle" font-size="13">{}</text>"#,
            (x0 + x1) / 2.0,
            oy + 18.0,
            esc(&p.title)
        );
        let _ = writeln!(
            s,
            r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
            x1 - x0,
            y1 - y0
        );
        if pts.is_empty() {
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">no data</text>"#,
                (x0 + x1) / 2.0,
                (y0 + y1) / 2.0
            );
            return;
        }
        let lx = |v: f64| v.log2();
        let ly = |v: f64| v.log10();
        let (mut ax, mut bx) = (f64::MAX, f64::MIN);
        let (mut ay, mut by) = (f64::MAX, f64::MIN);
        for &(x, y) in &pts {
            ax = ax.min(lx(x));
            bx = bx.max(lx(x));
            ay = ay.min(ly(y));
            by = by.max(ly(y));
        }
        if bx - ax < 1.0 {
            ax -= 0.5;
            bx += 0.5;
        }
        ay = ay.floor();
        by = by.ceil().max(ay + 1.0);
        let px = |v: f64| x0 + (lx(v) - ax) / (bx - ax) * (x1 - x0);
        let py = |v: f64| y1 - (ly(v) - ay) / (by - ay) * (y1 - y0);
        // Y ticks and grid at decades (and 2, 5 when there are few decades).
        let decades = (by - ay) as i32;
        let mut d = ay as i32;
        while d <= by as i32 {
            for m in [1.0, 2.0, 5.0] {
                if m > 1.0 && decades > 3 {
                    continue;
                }
                let v = m * 10f64.powi(d);
                if ly(v) > by + 1e-9 {
                    continue;
                }
                let y = py(v);
                let _ = writeln!(
                    s,
                    r##"<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
                    x0 - 4.0,
                    y + 4.0,
                    y_label(v)
                );
            }
            d += 1;
        }
        // X ticks at powers of two, thinned to at most ~8 labels.
        let (kx0, kx1) = (ax.ceil() as i32, bx.floor() as i32);
        let step = ((kx1 - kx0) / 8 + 1).max(1);
        let mut k = kx0;
        while k <= kx1 {
            let v = 2f64.powi(k);
            let x = px(v);
            let _ = writeln!(
                s,
                r##"<line x1="{x}" y1="{y0}" x2="{x}" y2="{y1}" stroke="#eee"/><text x="{x}" y="{}" text-anchor="middle">{}</text>"##,
                y1 + 14.0,
                (self.x_tick)(v)
            );
            k += step;
        }
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text><text transform="translate({},{}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (x0 + x1) / 2.0,
            y1 + 30.0,
            esc(&self.x_label),
            ox + 14.0,
            (y0 + y1) / 2.0,
            esc(&self.y_label)
        );
        for ser in &p.series {
            let mut pts: Vec<(f64, f64)> = ser
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite())
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if pts.is_empty() {
                continue;
            }
            let dash = if ser.dashed {
                r#" stroke-dasharray="5,3""#
            } else {
                ""
            };
            let coords: Vec<String> = pts
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline fill="none" stroke="{}" stroke-width="2"{dash} points="{}"><title>{}</title></polyline>"#,
                ser.color,
                coords.join(" "),
                esc(&ser.name)
            );
            for &(x, y) in &pts {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="{}"><title>{}: {} → {:.2}</title></circle>"#,
                    px(x),
                    py(y),
                    ser.color,
                    esc(&ser.name),
                    (self.x_tick)(x),
                    y
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_well_formed_document() {
        let f = Figure {
            title: "allreduce <test>".into(),
            x_label: "size".into(),
            y_label: "µs".into(),
            columns: 2,
            x_tick: size_label,
            panels: vec![
                Panel {
                    title: "np = 4".into(),
                    series: vec![Series {
                        name: "ours".into(),
                        color: "#d62728".into(),
                        dashed: false,
                        points: vec![(8.0, 50.0), (65536.0, 200.0), (1048576.0, 1000.0)],
                    }],
                },
                Panel {
                    title: "np = 8".into(),
                    series: vec![],
                },
            ],
        };
        let s = f.render();
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("allreduce &lt;test&gt;"));
        assert!(s.contains("<polyline"));
        assert!(s.contains("no data"));
        assert_eq!(size_label(65536.0), "64K");
        assert_eq!(size_label(1048576.0), "1M");
    }
}
