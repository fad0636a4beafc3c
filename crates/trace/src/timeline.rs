//! `hctrace timeline`: the space-time diagram of a merged trace as SVG. One horizontal
//! line per rank (rank 0 on top), time to the right; collective and utility calls as
//! bars above a rank's line, sends and receives as thinner bars on it, blocked waits as a
//! grey band below it; every message one polyline (`class="msg"`) from its send through
//! each forwarding hop (a dot) to its receive, ending in an arrow.

use std::fmt::Write;

use crate::model::Trace;

/// Drawing options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this time window, µs from the trace's first event.
    pub window: Option<(f64, f64)>,
    /// Picture width in pixels (0: 1200).
    pub width: u32,
}

/// Parse a time like `250`, `250us`, `1.5ms`, `2s`, `800ns` into µs (plain numbers are µs).
pub fn parse_time(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let (num, scale) = if let Some(n) = s.strip_suffix("ns") {
        (n, 1e-3)
    } else if let Some(n) = s.strip_suffix("us").or_else(|| s.strip_suffix("µs")) {
        (n, 1.0)
    } else if let Some(n) = s.strip_suffix("ms") {
        (n, 1e3)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1e6)
    } else {
        (s, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a time (e.g. 250, 250us, 1.5ms, 2s)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!("{s:?} is not a time of zero or more"));
    }
    Ok(v * scale)
}

/// Parse `START:END` (either may be empty: the trace's start or end).
pub fn parse_window(s: &str) -> Result<(Option<f64>, Option<f64>), String> {
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| format!("window {s:?} is not START:END (e.g. 0:2ms)"))?;
    let a = (!a.trim().is_empty()).then(|| parse_time(a)).transpose()?;
    let b = (!b.trim().is_empty()).then(|| parse_time(b)).transpose()?;
    if let (Some(a), Some(b)) = (a, b) {
        if b <= a {
            return Err(format!("window {s:?} ends before it starts"));
        }
    }
    Ok((a, b))
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn colour(name: &str) -> String {
    let h = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    format!("hsl({}, 55%, 60%)", h % 360)
}

fn human_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.3} ms", us / 1e3)
    } else {
        format!("{us:.1} µs")
    }
}

/// The SVG document. Errors when the window holds nothing.
pub fn svg(t: &Trace, opt: &Options) -> Result<String, String> {
    let (lo, hi) = t.span();
    let (w0, w1) = opt.window.unwrap_or((lo, hi));
    if w1 <= w0 {
        return Err(format!(
            "nothing to draw in the window {}..{} (the trace spans {}..{})",
            human_us(w0),
            human_us(w1),
            human_us(lo),
            human_us(hi)
        ));
    }
    let ranks: Vec<(u32, String)> = t.ranks.iter().map(|(k, v)| (*k, v.clone())).collect();
    let n = ranks.len().max(1);
    let width = if opt.width == 0 {
        1200.0
    } else {
        opt.width as f64
    };
    let (left, right, top) = (80.0, 45.0, 30.0);
    let row = (640.0 / n as f64).clamp(28.0, 60.0);
    let plot_w = width - left - right;
    let height = top + row * n as f64 + 50.0;
    let x = |us: f64| left + (us - w0) / (w1 - w0) * plot_w;
    let row_of = |pid: u32| ranks.iter().position(|(p, _)| *p == pid);
    let y = |i: usize| top + row * (i as f64 + 0.5);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">
<title>hypercube space-time diagram</title>
<defs>
<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker>
<clipPath id="plot"><rect x="{left}" y="0" width="{plot_w}" height="{height}"/></clipPath>
</defs>
<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>"##
    );
    // Rank lines and labels.
    for (i, (_, name)) in ranks.iter().enumerate() {
        let yy = y(i);
        let _ = writeln!(
            s,
            r##"<line class="rank" x1="{left}" y1="{yy}" x2="{}" y2="{yy}" stroke="#999" stroke-width="1"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            left + plot_w,
            left - 8.0,
            yy + 4.0,
            esc(name)
        );
    }
    // Time axis.
    let axis_y = top + row * n as f64 + 10.0;
    let _ = writeln!(
        s,
        r##"<line x1="{left}" y1="{axis_y}" x2="{}" y2="{axis_y}" stroke="#333"/>"##,
        left + plot_w
    );
    for k in 0..=8 {
        let tt = w0 + (w1 - w0) * k as f64 / 8.0;
        let xx = x(tt);
        let _ = writeln!(
            s,
            r##"<line x1="{xx}" y1="{axis_y}" x2="{xx}" y2="{}" stroke="#333"/><text x="{xx}" y="{}" text-anchor="middle">{}</text>"##,
            axis_y + 5.0,
            axis_y + 18.0,
            human_us(tt)
        );
    }
    let _ = writeln!(s, r#"<g clip-path="url(#plot)">"#);
    // Slices.
    for sl in &t.slices {
        if sl.end() < w0 || sl.ts > w1 {
            continue;
        }
        let Some(i) = row_of(sl.pid) else { continue };
        let yy = y(i);
        let (x0, x1) = (x(sl.ts), x(sl.end()));
        let w = (x1 - x0).max(1.0);
        let (cls, yb, hb, fill) = match sl.cat.as_str() {
            "call" => ("call", yy - row * 0.38, row * 0.22, colour(&sl.name)),
            "send" | "recv" => ("p2p", yy - row * 0.12, row * 0.12, "#6a8fd0".to_string()),
            "wait" => ("wait", yy + 2.0, row * 0.15, "#ccc".to_string()),
            _ => continue,
        };
        let what = sl.args.get("what").and_then(|w| w.as_str()).unwrap_or("");
        let _ = writeln!(
            s,
            r#"<rect class="{cls}" x="{x0:.2}" y="{yb:.2}" width="{w:.2}" height="{hb:.2}" fill="{fill}" opacity="0.85"><title>{} {} ({}) {}</title></rect>"#,
            esc(t.ranks.get(&sl.pid).map(String::as_str).unwrap_or("")),
            esc(&sl.name),
            human_us(sl.dur),
            esc(what)
        );
        // A call's name inside its bar when there is room.
        let label = sl
            .args
            .get("op")
            .and_then(|o| o.as_str())
            .unwrap_or(&sl.name);
        if cls == "call" && w >= 7.0 * label.chars().count() as f64 + 6.0 {
            let _ = writeln!(
                s,
                r#"<text x="{:.2}" y="{:.2}" font-size="10">{}</text>"#,
                x0.max(left) + 3.0,
                yb + hb - 3.0,
                esc(label)
            );
        }
    }
    // Messages.
    let mut drawn = 0;
    for (m, msg) in t.messages() {
        let mut pts: Vec<(f64, usize)> = Vec::new();
        if let Some((r, ts)) = msg.send {
            if let Some(i) = row_of(r) {
                pts.push((ts, i));
            }
        }
        for (r, ts) in &msg.hops {
            if let Some(i) = row_of(*r) {
                pts.push((*ts, i));
            }
        }
        if let Some((r, ts)) = msg.recv {
            if let Some(i) = row_of(r) {
                pts.push((ts, i));
            }
        }
        if pts.len() < 2 {
            continue;
        }
        let first = pts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
        let last = pts.iter().map(|p| p.0).fold(0.0, f64::max);
        if last < w0 || first > w1 {
            continue;
        }
        let coords: Vec<String> = pts
            .iter()
            .map(|(ts, i)| format!("{:.2},{:.2}", x(*ts), y(*i)))
            .collect();
        let _ = writeln!(
            s,
            r##"<polyline class="msg" points="{}" fill="none" stroke="#333" stroke-width="1" marker-end="url(#arrow)"><title>message {m}: {} bytes, {} hop(s)</title></polyline>"##,
            coords.join(" "),
            msg.bytes,
            msg.hops.len()
        );
        for (ts, i) in &pts[1..pts.len() - 1] {
            let _ = writeln!(
                s,
                r##"<circle class="hop" cx="{:.2}" cy="{:.2}" r="2.5" fill="#c33"/>"##,
                x(*ts),
                y(*i)
            );
        }
        drawn += 1;
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r##"<text x="{left}" y="18">{} ranks, {drawn} messages, {} to {} (calls: coloured bars; sends/receives: blue; blocked: grey; hops: red dots)</text>"##,
        ranks.len(),
        human_us(w0),
        human_us(w1)
    );
    s.push_str("</svg>\n");
    Ok(s)
}
