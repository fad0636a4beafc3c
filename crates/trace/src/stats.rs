//! `hctrace stats`: a table per rank, like mpiP's summary.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::model::Trace;

/// One rank's totals.
#[derive(Debug, Default, Clone)]
pub struct RankStats {
    /// Messages and payload bytes this rank sent.
    pub sent: (u64, u64),
    /// Messages and payload bytes this rank received.
    pub received: (u64, u64),
    /// Frames and payload bytes this rank forwarded for others.
    pub forwarded: (u64, u64),
    /// Time inside calls (collectives, utilities, sends, receives; overlaps counted once), µs.
    pub in_calls_us: f64,
    /// Time blocked in waits, µs.
    pub blocked_us: f64,
    /// The longest wait, µs, and what it waited for.
    pub largest_wait: (f64, String),
}

/// The totals of every rank.
pub fn stats(t: &Trace) -> BTreeMap<u32, RankStats> {
    let mut out: BTreeMap<u32, RankStats> =
        t.ranks.keys().map(|r| (*r, Default::default())).collect();
    let mut spans: BTreeMap<u32, Vec<(f64, f64)>> = BTreeMap::new();
    for s in &t.slices {
        let r = out.entry(s.pid).or_default();
        match s.cat.as_str() {
            "send" => {
                r.sent.0 += 1;
                r.sent.1 += s.arg("bytes");
            }
            "recv" => {
                r.received.0 += 1;
                r.received.1 += s.arg("bytes");
            }
            "forward" => {
                r.forwarded.0 += 1;
                r.forwarded.1 += s.arg("bytes");
            }
            "wait" => {
                r.blocked_us += s.dur;
                if s.dur > r.largest_wait.0 {
                    let what = s.args.get("what").and_then(|w| w.as_str()).unwrap_or("");
                    r.largest_wait = (s.dur, what.to_string());
                }
            }
            _ => {}
        }
        if s.tid == 1 {
            spans.entry(s.pid).or_default().push((s.ts, s.end()));
        }
    }
    for (pid, mut v) in spans {
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (mut total, mut cur): (f64, Option<(f64, f64)>) = (0.0, None);
        for (a, b) in v {
            cur = match cur {
                Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
                Some((ca, cb)) => {
                    total += cb - ca;
                    Some((a, b))
                }
                None => Some((a, b)),
            };
        }
        if let Some((ca, cb)) = cur {
            total += cb - ca;
        }
        out.entry(pid).or_default().in_calls_us = total;
    }
    out
}

fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn human_us(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.1} µs")
    }
}

/// The table `hctrace stats` prints.
pub fn table(t: &Trace) -> String {
    let st = stats(t);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<8} {:>6} {:>10} {:>6} {:>10} {:>7} {:>10} {:>10} {:>10} {:>10}  waited for",
        "rank", "sent", "bytes", "recv", "bytes", "fwd", "bytes", "in calls", "blocked", "max wait"
    );
    for (pid, r) in &st {
        let name = t
            .ranks
            .get(pid)
            .cloned()
            .unwrap_or_else(|| format!("rank {pid}"));
        let name = name.strip_prefix("rank ").unwrap_or(&name).to_string();
        let _ = writeln!(
            s,
            "{:<8} {:>6} {:>10} {:>6} {:>10} {:>7} {:>10} {:>10} {:>10} {:>10}  {}",
            name,
            r.sent.0,
            human_bytes(r.sent.1),
            r.received.0,
            human_bytes(r.received.1),
            r.forwarded.0,
            human_bytes(r.forwarded.1),
            human_us(r.in_calls_us),
            human_us(r.blocked_us),
            human_us(r.largest_wait.0),
            r.largest_wait.1
        );
    }
    let dropped = t.dropped();
    if !dropped.is_empty() {
        let total: u64 = dropped.values().sum();
        let _ = writeln!(
            s,
            "\ndropped: {total} records on {} rank(s) ({}) because their trace buffer was full: \
             the counts above miss them; raise HYPERCUBE_TRACE_BUFFER",
            dropped.len(),
            dropped
                .iter()
                .map(|(r, n)| format!("rank {r}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    s
}
