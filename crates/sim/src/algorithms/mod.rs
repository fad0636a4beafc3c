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
use std::cmp::Ordering;

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
    let mut min = RandomMin::default();
    for k in dims {
        min.offer(score(k), k, rng);
    }
    min.pick()
}

/// [`argmin_random`] for candidates offered one at a time (moves found in
/// nested loops): keeps one of the candidates of least score, each of them
/// equally likely, drawing from `rng` once per tie.
pub struct RandomMin<S, T> {
    best: Option<(S, T)>,
    ties: u32,
}

impl<S, T> Default for RandomMin<S, T> {
    fn default() -> Self {
        RandomMin {
            best: None,
            ties: 0,
        }
    }
}

impl<S: PartialOrd + Copy, T> RandomMin<S, T> {
    /// Offer `item` of score `s`.
    pub fn offer(&mut self, s: S, item: T, rng: &mut ChaCha8Rng) {
        self.offer_by(s, item, rng, |s, b| {
            if s > b {
                Ordering::Greater
            } else if s == b {
                Ordering::Equal
            } else {
                Ordering::Less
            }
        });
    }

    /// Offer `item` of score `s`, scores ordered by `cmp(s, best)` (e.g. equal
    /// within a tolerance).
    pub fn offer_by(
        &mut self,
        s: S,
        item: T,
        rng: &mut ChaCha8Rng,
        cmp: impl Fn(S, S) -> Ordering,
    ) {
        match &mut self.best {
            Some((b, _)) if cmp(s, *b) == Ordering::Greater => {}
            Some((b, pick)) if cmp(s, *b) == Ordering::Equal => {
                self.ties += 1;
                if rng.gen_range(0..self.ties) == 0 {
                    *pick = item;
                }
            }
            _ => {
                self.best = Some((s, item));
                self.ties = 1;
            }
        }
    }

    /// The candidate kept, if any was offered.
    pub fn pick(self) -> Option<T> {
        self.best.map(|(_, t)| t)
    }
}

/// A random still-to-correct dimension (brute force and RBF).
pub fn random_dim(node: NodeId, dst: NodeId, rng: &mut ChaCha8Rng) -> u32 {
    let diff = node ^ dst;
    let i = rng.gen_range(0..diff.count_ones());
    candidate_dims(node, dst)
        .nth(i as usize)
        .unwrap_or(diff.trailing_zeros())
}
