//! Workloads: many-to-many personalized communication with the thesis's
//! parameters (chapter 5, §5.2) and the all-to-all special case.
//!
//! The thesis describes its parameters as: the number of messages per node is
//! uniform between `lnom1` and `lnom2`; `%senders` of the nodes send;
//! each sender sends to `%dest` of the nodes. The generator that actually
//! produced the data sets survives, commented out, in the appendix's ALG II
//! listing, and differs from that description (see [`Generator::Appendix`]).

use hypercube_topology::NodeId;
use rand::seq::index::sample;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The thesis's workload parameters (chapter 5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Dimension of the hypercube.
    pub n: u32,
    /// Lower limit of the number of messages (per sender–destination pair).
    pub lnom1: u32,
    /// Upper limit of the number of messages.
    pub lnom2: u32,
    /// Percentage of nodes that send (`%senders`).
    pub senders_pct: f64,
    /// Percentage of the nodes a sender sends to (`%dest`).
    pub dest_pct: f64,
}

impl Params {
    /// All-to-all personalized communication with `k` messages per ordered pair.
    pub fn all_to_all(n: u32, k: u32) -> Self {
        Params {
            n,
            lnom1: k,
            lnom2: k,
            senders_pct: 100.0,
            dest_pct: 100.0,
        }
    }
    /// True for the all-to-all rows (100 % senders, 100 % destinations, fixed count).
    pub fn is_all_to_all(&self) -> bool {
        self.senders_pct >= 100.0 && self.dest_pct >= 100.0 && self.lnom1 == self.lnom2
    }
}

/// How the random many-to-many data sets are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Generator {
    /// The appendix's (commented-out) generator, which the tables used:
    /// `floor(%senders·N)` senders are drawn *with replacement*
    /// (`ee = ns()`); each draw picks `floor(%dest·N)` destinations *with
    /// replacement* among the `N-1` other nodes, and sets (overwrites) the
    /// number of messages of that pair to `floor(lnom1 + (lnom2-lnom1)·u)`,
    /// `u ∈ [0,1)` — so the count lies in `lnom1 ..= lnom2-1` when
    /// `lnom1 < lnom2`. All-to-all rows use the listing's `con` initialisation
    /// (every pair gets exactly `lnom1` messages).
    Appendix,
    /// The chapter-5 text taken literally: `round(%senders·N)` distinct
    /// senders, each with `round(%dest·(N-1))` distinct destinations, and a
    /// count uniform in `lnom1 ..= lnom2` per pair.
    Text,
}

/// A set of packets to route: `(source, destination)` pairs, one per packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Dimension of the hypercube.
    pub n: u32,
    /// One entry per packet.
    pub packets: Vec<(NodeId, NodeId)>,
}

impl Workload {
    /// All-to-all personalized communication, `k` packets per ordered pair of
    /// distinct nodes (Tables 5.1–5.3).
    pub fn all_to_all(n: u32, k: u32) -> Self {
        let nodes = 1u32 << n;
        let mut packets = Vec::with_capacity((nodes * (nodes - 1) * k) as usize);
        for s in 0..nodes {
            for d in (0..nodes).filter(|&d| d != s) {
                packets.extend(std::iter::repeat((s, d)).take(k as usize));
            }
        }
        Workload { n, packets }
    }

    /// Builds a workload from a message-count matrix `counts[s][d]`.
    fn from_counts(n: u32, counts: &[Vec<u32>]) -> Self {
        let mut packets = Vec::new();
        for (s, row) in counts.iter().enumerate() {
            for (d, &c) in row.iter().enumerate() {
                packets.extend(std::iter::repeat((s as NodeId, d as NodeId)).take(c as usize));
            }
        }
        Workload { n, packets }
    }

    /// Draws a workload with the thesis's parameters; deterministic in `rng`.
    pub fn generate(p: &Params, generator: Generator, rng: &mut ChaCha8Rng) -> Self {
        if p.is_all_to_all() {
            return Self::all_to_all(p.n, p.lnom1);
        }
        let nodes = 1usize << p.n;
        let mut counts = vec![vec![0u32; nodes]; nodes];
        let (lo, hi) = (p.lnom1.min(p.lnom2), p.lnom1.max(p.lnom2));
        match generator {
            Generator::Appendix => {
                let nsenders = (p.senders_pct / 100.0 * nodes as f64 + 1e-9).floor() as usize;
                let nd = (p.dest_pct / 100.0 * nodes as f64 + 1e-9).floor() as usize;
                for _ in 0..nsenders {
                    let ee = rng.gen_range(0..nodes);
                    for _ in 0..nd {
                        let q1 = rng.gen_range(0..nodes - 1);
                        let dest = if q1 < ee { q1 } else { q1 + 1 };
                        let u: f64 = rng.gen();
                        counts[ee][dest] = (lo as f64 + (hi - lo) as f64 * u).floor() as u32;
                    }
                }
            }
            Generator::Text => {
                let nsenders = ((p.senders_pct / 100.0 * nodes as f64).round() as usize).min(nodes);
                let nd =
                    ((p.dest_pct / 100.0 * (nodes - 1) as f64).round() as usize).min(nodes - 1);
                for s in sample(rng, nodes, nsenders).into_iter() {
                    for q in sample(rng, nodes - 1, nd).into_iter() {
                        let d = if q < s { q } else { q + 1 };
                        counts[s][d] = rng.gen_range(lo..=hi);
                    }
                }
            }
        }
        Self::from_counts(p.n, &counts)
    }

    /// Number of nodes `2^n`.
    pub fn nodes(&self) -> u32 {
        1 << self.n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn all_to_all_counts() {
        let w = Workload::all_to_all(3, 2);
        assert_eq!(w.packets.len(), 8 * 7 * 2);
        assert!(w.packets.iter().all(|&(s, d)| s != d && s < 8 && d < 8));
    }

    #[test]
    fn generators_are_deterministic_and_in_range() {
        let p = Params {
            n: 5,
            lnom1: 2,
            lnom2: 6,
            senders_pct: 50.0,
            dest_pct: 30.0,
        };
        for g in [Generator::Appendix, Generator::Text] {
            let a = Workload::generate(&p, g, &mut ChaCha8Rng::seed_from_u64(7));
            let b = Workload::generate(&p, g, &mut ChaCha8Rng::seed_from_u64(7));
            assert_eq!(a, b);
            assert!(a.packets.iter().all(|&(s, d)| s != d && s < 32 && d < 32));
            let mut c = vec![0u32; 32 * 32];
            a.packets
                .iter()
                .for_each(|&(s, d)| c[(s * 32 + d) as usize] += 1);
            let hi = if g == Generator::Appendix { 5 } else { 6 };
            assert!(c.iter().all(|&x| x == 0 || (2..=hi).contains(&x)), "{g:?}");
        }
        let t = Workload::generate(&p, Generator::Text, &mut ChaCha8Rng::seed_from_u64(1));
        let senders: std::collections::BTreeSet<_> = t.packets.iter().map(|p| p.0).collect();
        assert_eq!(senders.len(), 16);
    }
}
