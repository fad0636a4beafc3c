//! Frames counted by kind on every link, written and read: the transport's performance
//! counters (what MPI's tool interface calls performance variables, and Open MPI's
//! software counters). Always counted — an increment per frame — and printed by each rank
//! at finalize when `HYPERCUBE_LINK_STATS=1`, one line per link:
//!
//! ```text
//! link stats: node 3, link to node 1: out 1031 frames, 263.4 MB in 1190 writes
//!   (Eager 1024 263.2 MB, Credit 4, Ack 3); in 1029 frames, 263.4 MB in 2051 reads (…)
//! ```
//!
//! A link's counts go on over its connections: after a dead link comes back
//! (`relink.rs`), its new connection adds to them, and frames resent on it count again.
//!
//! A protocol that does more than it should shows here first: a credit leak of messages
//! landed in two pieces sent the typed all-to-all's steps by rendezvous (`Rts`, `Cts` and
//! `Data` frames where `Eager` ones were due) — found by counting frames by kind
//! (`docs/perf/analysis.md`).

use std::fmt::Write as _;

use crate::error::{Error, Result};
use crate::wire::frame::Kind;

/// The kinds' numbers are 1..=10 (`Kind`); slot 0 is unused.
const SLOTS: usize = 11;

/// Every kind, in the order the counts are printed.
const KINDS: [Kind; 10] = [
    Kind::Eager,
    Kind::Rts,
    Kind::Cts,
    Kind::Data,
    Kind::Credit,
    Kind::Fin,
    Kind::Ack,
    Kind::Link,
    Kind::Left,
    Kind::Close,
];

/// Frames and their bytes (header and body) by kind on one side of a link, and the system
/// calls that moved them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FrameCounts {
    frames: [u64; SLOTS],
    bytes: [u64; SLOTS],
    /// The `sendmsg(2)` calls that took bytes, or the `recv(2)` calls that returned (the
    /// one that saw the peer's close included).
    pub(crate) calls: u64,
}

impl FrameCounts {
    /// One frame of `kind`, `bytes` long with its header.
    pub(crate) fn frame(&mut self, kind: Kind, bytes: usize) {
        let i = kind as usize;
        self.frames[i] += 1;
        self.bytes[i] += bytes as u64;
    }

    /// The frames of `kind` counted.
    #[cfg(test)]
    pub(crate) fn of(&self, kind: Kind) -> u64 {
        self.frames[kind as usize]
    }

    /// All frames and their bytes.
    fn total(&self) -> (u64, u64) {
        (self.frames.iter().sum(), self.bytes.iter().sum())
    }

    /// `N frames, B in C calls (Kind n b, …)`: the kinds seen, with their bytes where a
    /// frame carries a body.
    fn render(&self, calls: &str) -> String {
        let (n, b) = self.total();
        let mut s = format!("{n} frames, {} in {} {calls}", bytes(b), self.calls);
        let mut first = true;
        for k in KINDS {
            let (f, by) = (self.frames[k as usize], self.bytes[k as usize]);
            if f == 0 {
                continue;
            }
            s.push_str(if first { " (" } else { ", " });
            first = false;
            let _ = write!(s, "{k:?} {f}");
            if matches!(k, Kind::Eager | Kind::Data) {
                let _ = write!(s, " {}", bytes(by));
            }
        }
        if !first {
            s.push(')');
        }
        s
    }
}

/// `b` bytes for a reader: B, kB or MB (decimal, as `ss` and `iperf` print them).
fn bytes(b: u64) -> String {
    match b {
        0..=9_999 => format!("{b} B"),
        10_000..=999_999 => format!("{:.1} kB", b as f64 / 1e3),
        _ => format!("{:.1} MB", b as f64 / 1e6),
    }
}

/// One link's line: `link stats: node M, link to node P: out …; in …`.
pub(crate) fn line(me: u32, peer: u32, out: &FrameCounts, input: &FrameCounts) -> String {
    format!(
        "link stats: node {me}, link to node {peer}: out {}; in {}",
        out.render("writes"),
        input.render("reads")
    )
}

/// `HYPERCUBE_LINK_STATS`: 1 prints every link's counts at finalize, 0 (or unset) not.
pub(crate) fn wanted() -> Result<bool> {
    match std::env::var("HYPERCUBE_LINK_STATS") {
        Err(std::env::VarError::NotPresent) => Ok(false),
        Ok(v) if v.trim() == "1" => Ok(true),
        Ok(v) if v.trim() == "0" || v.trim().is_empty() => Ok(false),
        Ok(v) => Err(Error::Config(format!(
            "HYPERCUBE_LINK_STATS={v:?}: use 1 (print every link's frames by kind at \
             finalize) or 0 (do not)"
        ))),
        Err(e) => Err(Error::Config(format!("HYPERCUBE_LINK_STATS: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_kinds_seen_with_their_bytes() {
        let mut out = FrameCounts::default();
        for _ in 0..3 {
            out.frame(Kind::Eager, 1_000_040);
        }
        out.frame(Kind::Ack, 40);
        out.calls = 2;
        let input = FrameCounts::default();
        assert_eq!(
            line(3, 1, &out, &input),
            "link stats: node 3, link to node 1: out 4 frames, 3.0 MB in 2 writes \
             (Eager 3 3.0 MB, Ack 1); in 0 frames, 0 B in 0 reads"
        );
        assert_eq!((out.of(Kind::Eager), out.of(Kind::Data)), (3, 0));
    }
}
