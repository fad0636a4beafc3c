//! ALG II: one-step time-lookahead equibalancing (thesis §4.3, appendix
//! "Simulation of One-Step Time-Lookahead Equibalancing Algorithm").
//!
//! Scheduling: farthest first, as ALG I. Next hop: for every candidate `x`
//! (a minimal-path neighbour of the sending node `i`) the algorithm predicts
//! `m = load(x) + ⌊threshold · add⌋`, where `add` estimates what `x` will
//! receive from its other neighbours; the candidate with the smallest `m`
//! wins, ties at random. The threshold lies in `[0, 1]`; `0` is ALG I.
//!
//! The text (§4.3, step 3) defines `add` as "how many neighbours of `x`
//! (except `i`) have a message that can be transmitted to `x`". The appendix
//! computes something slightly different, which we follow: for each
//! neighbour `tt ≠ i` of `x` it counts the *destinations* (not messages, not
//! neighbours) for which `tt` holds at least one message, that are at
//! Hamming distance ≥ 2 from `tt`, and whose minimal paths pass through `x`;
//! `add` is the sum over `tt` ([`Network::need`]), truncated by `(int)` after
//! multiplication with the threshold.

use hypercube_topology::{neighbor, NodeId};
use rand_chacha::ChaCha8Rng;

use super::{argmin_random, candidate_dims};
use crate::model::{Move, Network, Router};

/// The one-step lookahead router (ALG II) with its threshold.
#[derive(Clone, Debug)]
pub struct Lookahead {
    /// Weight of the predicted arrivals, in `[0, 1]`.
    pub threshold: f64,
}

impl Lookahead {
    /// ALG II with the given threshold (clamped to `[0, 1]`).
    pub fn new(threshold: f64) -> Self {
        Lookahead {
            threshold: threshold.clamp(0.0, 1.0),
        }
    }

    /// The appendix's `add` for candidate `x = neighbor(i, k)`.
    pub fn predicted_arrivals(net: &Network, i: NodeId, k: u32) -> u32 {
        let x = neighbor(i, k);
        (0..net.dim())
            .filter(|&e| e != k)
            .map(|e| net.need(neighbor(x, e), e))
            .sum()
    }
}

impl Router for Lookahead {
    fn name(&self) -> String {
        format!("ALG II({:.1})", self.threshold)
    }
    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        let id = net.farthest(node)?;
        let dst = net.packet(id).dst;
        let th = self.threshold;
        let dim = argmin_random(
            candidate_dims(node, dst),
            |k| {
                let add = Self::predicted_arrivals(net, node, k);
                net.load(neighbor(node, k)) as u64 + (th * add as f64 + 1e-9).floor() as u64
            },
            rng,
        )?;
        Some(Move { packet: id, dim })
    }
}
