//! `hctrace links`: the cube's links over time as SVG — one row per directed link
//! (`a→b`, grouped by dimension), time to the right, each cell coloured by the bytes in
//! flight on that link then. A hot link (e-cube routes of a transpose load one link with
//! several messages) shows as a dark row while others stay pale; a balanced plan
//! (`alltoallv` with planned routes, `docs/routing.md`) spreads the same bytes over more
//! rows for a shorter time.
//!
//! A message's path is read from the trace: its sender, every node that forwarded it, its
//! receiver. Its bytes count on the link between two consecutive nodes of the path from
//! the time the first handed it on (its send, or its forward) to the time the second did
//! (its forward, or the end of its receive): with cut-through forwarding that is the
//! time the message occupied the link, queueing included. Messages sent by rendezvous
//! are placed by their request's path, which their data follows.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::model::Trace;

/// Drawing options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this time window, µs from the trace's first event.
    pub window: Option<(f64, f64)>,
    /// Picture width in pixels (0: 1200).
    pub width: u32,
    /// The bytes in flight drawn darkest (0: the most any link had), so that two pictures
    /// can share a scale.
    pub scale: u64,
}

/// One link's occupancy: `(start µs, end µs, bytes)` of every message crossing it.
type Uses = Vec<(f64, f64, u64)>;

/// Every directed link that carried a message, `(from, to)` → its uses.
pub fn link_uses(t: &Trace) -> BTreeMap<(u32, u32), Uses> {
    let mut links: BTreeMap<(u32, u32), Uses> = BTreeMap::new();
    for m in t.messages().values() {
        let (Some(send), Some(recv)) = (m.send, m.recv) else {
            continue;
        };
        let mut path = vec![send];
        path.extend(m.hops.iter().copied());
        path.push(recv);
        for w in path.windows(2) {
            let ((a, t0), (b, t1)) = (w[0], w[1]);
            if a != b && (a ^ b).is_power_of_two() {
                links
                    .entry((a, b))
                    .or_default()
                    .push((t0, t1.max(t0), m.bytes));
            }
        }
    }
    links
}

/// The picture, or why there is none.
pub fn svg(t: &Trace, o: &Options) -> Result<String, String> {
    let links = link_uses(t);
    if links.is_empty() {
        return Err(
            "no message crossed a link of the cube (a job of one node, or no \
                    message traced)"
                .into(),
        );
    }
    let (lo, hi) = o.window.unwrap_or_else(|| t.span());
    let span = (hi - lo).max(1.0);
    let width = if o.width == 0 { 1200 } else { o.width } as f64;
    let (left, top, row_h, right) = (110.0, 40.0, 10.0, 20.0);
    let plot_w = width - left - right;
    let bins = (plot_w / 2.0).max(10.0) as usize;
    let bin_us = span / bins as f64;
    // Rows by dimension, then source.
    let mut rows: Vec<((u32, u32), Vec<f64>)> = links
        .iter()
        .map(|(&(a, b), uses)| {
            let mut v = vec![0.0; bins];
            for &(t0, t1, bytes) in uses {
                let (s, e) = (t0.max(lo), t1.min(hi));
                if e <= s && !(t0 == t1 && t0 >= lo && t0 <= hi) {
                    continue;
                }
                let i0 = (((s - lo) / bin_us) as usize).min(bins - 1);
                let i1 = (((e - lo) / bin_us).ceil() as usize).clamp(i0 + 1, bins);
                for x in &mut v[i0..i1] {
                    *x += bytes as f64;
                }
            }
            ((a, b), v)
        })
        .collect();
    rows.sort_by_key(|&((a, b), _)| ((a ^ b).trailing_zeros(), a));
    let max = rows
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0, f64::max)
        .max(1.0);
    let max = if o.scale > 0 { o.scale as f64 } else { max };
    let height = top + row_h * rows.len() as f64 + 50.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"9\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>"
    );
    let _ = writeln!(
        s,
        "<text x=\"{left}\" y=\"16\" font-size=\"12\">bytes in flight per link (darker = more; \
         darkest = {}), {:.1} ms</text>",
        bytes_text(max),
        span / 1e3
    );
    let mut last_dim = u32::MAX;
    for (i, ((a, b), v)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let dim = (a ^ b).trailing_zeros();
        if dim != last_dim {
            last_dim = dim;
            let _ = writeln!(
                s,
                "<line x1=\"0\" x2=\"{width}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#999\" \
                 stroke-width=\"0.5\"/>"
            );
        }
        let _ = writeln!(
            s,
            "<text x=\"4\" y=\"{:.1}\">dim {dim}: {a}→{b}</text>",
            y + row_h - 2.0
        );
        // Runs of bins of one shade (in 32 steps) as one rectangle each.
        let shade_of = |x: f64| ((x / max).clamp(0.0, 1.0) * 32.0).ceil() as u32;
        let mut k = 0;
        while k < bins {
            let q = shade_of(v[k]);
            let start = k;
            while k < bins && shade_of(v[k]) == q {
                k += 1;
            }
            if q == 0 {
                continue;
            }
            let shade = f64::from(q) / 32.0;
            let c = |full: f64| (255.0 - (255.0 - full) * shade) as u8;
            let _ = writeln!(
                s,
                "<rect class=\"busy\" x=\"{:.1}\" y=\"{y:.1}\" width=\"{:.1}\" \
                 height=\"{:.1}\" fill=\"rgb({},{},{})\"/>",
                left + plot_w * start as f64 / bins as f64,
                plot_w * (k - start) as f64 / bins as f64,
                row_h - 1.0,
                c(8.0),
                c(48.0),
                c(107.0)
            );
        }
    }
    let yb = top + row_h * rows.len() as f64 + 14.0;
    for k in 0..=4 {
        let x = left + plot_w * k as f64 / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{x:.1}\" y=\"{yb:.1}\" text-anchor=\"middle\">{:.1} ms</text>",
            (lo + span * k as f64 / 4.0) / 1e3
        );
    }
    s.push_str("</svg>\n");
    Ok(s)
}

fn bytes_text(b: f64) -> String {
    if b >= (1 << 20) as f64 {
        format!("{:.1} MiB", b / (1 << 20) as f64)
    } else if b >= 1024.0 {
        format!("{:.0} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A message 0 → 3 through node 1 and one 2 → 3: links 0→1, 1→3 and 2→3 are drawn.
    #[test]
    fn paths_become_link_rows() {
        let x = |pid: u32, cat: &str, ts: f64, dur: f64, args: serde_json::Value| {
            json!({"ph": "X", "pid": pid, "tid": 1, "cat": cat, "name": cat, "ts": ts,
                   "dur": dur, "args": args})
        };
        let doc = json!({
            "otherData": {"hypercube_trace": 1, "dim": 2},
            "traceEvents": [
                x(0, "send", 0.0, 1.0, json!({"msg": 1, "bytes": 1000})),
                x(1, "forward", 5.0, 1.0, json!({"msg": 1, "kind": "eager"})),
                x(3, "recv", 8.0, 2.0, json!({"msg": 1, "bytes": 1000})),
                x(2, "send", 0.0, 1.0, json!({"msg": 2, "bytes": 500})),
                x(3, "recv", 3.0, 1.0, json!({"msg": 2, "bytes": 500})),
            ]
        });
        let t = Trace::from_doc(&doc).unwrap();
        let uses = link_uses(&t);
        assert_eq!(
            uses.keys().copied().collect::<Vec<_>>(),
            [(0, 1), (1, 3), (2, 3)]
        );
        assert_eq!(uses[&(0, 1)], [(0.0, 5.0, 1000)]);
        assert_eq!(uses[&(1, 3)], [(5.0, 10.0, 1000)]);
        let pic = svg(&t, &Options::default()).unwrap();
        assert_eq!(pic.matches("→").count(), 3);
        assert!(pic.contains("class=\"busy\""));
    }
}
