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
//!
//! Each arrow also says what its message carried, as far as the trace knows (it does not
//! record the data): for combining operations (reduce, all-reduce, scan, reduce-scatter,
//! gather, all-gather, barrier, GOP, GCAT) the set of nodes whose contributions it holds —
//! within the call every node starts knowing itself, a message carries what its sender
//! knew when it sent it, a receive adds that to what the receiver knows — written `[0+1]`,
//! `[0..3]` for a run, `[0+1+4+5]`; for broadcasts (bcast, GSENDW / GRECVW) the root,
//! `[0]`; for personalized operations (scatter, all-to-all, shift) the number of blocks
//! when the call's block size divides the message, else its bytes.

use std::collections::{BTreeMap, BTreeSet};
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
    /// What it carried (`[0+1]`, `[0]`, `2 blocks`, `24 B`; see the module's doc).
    pub data: String,
}

/// What the trace can say about the data of an operation's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Contributions are combined or collected: the origin sets.
    Combining,
    /// One root's data: the root.
    Broadcast,
    /// Blocks for particular destinations: how many.
    Personalized,
}

fn kind(op: &str) -> Kind {
    match op.to_ascii_lowercase().as_str() {
        "bcast" | "gsendw" | "grecvw" => Kind::Broadcast,
        "scatter" | "alltoall" | "shift" => Kind::Personalized,
        _ => Kind::Combining,
    }
}

/// A set of nodes as a label: runs of three or more as `a..b`, the rest joined by `+`.
pub fn set_label(set: &BTreeSet<u32>) -> String {
    let v: Vec<u32> = set.iter().copied().collect();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}..{}", v[i], v[j]));
        } else {
            parts.extend(v[i..=j].iter().map(u32::to_string));
        }
        i = j + 1;
    }
    format!("[{}]", parts.join("+"))
}

/// A personalized message's label: blocks of `block` bytes (plain, or each with an 8-byte
/// length in front, as framed messages carry them), else bytes.
fn blocks_label(bytes: u64, block: u64) -> String {
    let n = if block == 0 {
        None
    } else if bytes % block == 0 {
        Some(bytes / block)
    } else if bytes % (block + 8) == 0 {
        Some(bytes / (block + 8))
    } else {
        None
    };
    match n {
        Some(1) => "1 block".into(),
        Some(n) => format!("{n} blocks"),
        None => format!("{bytes} B"),
    }
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

/// The window of call `k` (from its earliest start to its latest end over the ranks) and
/// its name, or `None` past the last call.
pub fn call_window(t: &Trace, k: usize) -> Option<((f64, f64), String)> {
    let all = calls(t);
    let of_k: Vec<&Slice> = all.values().filter_map(|v| v.get(k).copied()).collect();
    let first = of_k.first()?;
    let lo = of_k.iter().map(|s| s.ts).fold(f64::INFINITY, f64::min);
    let hi = of_k.iter().map(|s| s.end()).fold(0.0, f64::max);
    Some(((lo, hi), first.name.clone()))
}

/// How many calls the trace has (the most any rank made).
pub fn count(t: &Trace) -> usize {
    calls(t).values().map(Vec::len).max().unwrap_or(0)
}

/// Call `k` of a trace: its name, subcube dimension and messages.
#[derive(Debug, Clone)]
pub struct CallSteps {
    /// The names the ranks gave it, joined (`GSENDW / GRECVW`).
    pub name: String,
    /// Subcube dimension.
    pub dim: u32,
    /// Its messages in the order they were sent, with steps and data labels.
    pub msgs: Vec<StepMsg>,
    /// For combining operations: what each node knew at the end of the call (only the
    /// nodes that sent or received in it).
    pub known: BTreeMap<u32, BTreeSet<u32>>,
}

/// Call `k` with its messages, their steps and data; an error past the last call.
pub fn call_steps(t: &Trace, k: usize) -> Result<CallSteps, String> {
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
    let op = span
        .values()
        .next()
        .and_then(|s| s.args.get("op").and_then(|o| o.as_str()))
        .unwrap_or("")
        .to_string();
    let kind = kind(&op);
    // The block size the callers gave (personalized operations), the root (broadcasts).
    let block = span.values().map(|s| s.arg("bytes")).max().unwrap_or(0);
    let root = span
        .values()
        .find_map(|s| s.args.get("root").and_then(|r| r.as_u64()))
        .map(|r| r as u32);
    let mut out: Vec<StepMsg> = Vec::new();
    // The origin set each message carried.
    let mut carried: Vec<BTreeSet<u32>> = Vec::new();
    for i in 0..list.len() {
        let (ts, from, to, bytes, _) = list[i];
        let got: Vec<usize> = (0..i)
            .filter(|&j| list[j].2 == from && list[j].4 <= ts)
            .collect();
        let before = got.iter().map(|&j| out[j].step).max().unwrap_or(0);
        let mut set: BTreeSet<u32> = [from].into();
        for &j in &got {
            set.extend(carried[j].iter().copied());
        }
        carried.push(set);
        out.push(StepMsg {
            from,
            to,
            bytes,
            step: before + 1,
            data: String::new(),
        });
    }
    // A broadcast's root: the call's, else the one sender of step 1.
    let root = root.or_else(|| {
        let first: BTreeSet<u32> = out.iter().filter(|m| m.step == 1).map(|m| m.from).collect();
        (first.len() == 1).then(|| *first.iter().next().unwrap_or(&0))
    });
    for (m, set) in out.iter_mut().zip(&carried) {
        m.data = match kind {
            Kind::Combining => set_label(set),
            Kind::Broadcast => root.map_or_else(|| set_label(set), |r| format!("[{r}]")),
            Kind::Personalized => blocks_label(m.bytes, block),
        };
    }
    let mut known: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    if kind == Kind::Combining {
        for (m, set) in out.iter().zip(&carried) {
            known.entry(m.from).or_insert_with(|| [m.from].into());
            known
                .entry(m.to)
                .or_insert_with(|| [m.to].into())
                .extend(set.iter().copied());
        }
    }
    Ok(CallSteps {
        name,
        dim,
        msgs: out,
        known,
    })
}

/// The name of call `k` and its messages with their steps; an error past the last call.
pub fn call_messages(t: &Trace, k: usize) -> Result<(String, u32, Vec<StepMsg>), String> {
    let c = call_steps(t, k)?;
    Ok((c.name, c.dim, c.msgs))
}

/// The last panel's note for a combining call: what the nodes hold at the end, when that
/// is one set for all (`every node has [0..7]`) or the whole set at one node (`node 0
/// has [0..7]`).
fn end_note(known: &BTreeMap<u32, BTreeSet<u32>>) -> Option<String> {
    let all: BTreeSet<u32> = known.keys().copied().collect();
    if all.len() < 2 {
        return None;
    }
    if known.values().all(|s| *s == all) {
        return Some(format!("every node has {}", set_label(&all)));
    }
    let full: Vec<u32> = known
        .iter()
        .filter(|(_, s)| **s == all)
        .map(|(n, _)| *n)
        .collect();
    match full.as_slice() {
        [one] => Some(format!("node {one} has {}", set_label(&all))),
        _ => None,
    }
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
    let CallSteps {
        name,
        dim,
        msgs,
        known,
    } = call_steps(t, k)?;
    let note = end_note(&known);
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
            // The label beside the bow, on its outer side: opposite arrows' labels apart.
            let anchor = match -uy {
                n if n > 0.5 => "start",
                n if n < -0.5 => "end",
                _ => "middle",
            };
            let _ = writeln!(
                s,
                r##"<path class="msg" d="M{sx:.1},{sy:.1} Q{mx:.1},{my:.1} {ex:.1},{ey:.1}" fill="none" stroke="#c33" stroke-width="1.5" marker-end="url(#arrow)"><title>step {step}: {} → {}, {} bytes, {}</title></path><text class="label" x="{:.1}" y="{:.1}" text-anchor="{anchor}" fill="#c33" font-size="9">{step} {}</text>"##,
                m.from,
                m.to,
                m.bytes,
                esc(&m.data),
                mx - uy * 4.0,
                my + ux * 4.0 + 3.0 + ux * 3.0,
                esc(&m.data)
            );
        }
        if let (true, Some(n)) = (step == steps, &note) {
            let _ = writeln!(
                s,
                r##"<text class="after" x="{}" y="{}" font-size="11">after step {step}: {}</text>"##,
                ox - 20.0,
                oy + ph - 28.0,
                esc(n)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_read_as_runs_and_sums() {
        let l = |v: &[u32]| set_label(&v.iter().copied().collect());
        assert_eq!(l(&[0]), "[0]");
        assert_eq!(l(&[0, 1]), "[0+1]");
        assert_eq!(l(&[0, 1, 2, 3]), "[0..3]");
        assert_eq!(l(&[0, 1, 4, 5]), "[0+1+4+5]");
        assert_eq!(l(&[0, 1, 2, 3, 8, 9, 10, 11]), "[0..3+8..11]");
        assert_eq!(l(&[2, 4, 5, 6, 9]), "[2+4..6+9]");
    }

    #[test]
    fn blocks_from_bytes() {
        assert_eq!(blocks_label(32, 8), "4 blocks");
        assert_eq!(blocks_label(8, 8), "1 block");
        assert_eq!(blocks_label(48, 16), "3 blocks");
        assert_eq!(blocks_label(80, 12), "4 blocks"); // framed: 8-byte length each
        assert_eq!(blocks_label(30, 8), "30 B");
        assert_eq!(blocks_label(30, 0), "30 B");
    }
}
