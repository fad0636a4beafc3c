//! `hctrace steps`: one utility or collective call drawn the way Grama et al. draw them
//! (ch. 4): the cube's nodes at their usual places (the 3-cube drawing; for d = 4 two of
//! them side by side), labels in binary, one panel per step, each message an arrow labelled
//! with its step number.
//!
//! A call is matched across ranks by its position: the K-th call (finalize not counted)
//! that each rank made. Its messages are those sent inside the call's interval on the
//! sender's rank. A message's step is one more than the largest step among the messages
//! its sender had received in this call before sending it (1 for a message sent before
//! anything arrived) — the causal depth, which is the book's numbering for the tree and
//! dimension-by-dimension algorithms.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::model::{Slice, Trace};

/// One message of a call.
#[derive(Debug, Clone)]
pub struct StepMsg {
    /// Sender and receiver ranks.
    pub from: u32,
    /// Receiver rank.
    pub to: u32,
    /// Payload bytes.
    pub bytes: u64,
    /// Step number, from 1.
    pub step: u32,
}

/// The calls of a trace: per rank, its call slices in order (finalize left out).
fn calls(t: &Trace) -> BTreeMap<u32, Vec<&Slice>> {
    let mut by_rank: BTreeMap<u32, Vec<&Slice>> = BTreeMap::new();
    for s in &t.slices {
        if s.cat == "call" && s.args.get("op").and_then(|o| o.as_str()) != Some("finalize") {
            by_rank.entry(s.pid).or_default().push(s);
        }
    }
    for v in by_rank.values_mut() {
        v.sort_by(|a, b| a.ts.total_cmp(&b.ts));
    }
    by_rank
}

/// How many calls the trace has (the most any rank made).
pub fn count(t: &Trace) -> usize {
    calls(t).values().map(Vec::len).max().unwrap_or(0)
}

/// The name of call `k` and its messages with their steps; an error past the last call.
pub fn call_messages(t: &Trace, k: usize) -> Result<(String, u32, Vec<StepMsg>), String> {
    let all = calls(t);
    let n = count(t);
    if k >= n {
        return Err(match n {
            0 => "the trace has no utility or collective calls".to_string(),
            1 => format!("--call {k}: there is 1 call (--call 0)"),
            n => format!("--call {k}: there are {n} calls (--call 0 to {})", n - 1),
        });
    }
    // Each rank's interval of call k.
    let span: BTreeMap<u32, &Slice> = all
        .iter()
        .filter_map(|(r, v)| v.get(k).map(|s| (*r, *s)))
        .collect();
    // The names the ranks gave it (GSENDW at the root, GRECVW elsewhere).
    let mut names: Vec<&str> = span.values().map(|s| s.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let name = names.join(" / ");
    let dim = span
        .values()
        .map(|s| s.arg("k") as u32)
        .max()
        .unwrap_or(t.dim);
    let inside = |pid: u32, ts: f64| span.get(&pid).is_some_and(|c| ts >= c.ts && ts <= c.end());
    // The call's messages: sends inside the sender's call; their receives.
    let msgs = t.messages();
    let mut list: Vec<(f64, u32, u32, u64, f64)> = Vec::new(); // send ts, from, to, bytes, recv end
    for m in msgs.values() {
        let (Some((from, ts)), Some((to, te))) = (m.send, m.recv) else {
            continue;
        };
        if inside(from, ts) {
            list.push((ts, from, to, m.bytes, te));
        }
    }
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<StepMsg> = Vec::new();
    for i in 0..list.len() {
        let (ts, from, to, bytes, _) = list[i];
        let before = out
            .iter()
            .zip(&list)
            .filter(|(_, l)| l.2 == from && l.4 <= ts)
            .map(|(m, _)| m.step)
            .max()
            .unwrap_or(0);
        out.push(StepMsg {
            from,
            to,
            bytes,
            step: before + 1,
        });
    }
    Ok((name, dim, out))
}

/// Where node `rel` of a cube of dimension `d` ≤ 4 goes in a panel (unit coordinates).
fn place(rel: u32) -> (f64, f64) {
    let (b0, b1, b2, b3) = (rel & 1, (rel >> 1) & 1, (rel >> 2) & 1, (rel >> 3) & 1);
    let x = b0 as f64 * 100.0 + b2 as f64 * 45.0 + b3 as f64 * 200.0;
    // The second 3-cube of a 4-cube sits to the right and a little lower, so that its
    // edges to the first do not run through other nodes.
    let y = 150.0 - b1 as f64 * 100.0 - b2 as f64 * 45.0 + b3 as f64 * 30.0;
    (x, y)
}

/// The SVG of call `k`: one panel per step. Errors past the last call, or for a call on
/// a subcube of more than 4 dimensions.
pub fn svg(t: &Trace, k: usize) -> Result<String, String> {
    let (name, dim, msgs) = call_messages(t, k)?;
    if dim > 4 {
        return Err(format!(
            "call {k} ({name}) runs on a {dim}-cube; steps draws cubes of up to 4 dimensions"
        ));
    }
    // The nodes the call ran on: the subcube of the first message's sender (or rank 0).
    let some = msgs.first().map_or(0, |m| m.from);
    let base = some & !((1u32 << dim) - 1);
    let steps = msgs.iter().map(|m| m.step).max().unwrap_or(0).max(1);
    let (pw, ph) = (
        if dim == 4 { 400.0 } else { 210.0 },
        if dim == 4 { 260.0 } else { 230.0 },
    );
    let cols = steps.min(4);
    let rows = steps.div_ceil(cols);
    let (width, height) = (cols as f64 * pw + 20.0, rows as f64 * ph + 50.0);
    let bits = dim.max(1) as usize;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">
<title>hypercube call {k}: {name}</title>
<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#c33"/></marker></defs>
<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>
<text x="10" y="20" font-size="13">call {k}: {} on a {dim}-cube (nodes {base}..{}), {} messages in {steps} step(s)</text>"##,
        esc(&name),
        base + (1 << dim) - 1,
        msgs.len()
    );
    for step in 1..=steps {
        let (c, r) = ((step - 1) % cols, (step - 1) / cols);
        let (ox, oy) = (10.0 + c as f64 * pw + 30.0, 40.0 + r as f64 * ph + 20.0);
        let _ = writeln!(
            s,
            r#"<g class="step"><text x="{}" y="{}" font-size="12">step {step}</text>"#,
            ox - 20.0,
            oy
        );
        let at = |rel: u32| {
            let (x, y) = place(rel);
            (ox + x, oy + 20.0 + y)
        };
        // Cube edges, then nodes with binary labels.
        for a in 0..(1u32 << dim) {
            for b in 0..dim {
                let n = a ^ (1 << b);
                if n > a {
                    let ((x1, y1), (x2, y2)) = (at(a), at(n));
                    let _ = writeln!(
                        s,
                        r##"<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#bbb"/>"##
                    );
                }
            }
        }
        for a in 0..(1u32 << dim) {
            let (x, y) = at(a);
            let _ = writeln!(
                s,
                r##"<circle cx="{x}" cy="{y}" r="5" fill="#333"/><text x="{}" y="{}" font-size="10">{:0bits$b}</text>"##,
                x + 6.0,
                y + 14.0,
                base + a
            );
        }
        for m in msgs.iter().filter(|m| m.step == step) {
            let ((x1, y1), (x2, y2)) = (
                at(m.from - base),
                at(m.to.wrapping_sub(base) & ((1 << dim) - 1)),
            );
            // Shorten to the node circles and bow slightly, so opposite arrows stay apart.
            let (dx, dy) = (x2 - x1, y2 - y1);
            let len = (dx * dx + dy * dy).sqrt().max(1.0);
            let (ux, uy) = (dx / len, dy / len);
            let (sx, sy, ex, ey) = (x1 + ux * 7.0, y1 + uy * 7.0, x2 - ux * 7.0, y2 - uy * 7.0);
            let (mx, my) = ((sx + ex) / 2.0 - uy * 8.0, (sy + ey) / 2.0 + ux * 8.0);
            let _ = writeln!(
                s,
                r##"<path class="msg" d="M{sx:.1},{sy:.1} Q{mx:.1},{my:.1} {ex:.1},{ey:.1}" fill="none" stroke="#c33" stroke-width="1.5" marker-end="url(#arrow)"><title>step {step}: {} → {}, {} bytes</title></path><text x="{:.1}" y="{:.1}" fill="#c33" font-size="10">{step}</text>"##,
                m.from,
                m.to,
                m.bytes,
                mx - uy * 4.0,
                my + ux * 4.0
            );
        }
        s.push_str("</g>\n");
    }
    s.push_str("</svg>\n");
    Ok(s)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
