//! EXCH: the dimension-ordered exchange (the "standard exchange" of all-to-all
//! personalized communication), done packet by packet in the cycle model.
//!
//! Source: S. L. Johnsson and C.-T. Ho, "Optimum Broadcasting and Personalized
//! Communication in Hypercubes", *IEEE Trans. Computers* C-38(9), 1989 (the
//! thesis's reference \[2\]; its all-to-all personalized communication in `n`
//! exchange steps); A. Grama, A. Gupta, G. Karypis, V. Kumar, *Introduction to
//! Parallel Computing*, 2nd ed., 2003, §4.5.3 (all-to-all personalized
//! communication on a hypercube: `log p` steps, in step `j` every node
//! exchanges across dimension `j` the data that must cross it).
//!
//! The schedule runs in global phases `j = 0, 1, …, n-1`. In phase `j` a node
//! sends, one per cycle, the packets it holds whose lowest still-to-correct
//! dimension is `j` — across dimension `j`. Every packet therefore follows its
//! e-cube route (dimensions in ascending order), and a packet arriving across
//! dimension `j` only needs dimensions above `j`, so it waits for a later
//! phase. Phase `j` ends in the first cycle in which no undelivered packet
//! anywhere has `j` as its lowest differing dimension; empty phases are
//! skipped. Inside a phase a node sends its farthest packet first.
//!
//! On all-to-all communication with `k` packets per ordered pair every node
//! holds exactly `k·2^(n-1)` packets that need dimension `j` at the start of
//! phase `j` (half of its `k·2^n` blocks, its own included), so the phase takes
//! `k·2^(n-1)` cycles with every node sending in every cycle, and the whole
//! exchange `n·k·2^(n-1)` cycles — exactly the hop bound `⌈Σ hops / N⌉`
//! ([`crate::bound`]). On many-to-many workloads the phases are unbalanced:
//! a node with nothing for dimension `j` idles while others finish it.

use hypercube_topology::NodeId;
use rand_chacha::ChaCha8Rng;

use crate::model::{Move, Network, Router};

/// The dimension-ordered exchange; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Exchange {
    phase: u32,
}

impl Exchange {
    /// The current phase (the dimension being exchanged).
    pub fn phase(&self) -> u32 {
        self.phase
    }
}

/// The lowest dimension in which `at` and `dst` differ (32 when equal).
fn lowest(at: NodeId, dst: NodeId) -> u32 {
    (at ^ dst).trailing_zeros()
}

impl Router for Exchange {
    fn name(&self) -> String {
        "EXCH".into()
    }

    fn begin_cycle(&mut self, net: &Network, _rng: &mut ChaCha8Rng) {
        // Phases only advance: a packet's lowest differing dimension grows.
        self.phase = net
            .packets()
            .iter()
            .filter(|p| p.delivered_at.is_none())
            .map(|p| lowest(p.at, p.dst))
            .min()
            .unwrap_or(net.dim());
    }

    fn choose(&mut self, net: &Network, node: NodeId, _rng: &mut ChaCha8Rng) -> Option<Move> {
        let j = self.phase;
        let id = (1..=net.max_dist(node)).rev().find_map(|d| {
            net.bucket(node, d)
                .iter()
                .copied()
                .find(|&id| lowest(node, net.packet(id).dst) == j)
        })?;
        Some(Move { packet: id, dim: j })
    }
}
