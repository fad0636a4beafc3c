//! Johnsson–Ho reverse breadth first (RBF) scheduling, as the thesis
//! simulates it (§3.3, §5.2, appendix "Simulation of Johnsson's Algorithm").
//!
//! Johnsson and Ho's RBF discipline lets the root of a spanning tree of
//! height `h` send the data for level `h - p` in cycle `p`. The appendix turns
//! this into rounds of `n` cycles: in the `p`-th cycle of a round
//! (`p = 0 … n-1`) every node may only send a packet whose remaining distance
//! is exactly `j = n - p`; the next hop is chosen at random among the `j`
//! minimal-path neighbours. A node without such a packet idles in that cycle
//! ("that cycle is just wasted", §5.2). Rounds repeat until all packets are
//! delivered.
//!
//! The appendix only tests for completion after a whole round, so its
//! `com_time` is always a multiple of `n`; the published RBF numbers (213,
//! 103, 37, …) are not, so they must have been counted up to the last
//! delivery — which is what this simulator reports as well.

use hypercube_topology::NodeId;
use rand_chacha::ChaCha8Rng;

use super::random_dim;
use crate::model::{Move, Network, Router};

/// The RBF router of §3.3 as simulated in the appendix.
#[derive(Clone, Debug, Default)]
pub struct Rbf {
    level: u32,
}

impl Router for Rbf {
    fn name(&self) -> String {
        "RBF".into()
    }
    fn begin_cycle(&mut self, net: &Network, _rng: &mut ChaCha8Rng) {
        let n = net.dim() as u64;
        self.level = (n - net.cycle() % n) as u32;
    }
    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        let id = net.head(node, self.level)?;
        let dim = random_dim(node, net.packet(id).dst, rng);
        Some(Move { packet: id, dim })
    }
}
