//! The routing algorithms compared in chapter 5 of the thesis, the
//! dimension-ordered exchange, the runtime's planned routes, and ours.
//!
//! All of them route along minimal paths; they differ in which packet a node
//! sends (the *scheduling discipline*) and which still-to-correct dimension it
//! uses (the *next intermediate node*).

pub mod brute_force;
pub mod equibalancing;
pub mod exchange;
pub mod lookahead;
pub mod ours;
pub mod planned;
pub mod rbf;

use hypercube_topology::NodeId;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

pub use brute_force::BruteForce;
pub use equibalancing::Equibalancing;
pub use exchange::Exchange;
pub use lookahead::Lookahead;
pub use ours::Ours;
pub use planned::Planned;
pub use rbf::Rbf;

/// The dimensions in which `node` and `dst` differ, highest first (the order
/// of the appendix's `search()`): the possible next hops of a minimal path.
pub fn candidate_dims(node: NodeId, dst: NodeId) -> impl Iterator<Item = u32> {
    let diff = node ^ dst;
    (0..32u32).rev().filter(move |&k| diff >> k & 1 == 1)
}

/// Picks uniformly at random one of the dimensions of `dims` minimising
/// `score` (the thesis's "if two or more nodes have this minimum …, select
/// one of them at random").
pub fn argmin_random<S: PartialOrd + Copy>(
    dims: impl Iterator<Item = u32>,
    mut score: impl FnMut(u32) -> S,
    rng: &mut ChaCha8Rng,
) -> Option<u32> {
    let mut best: Option<S> = None;
    let mut ties = 0u32;
    let mut pick = None;
    for k in dims {
        let s = score(k);
        match best {
            Some(b) if s > b => continue,
            Some(b) if s == b => {
                ties += 1;
                if rng.gen_range(0..ties) == 0 {
                    pick = Some(k);
                }
            }
            _ => {
                best = Some(s);
                ties = 1;
                pick = Some(k);
            }
        }
    }
    pick
}

/// A random still-to-correct dimension (brute force and RBF).
pub fn random_dim(node: NodeId, dst: NodeId, rng: &mut ChaCha8Rng) -> u32 {
    let diff = node ^ dst;
    let i = rng.gen_range(0..diff.count_ones());
    candidate_dims(node, dst)
        .nth(i as usize)
        .unwrap_or(diff.trailing_zeros())
}
