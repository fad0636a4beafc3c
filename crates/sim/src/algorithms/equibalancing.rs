//! ALG I: equibalancing (thesis §4.2, appendix "Simulation of Equibalancing
//! Algorithm").
//!
//! Scheduling: farthest first (the head of the list ordered by Hamming
//! distance). Next hop: among the `j` neighbours on minimal paths, the one
//! that currently has the fewest messages to transmit; ties are broken at
//! random. Under [`Semantics::Appendix`](crate::model::Semantics::Appendix)
//! "messages to transmit" is the appendix's `mtotal` counter.

use hypercube_topology::{neighbor, NodeId};
use rand_chacha::ChaCha8Rng;

use super::{argmin_random, candidate_dims};
use crate::model::{Move, Network, Router};

/// The equibalancing router (ALG I).
#[derive(Clone, Debug, Default)]
pub struct Equibalancing;

impl Router for Equibalancing {
    fn name(&self) -> String {
        "ALG I".into()
    }
    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        let id = net.farthest(node)?;
        let dst = net.packet(id).dst;
        let dim = argmin_random(
            candidate_dims(node, dst),
            |k| net.load(neighbor(node, k)),
            rng,
        )?;
        Some(Move { packet: id, dim })
    }
}
