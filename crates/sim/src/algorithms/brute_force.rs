//! Brute force (thesis §3.4, appendix "Simulation of Brute-Force Algorithm").
//!
//! Scheduling: a node sends the packet with the largest remaining Hamming
//! distance first (priority `i` for distance `n - (i - 1)`). Next hop: one of
//! the `j` neighbours on minimal paths, chosen uniformly at random.

use hypercube_topology::NodeId;
use rand_chacha::ChaCha8Rng;

use super::random_dim;
use crate::model::{Move, Network, Router};

/// The brute-force router of §3.4.
#[derive(Clone, Debug, Default)]
pub struct BruteForce;

impl Router for BruteForce {
    fn name(&self) -> String {
        "BR_FC".into()
    }
    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        let id = net.farthest(node)?;
        let dim = random_dim(node, net.packet(id).dst, rng);
        Some(Move { packet: id, dim })
    }
}
