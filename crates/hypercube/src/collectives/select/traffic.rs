//! The bytes an algorithm moves through the links ([`model_work`]), split into first-link
//! and forwarded bytes ([`Traffic`], [`model_traffic`]): the work bound of the choice.

use super::model::mesh_shape;
use super::names::{Algorithm, Operation};

/// The bytes an algorithm moves through the links ([`model_traffic`]), split by what the
/// link's sender does with them: bytes on the **first link** of their message's route
/// (sent by the node that holds them, a copy out of the application), and bytes on
/// every **later link** (passed on by an intermediate node's transport, which may be
/// cheaper: [`Machine::forward_copy`](super::Machine::forward_copy)). An algorithm that talks to neighbours only has
/// no forwarded bytes; its own store-and-forward steps (e.g. [`Algorithm::StoreForward`])
/// count as first-link bytes of each step's message.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Traffic {
    /// Bytes × messages on the first link of their route.
    pub first_hop: f64,
    /// Bytes × links beyond the first of their route.
    pub forwarded: f64,
}

impl Traffic {
    /// All bytes × links: [`model_work`].
    pub fn total(&self) -> f64 {
        self.first_hop + self.forwarded
    }
}

/// The bytes `alg` moves through the links for `op` on `2^k` nodes, summed over every link
/// a message crosses (a message routed over h links counts h times); `m_bytes` as in
/// [`model_time`](super::model_time). The same in both routing regimes: a forwarded message crosses every
/// link of its route either way. On a machine whose cores are shared by the ranks, every
/// byte costs copies on some core, so this volume bounds the time from below (see
/// [`selection_time`](super::selection_time)). [`model_traffic`] splits it into first-link and forwarded bytes.
pub fn model_work(op: Operation, alg: Algorithm, k: u32, m_bytes: usize) -> Option<f64> {
    model_traffic(op, alg, k, m_bytes).map(|t| t.total())
}

/// [`model_work`] split into the bytes on the first link of their message's route and the
/// bytes passed on by intermediate nodes ([`Traffic`]). Only the algorithms that send over
/// e-cube routes (scatter/gather and shift [`Algorithm::Ecube`], all-to-all
/// [`Algorithm::Pairwise`], scan [`Algorithm::Chain`]) forward any.
pub fn model_traffic(op: Operation, alg: Algorithm, k: u32, m_bytes: usize) -> Option<Traffic> {
    use Algorithm::*;
    let m = m_bytes as f64;
    let p = (1u64 << k) as f64;
    let lg = k as f64;
    // The links from one node to all the others: Σ_{i=1}^{p−1} popcount(i) = (p/2) log p.
    let all_hops = p / 2.0 * lg;
    let direct = |first_hop: f64| Traffic {
        first_hop,
        forwarded: 0.0,
    };
    Some(match (op, alg) {
        (Operation::Bcast | Operation::Reduce, Hypercube | AllPort) => direct(m * (p - 1.0)),
        (Operation::Bcast, ScatterAllgather) | (Operation::Reduce, ReduceScatterGather) => {
            direct(m / p * p / 2.0 * lg + m * (p - 1.0))
        }
        (Operation::Allreduce | Operation::Scan, Hypercube) => direct(m * p * lg),
        (Operation::Allreduce, ReduceScatterAllgather | Ring | AllPort) => {
            direct(2.0 * m * (p - 1.0))
        }
        (Operation::Allgather, Hypercube | Ring | Mesh | AllPort) => direct(m * p * (p - 1.0)),
        (Operation::ReduceScatter, Hypercube | Ring | AllPort) => direct(m * (p - 1.0)),
        (Operation::Scatter | Operation::Gather, Hypercube) => direct(m * all_hops),
        // Each tree's nodes lie 1 + |y| (upper half) or 2 + |y| (lower half) links deep:
        // m (3p/2 − 2 + p (log p − 1)/2) in all, m (p − 1) of it on first links.
        (Operation::Scatter | Operation::Gather, AllPort) => {
            let total = if k == 0 {
                0.0
            } else {
                m * (1.5 * p - 2.0 + p * (lg - 1.0) / 2.0)
            };
            Traffic {
                first_hop: m * (p - 1.0),
                forwarded: total - m * (p - 1.0),
            }
        }
        // p − 1 blocks from (to) the root, one message each, (p/2) log p links in all.
        (Operation::Scatter | Operation::Gather, Ecube) => Traffic {
            first_hop: m * (p - 1.0),
            forwarded: m * (all_hops - (p - 1.0)),
        },
        // Σ over the p nodes of the links to every other node: p · (p/2) log p, all of
        // it first-link bytes of the log p exchanges for StoreForward.
        (Operation::Alltoall, StoreForward) => direct(m * p * all_hops),
        (Operation::Alltoall, Pairwise | Ecube) => Traffic {
            first_hop: m * p * (p - 1.0),
            forwarded: m * p * (all_hops - (p - 1.0)),
        },
        (Operation::Alltoall, Ring) => direct(m * p / 2.0 * (p - 1.0) * p),
        (Operation::Alltoall, Mesh) => {
            let (r, c) = mesh_shape(k);
            direct(m * p / 2.0 * ((r + c) as f64 - 2.0) * p)
        }
        // The worst case: every node's message over log p links.
        (Operation::Shift, Ecube) => Traffic {
            first_hop: if k == 0 { 0.0 } else { m * p },
            forwarded: m * p * (lg - 1.0).max(0.0),
        },
        (Operation::Shift, GrayRing) => direct(m * p * lg),
        (Operation::Barrier, Hypercube | Tree) => direct(0.0),
        // Rank j − 1 → j for j = 1..p−1 over popcount((j − 1) ^ j) links: 2(p − 1) − log p
        // in all (26 at p = 16).
        (Operation::Scan, Chain) => {
            let links: u32 = (1..(1u32 << k)).map(|j| ((j - 1) ^ j).count_ones()).sum();
            Traffic {
                first_hop: m * (p - 1.0),
                forwarded: m * (links as f64 - (p - 1.0)),
            }
        }
        _ => return None,
    })
}
