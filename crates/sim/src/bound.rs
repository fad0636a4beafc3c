//! Lower bounds on the communication time of a workload under the cycle model
//! (valid for every algorithm that routes along minimal paths).
//!
//! * **hops** — every packet crosses `hamming(src, dst)` links and the `N`
//!   nodes together send at most `N` packets per cycle:
//!   `⌈Σ hamming / N⌉`.
//! * **source** — a node sends at most one packet per cycle, so its own
//!   packets leave at distinct cycles `1, 2, …`; a packet leaving at cycle `t`
//!   with distance `d` arrives at cycle `t + d - 1` at the earliest. Sending
//!   the farthest first is optimal (Proposition 4 of §2.2), giving
//!   `max_t (t + d_t - 1)` with distances sorted decreasingly. This includes
//!   both "the most packets one node must originate" and "the largest
//!   distance".
//! * **sink** — a node receives at most one packet per link and cycle, i.e.
//!   at most `n` per cycle, and nothing can arrive before cycle `d_min`:
//!   `d_min - 1 + ⌈m / n⌉` for a node receiving `m` packets.
//!
//! The bound is the maximum of the three. Under the appendix's in-place
//! semantics a packet may cross several links in one cycle, so only the
//! distance-free parts hold there ([`LowerBound::appendix`]).

use hypercube_topology::hamming;

use crate::workload::Workload;

/// The components of the lower bound of a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LowerBound {
    /// `⌈total hops / N⌉`.
    pub hops: u64,
    /// Proposition-4 bound of the busiest source.
    pub source: u64,
    /// Receive-side bound of the busiest destination.
    pub sink: u64,
    /// The most packets originated by one node.
    pub max_originated: u64,
    /// `⌈m / n⌉` for the busiest destination (no distance term).
    pub sink_count: u64,
}

impl LowerBound {
    /// Computes the bound of `w`.
    pub fn of(w: &Workload) -> Self {
        let nodes = w.nodes() as usize;
        let n = w.n as u64;
        let mut out: Vec<Vec<u32>> = vec![Vec::new(); nodes];
        let mut into: Vec<(u64, u32)> = vec![(0, u32::MAX); nodes];
        let mut total = 0u64;
        for &(s, d) in &w.packets {
            let h = hamming(s, d);
            if h == 0 {
                continue;
            }
            total += h as u64;
            out[s as usize].push(h);
            let e = &mut into[d as usize];
            e.0 += 1;
            e.1 = e.1.min(h);
        }
        let mut source = 0u64;
        let mut max_originated = 0u64;
        for mut ds in out {
            ds.sort_unstable_by(|a, b| b.cmp(a));
            max_originated = max_originated.max(ds.len() as u64);
            for (t, &d) in ds.iter().enumerate() {
                source = source.max(t as u64 + d as u64);
            }
        }
        let mut sink = 0u64;
        let mut sink_count = 0u64;
        for &(m, dmin) in &into {
            if m > 0 {
                let c = m.div_ceil(n);
                sink_count = sink_count.max(c);
                sink = sink.max(dmin as u64 - 1 + c);
            }
        }
        LowerBound {
            hops: total.div_ceil(nodes as u64),
            source,
            sink,
            max_originated,
            sink_count,
        }
    }

    /// The bound for the thesis's (synchronous) cycle model.
    pub fn value(&self) -> u64 {
        self.hops.max(self.source).max(self.sink)
    }

    /// The weaker bound that also holds under the appendix's in-place
    /// semantics, where a packet can cross several links in one cycle.
    pub fn appendix(&self) -> u64 {
        self.hops.max(self.max_originated).max(self.sink_count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_to_all_hops_bound() {
        // n·2^(n-1)·k: 6-cube, one message per pair → 192 (issue's example).
        assert_eq!(LowerBound::of(&Workload::all_to_all(6, 1)).value(), 192);
        assert_eq!(LowerBound::of(&Workload::all_to_all(5, 2)).value(), 160);
        assert_eq!(LowerBound::of(&Workload::all_to_all(4, 3)).value(), 96);
    }

    #[test]
    fn proposition_4_source_bound() {
        // One node, three packets at distances 3, 1, 1: 3 then 1+1 → max(3, 2, 3) = 3;
        // packets at distance 2, 2, 2 (repeated lengths) → 2 + 2 = 4 (Prop. 3b).
        let w = Workload {
            n: 3,
            packets: vec![(0, 7), (0, 1), (0, 2)],
        };
        assert_eq!(LowerBound::of(&w).source, 3);
        let w = Workload {
            n: 3,
            packets: vec![(0, 3), (0, 5), (0, 6)],
        };
        assert_eq!(LowerBound::of(&w).source, 4);
        // Proposition 1: m messages over l links take l + m - 1.
        let w = Workload {
            n: 3,
            packets: vec![(0, 7); 5],
        };
        assert_eq!(LowerBound::of(&w).value(), 3 + 4);
    }
}
