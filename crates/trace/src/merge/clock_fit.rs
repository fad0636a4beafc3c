//! Refining the start-up clock offsets with the messages themselves. A rank on another
//! host than rank 0 estimated its offset by NTP-style ping-pongs (`boot/clock.rs` in the
//! runtime): the sample with the smallest round trip `rtt`, so the true offset lies within
//! `± rtt / 2` of the estimate. A message that arrives sooner than that error after it was
//! sent can still be drawn received before it was sent. Within that interval the messages
//! narrow the offset down: a receive ends after its send began, and every hop of a
//! forwarded message comes after the one before — the constraints of Lamport's clock
//! condition, as trace tools correct them (Becker et al., "Synchronizing the timestamps
//! of concurrent events in traces of hybrid MPI/OpenMP applications", 2010, the
//! "controlled logical clock" of Scalasca). This module moves each such rank's times by
//! the least amount, inside its interval, that satisfies every constraint with the other
//! ranks; where none does (a poor estimate, or a clock that drifted), it moves nothing
//! and the merge warns about the arrows that still point backwards.

use std::collections::HashMap;

use super::{node, shift_times, RankFile};

/// Passes over the ranks: a shift of one rank can allow or require one of another; a few
/// rounds settle what start-up estimates leave, and the bound keeps the merge finite.
const PASSES: usize = 8;

/// A point of a message: (time in ns, index into the ranks, order: send 0, hop 1,
/// receive 2).
type Point = (i64, usize, u8);

/// Consecutive points of every message on two different ranks, as (earlier, later) pairs
/// of (time in ns, index into `ranks`): the send before the first hop, each hop before the
/// next, the last before the receive's end.
fn constraints(ranks: &[RankFile]) -> Vec<((i64, usize), (i64, usize))> {
    // Each message's points, by (source rank, id).
    let mut points: HashMap<(u32, u64), Vec<Point>> = HashMap::new();
    for (i, r) in ranks.iter().enumerate() {
        for e in &r.events {
            let (src, t, order) = match e.s("ev") {
                "send" => (Some(r.rank), e.u("t0"), 0),
                "recv" => (node(e.v.get("peer"), r.dim), e.u("t1").max(e.u("t0")), 2),
                "fwd" if e.s("kind") != "data" => (node(e.v.get("src"), r.dim), e.u("t"), 1),
                _ => continue,
            };
            if let Some(src) = src {
                let t = i64::try_from(t).unwrap_or(i64::MAX);
                points
                    .entry((src, e.u("id")))
                    .or_default()
                    .push((t, i, order));
            }
        }
    }
    let mut pairs = Vec::new();
    for mut pts in points.into_values() {
        pts.sort_by_key(|p| (p.2, p.0));
        for w in pts.windows(2) {
            if w[0].1 != w[1].1 {
                pairs.push(((w[0].0, w[0].1), (w[1].0, w[1].1)));
            }
        }
    }
    pairs
}

/// Refine the offsets of the ranks whose clock is not rank 0's (their `clock` line's
/// `same_clock` false, its `rtt_ns` the estimate's error bound) and shift their events;
/// a note for each rank moved.
pub(super) fn refine(ranks: &mut [RankFile]) -> Vec<String> {
    let bound: Vec<Option<i64>> = ranks.iter().map(|r| r.clock_error).collect();
    if bound.iter().all(Option::is_none) {
        return Vec::new();
    }
    // Each movable rank's constraints, so that a pass costs one look at every pair:
    // `before[i]`: (another rank's time, that rank, i's time after it); `after[i]`: (i's
    // time, the other's time after it, that rank).
    let n = ranks.len();
    let mut before: Vec<Vec<(i64, usize, i64)>> = vec![Vec::new(); n];
    let mut after: Vec<Vec<(i64, i64, usize)>> = vec![Vec::new(); n];
    for ((ta, a), (tb, b)) in constraints(ranks) {
        if bound[b].is_some() {
            before[b].push((ta, a, tb));
        }
        if bound[a].is_some() {
            after[a].push((ta, tb, b));
        }
    }
    let mut shift = vec![0i64; n];
    for _ in 0..PASSES {
        let mut moved = false;
        for (i, e) in bound.iter().enumerate() {
            let Some(e) = *e else { continue };
            // This rank's shift s: s ≥ lo (its points after the others'), s ≤ hi.
            let (mut lo, mut hi) = (-e, e);
            for &(ta, a, tb) in &before[i] {
                lo = lo.max(ta.saturating_add(shift[a]).saturating_sub(tb));
            }
            for &(ta, tb, b) in &after[i] {
                hi = hi.min(tb.saturating_add(shift[b]).saturating_sub(ta));
            }
            // Inconsistent: leave the estimate (the merge warns about what stays backwards).
            let s = if lo <= hi { 0.clamp(lo, hi) } else { 0 };
            if s != shift[i] {
                shift[i] = s;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    let mut notes = Vec::new();
    for (r, &s) in ranks.iter_mut().zip(&shift) {
        if s != 0 {
            shift_times(&mut r.events, s);
            r.offset = Some(r.offset.unwrap_or(0) + s);
            notes.push(format!(
                "{}: clock offset refined by {:+.1} µs so that its messages are received after \
                 they are sent (within the start-up estimate's ±{:.1} µs)",
                r.name,
                s as f64 / 1000.0,
                r.clock_error.unwrap_or(0) as f64 / 1000.0
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use crate::merge::merge;

    /// Rank 1's start-up estimate is 30 µs short, and a message of 10 µs would be drawn
    /// received before it was sent. With a round trip of 100 µs (±50 µs) the messages
    /// move rank 1 by the least that fits them (+20 µs); with 20 µs (±10 µs) they cannot,
    /// and the merge leaves the estimate and warns.
    #[test]
    fn an_offset_is_refined_within_its_round_trip_by_the_messages() {
        let d = std::env::temp_dir().join(format!("hctrace-fit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let r0 = "{\"ev\":\"start\",\"rank\":0,\"dim\":1,\"pid\":1,\"t\":1000000}\n\
                  {\"ev\":\"clock\",\"ref\":0,\"offset_ns\":0,\"rtt_ns\":0,\"samples\":0,\"same_clock\":true}\n\
                  {\"ev\":\"send\",\"t0\":2000000,\"t1\":2001000,\"peer\":1,\"tag\":3,\"bytes\":8,\"id\":0}\n\
                  {\"ev\":\"recv\",\"t0\":2001000,\"t1\":2030000,\"peer\":1,\"tag\":4,\"bytes\":8,\"id\":0}\n\
                  {\"ev\":\"end\",\"t\":9000000}\n";
        // Rank 1's clock is 1.03 ms behind rank 0's; it receives at 2.010 ms and answers
        // at 2.020 ms of rank 0's clock.
        let r1 = "{\"ev\":\"start\",\"rank\":1,\"dim\":1,\"pid\":2,\"t\":1000}\n\
                  {\"ev\":\"clock\",\"ref\":0,\"offset_ns\":1000000,\"rtt_ns\":RTT,\"samples\":16,\"same_clock\":false}\n\
                  {\"ev\":\"recv\",\"t0\":960000,\"t1\":980000,\"peer\":0,\"tag\":3,\"bytes\":8,\"id\":0}\n\
                  {\"ev\":\"send\",\"t0\":990000,\"t1\":991000,\"peer\":0,\"tag\":4,\"bytes\":8,\"id\":0}\n\
                  {\"ev\":\"end\",\"t\":5000000}\n";
        std::fs::write(d.join("p.rank-0"), r0).unwrap();
        let backwards =
            |m: &crate::merge::Merged| m.warnings.iter().any(|w| w.contains("backwards"));

        std::fs::write(d.join("p.rank-1"), r1.replace("RTT", "100000")).unwrap();
        let m = merge(&d.join("p")).unwrap();
        assert!(!backwards(&m), "{:?}", m.warnings);
        assert_eq!(m.doc["otherData"]["clock_offsets_ns"]["1"], 1020000);
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("rank 1") && n.contains("+20.0 µs")),
            "{:?}",
            m.notes
        );

        std::fs::write(d.join("p.rank-1"), r1.replace("RTT", "20000")).unwrap();
        let m = merge(&d.join("p")).unwrap();
        assert!(backwards(&m), "{:?}", m.warnings);
        assert_eq!(m.doc["otherData"]["clock_offsets_ns"]["1"], 1000000);
        let _ = std::fs::remove_dir_all(&d);
    }
}
