//! A tiny SVG line-chart writer (no dependencies).

use std::fmt::Write;

/// One line of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// Points `(x, y)`, drawn in order.
    pub points: Vec<(f64, f64)>,
    /// Stroke colour (any SVG colour).
    pub color: String,
    /// Dashed line.
    pub dashed: bool,
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
    pub y_label: String,
    /// Lines.
    pub series: Vec<Series>,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn nice_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= n as f64)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut v = Vec::new();
    while t <= hi + 1e-9 {
        v.push(t);
        t += step;
    }
    v
}

impl Chart {
    /// Renders the chart as a standalone SVG document.
    pub fn to_svg(&self) -> String {
        let (w, h) = (720.0, 440.0);
        let (l, r, t, b) = (70.0, 190.0, 40.0, 55.0);
        let pts = self.series.iter().flat_map(|s| s.points.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::INFINITY,
            f64::NEG_INFINITY,
        );
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        if !x0.is_finite() {
            (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
        }
        let pad = ((y1 - y0) * 0.08).max(1.0);
        let (y0, y1) = (y0 - pad, y1 + pad);
        let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
        let sx = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - r);
        let sy = |y: f64| h - b - (y - y0) / (y1 - y0) * (h - t - b);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
            (l + w - r) / 2.0,
            esc(&self.title)
        );
        for tx in nice_ticks(x0, x1, 8) {
            let x = sx(tx);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{t}" x2="{x:.1}" y2="{}" stroke="#e0e0e0"/>"##,
                h - b
            );
            let _ = writeln!(
                s,
                r#"<text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
                h - b + 16.0,
                fmt_num(tx)
            );
        }
        for ty in nice_ticks(y0, y1, 8) {
            let y = sy(ty);
            let _ = writeln!(
                s,
                r##"<line x1="{l}" y1="{y:.1}" x2="{}" y2="{y:.1}" stroke="#e0e0e0"/>"##,
                w - r
            );
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
                l - 6.0,
                y + 4.0,
                fmt_num(ty)
            );
        }
        let _ = writeln!(
            s,
            r#"<rect x="{l}" y="{t}" width="{}" height="{}" fill="none" stroke="black"/>"#,
            w - l - r,
            h - t - b
        );
        let _ = writeln!(
            s,
            r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
            (l + w - r) / 2.0,
            h - 12.0,
            esc(&self.x_label)
        );
        let _ = writeln!(
            s,
            r#"<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>"#,
            (t + h - b) / 2.0,
            (t + h - b) / 2.0,
            esc(&self.y_label)
        );
        for (i, se) in self.series.iter().enumerate() {
            let path: Vec<String> = se
                .points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
                .collect();
            let dash = if se.dashed {
                r#" stroke-dasharray="6 4""#
            } else {
                ""
            };
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                path.join(" "),
                se.color
            );
            for &(x, y) in &se.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"#,
                    sx(x),
                    sy(y),
                    se.color
                );
            }
            let ly = t + 14.0 + 20.0 * i as f64;
            let lx = w - r + 12.0;
            let _ = writeln!(
                s,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{}" stroke-width="2"{dash}/>"#,
                lx + 24.0,
                se.color
            );
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}">{}</text>"#,
                lx + 30.0,
                ly + 4.0,
                esc(&se.label)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

fn fmt_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}").trim_end_matches('0').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_svg() {
        let c = Chart {
            title: "t <1>".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            series: vec![Series {
                label: "a".into(),
                points: vec![(0.0, 1.0), (1.0, 3.0)],
                color: "red".into(),
                dashed: true,
            }],
        };
        let s = c.to_svg();
        assert!(s.starts_with("<svg") && s.contains("polyline") && s.contains("t &lt;1&gt;"));
    }
}
