//! What the all-port algorithms cost where each node drives its links at once (the
//! machines of docs/cubenet.md): [`all_port_time`], beside Grama's one-port
//! [`super::model_time`].

use super::cost::CostModel;
use super::names::{Algorithm, Operation};
use crate::transport::Forwarding;

/// The time of `alg` for `op` on `2^k` nodes in the **all-port** model — every node drives
/// its k links at once — for the algorithms built to use it; `None` for the others, whose
/// steps use one link at a time and cost what [`super::model_time`] says. All-to-all
/// [`Algorithm::Ecube`] (every block in flight at once): e-cube routing loads each directed
/// link with p/2 blocks, so `(p − 1) t_s + t_w m p/2 + t_h ((p/2) log p − p + 1)` under
/// cut-through; store-and-forward adds `(log p − 1) t_w m` for the last block's later links.
/// Scatter and gather [`Algorithm::Ecube`] (every block straight from or to the root): the
/// root's busiest link carries p/2 blocks, the same expression. All-to-all broadcast
/// [`Algorithm::AllPort`] (d parts over rotated dimension orders): `t_s (log p)² + t_w m
/// (p − 1)/log p`, the d start-ups of a step counted as the node's serial work. Broadcast
/// and reduction [`Algorithm::AllPort`] (d parts, each in n pieces, pipelined down or up
/// Johnsson & Ho's edge-disjoint trees): `(n + d)(t_s + t_w m/(d n))`. Scatter and gather
/// [`Algorithm::AllPort`] (each block in d parts down or up those trees):
/// `(p − 1 + d)(t_s + t_w m/d)`. All-to-all
/// reduction and all-reduce [`Algorithm::AllPort`] the same with m/p blocks (twice for
/// all-reduce).
/// [`super::selection_time`] uses it where [`super::Machine::links_bound`].
pub fn all_port_time(
    op: Operation,
    alg: Algorithm,
    k: u32,
    m_bytes: usize,
    c: CostModel,
) -> Option<f64> {
    let (p, lg, m) = ((1u64 << k) as f64, f64::from(k), m_bytes as f64);
    match (op, alg) {
        // All-to-all: e-cube routing loads each directed link with p/2 blocks. Scatter and
        // gather, every block from (to) the root over its e-cube route: the blocks for the
        // nodes whose highest differing bit is j leave (reach) the root over its link j,
        // so the busiest of its links carries p/2 blocks.
        (Operation::Alltoall | Operation::Scatter | Operation::Gather, Algorithm::Ecube) => {
            if k == 0 {
                return Some(0.0);
            }
            let hops = p / 2.0 * lg - (p - 1.0);
            let sf = match c.forwarding {
                Forwarding::CutThrough => 0.0,
                Forwarding::StoreAndForward => (lg - 1.0) * c.t_w * m,
            };
            Some((p - 1.0) * c.t_s + c.t_w * m * p / 2.0 + c.t_h * hops + sf)
        }
        // Every block in d parts down d edge-disjoint trees: the root's link t carries
        // part t of the p − 1 blocks, a pipeline of p − 1 steps, each a start-up and a
        // part, and the last part has d more links to go at most.
        (Operation::Scatter | Operation::Gather, Algorithm::AllPort) => {
            Some((p - 1.0 + lg) * (c.t_s + c.t_w * m / lg.max(1.0)))
        }
        // d parts over rotated dimension orders: every link carries 2^j m/d at step j.
        (Operation::Allgather, Algorithm::AllPort) => {
            Some(c.t_s * lg * lg + c.t_w * m * (p - 1.0) / lg.max(1.0))
        }
        // d parts in n pieces through the edge-disjoint trees, d + 1 links deep.
        (Operation::Bcast | Operation::Reduce, Algorithm::AllPort) => {
            Some(super::pipeline::pipelined_time(
                m_bytes,
                k,
                super::machine::pieces(m_bytes, k),
                c,
                true,
            ))
        }
        // The same per phase with m/p blocks.
        (Operation::ReduceScatter, Algorithm::AllPort) => {
            Some(c.t_s * lg * lg + c.t_w * (m / p) * (p - 1.0) / lg.max(1.0))
        }
        (Operation::Allreduce, Algorithm::AllPort) => {
            Some(2.0 * (c.t_s * lg * lg + c.t_w * (m / p) * (p - 1.0) / lg.max(1.0)))
        }
        _ => None,
    }
}
