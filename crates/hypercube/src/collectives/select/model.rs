//! What the algorithms cost in Grama's one-port model: [`model_time`] under the
//! [`CostModel`] parameters and routing regime (`cost.rs`). Beside it: the bytes they move
//! (`traffic.rs`), their all-port times (`all_port.rs`), and what is known of this machine
//! with the time the automatic choice compares (`machine.rs`).

use hypercube_topology::mesh_shape_for;

use super::cost::CostModel;
use super::names::{Algorithm, Operation};

/// The most bytes a segment of [`Algorithm::Chain`] has: one eager message (no rendezvous
/// round trip per segment).
pub(crate) const CHAIN_SEGMENT_BYTES: usize = 64 << 10;

/// The 2-D mesh a subcube of dimension `k` is viewed as: `(rows, cols)` =
/// `(2^floor(k/2), 2^ceil(k/2))`, the topology's [`mesh_shape_for`]`(k, 2)`.
///
/// # Panics
/// When `k` exceeds [`hypercube_topology::MAX_DIM`].
pub fn mesh_shape(k: u32) -> (u32, u32) {
    match mesh_shape_for(k, 2)[..] {
        [rows, cols] => (rows, cols),
        _ => unreachable!("mesh_shape_for(k, 2) has two sides"),
    }
}

/// Grama's model time of `alg` for `op` on `2^k` nodes: `m_bytes` is the book's m (per-node
/// message for broadcast, reduction, all-reduce, prefix sums and shift; per-node block for
/// all-to-all broadcast, scatter, gather and all-to-all personalized; the whole per-node
/// vector for all-to-all reduction). `None` if `alg` does not implement `op`. Shift uses
/// its worst case (eq. 4.11's bound; for e-cube a route of log p links).
///
/// The algorithms that talk to neighbours only cost the same in both routing regimes of
/// `c` (see [`CostModel`]). Those that send over e-cube routes — scatter and gather
/// [`Algorithm::Ecube`], all-to-all [`Algorithm::Pairwise`], shift [`Algorithm::Ecube`]
/// and the scan [`Algorithm::Chain`] (rank j → j + 1 is `tz(j+1) + 1` links) — sum their
/// messages' costs over the routes' lengths. With `H = (p/2) log p`, the links from one
/// node to all others:
///
/// - scatter/gather e-cube and pairwise all-to-all, cut-through:
///   `(t_s + t_w m)(p − 1) + t_h (H − p + 1)` (eq. 4.10 and its hop terms);
///   store-and-forward: `(p − 1) t_s + t_w m H + t_h (H − p + 1)`, no better than
///   eq. 4.9's `(t_s + t_w m p/2) log p` for the all-to-all;
/// - e-cube shift: `t_s + t_w m + (log p − 1) t_h` (eq. 4.12) under cut-through,
///   `t_s + log p (t_w m) + (log p − 1) t_h` under store-and-forward;
/// - chain scan in S segments of `m/S`: `Σ_j c_j + (S − 1) max_j c_j`, where `c_j` is the
///   cost of a segment over rank j's link to j + 1 (`(p − 2 + S)(t_s + t_w m/S)` when
///   the distance costs nothing);
/// - the all-port broadcast and reduction (d parts in n pieces pipelined through Johnsson
///   & Ho's edge-disjoint trees) on one port, each node serving its links in turn:
///   `(n + d)(d t_s + t_w m/n)` (`pipeline::pipelined_time`); the all-port scatter and gather
///   (each block in d parts down or up those trees) on one port: `(p − 1 + log p) t_w m +
///   log p (p − 1) t_s`.
pub fn model_time(
    op: Operation,
    alg: Algorithm,
    k: u32,
    m_bytes: usize,
    c: CostModel,
) -> Option<f64> {
    use Algorithm::*;
    let (ts, tw, m) = (c.t_s, c.t_w, m_bytes as f64);
    let p = (1u64 << k) as f64;
    let lg = k as f64;
    // The links from one node to all the others: Σ_{i=1}^{p−1} popcount(i).
    let all_hops = p / 2.0 * lg;
    let mesh_steps = || {
        let (r, cols) = mesh_shape(k);
        (r + cols) as f64 - 2.0
    };
    Some(match (op, alg) {
        (
            Operation::Bcast | Operation::Reduce | Operation::Allreduce | Operation::Scan,
            Hypercube,
        ) => (ts + tw * m) * lg,
        (Operation::Bcast, ScatterAllgather)
        | (Operation::Reduce, ReduceScatterGather)
        | (Operation::Allreduce, ReduceScatterAllgather) => {
            2.0 * (ts * lg + tw * m * (p - 1.0) / p)
        }
        (Operation::Allreduce, Ring) => 2.0 * (p - 1.0) * (ts + tw * m / p),
        (Operation::Allgather | Operation::Scatter | Operation::Gather, Hypercube) => {
            ts * lg + tw * m * (p - 1.0)
        }
        (Operation::Allgather, Ring) => (ts + tw * m) * (p - 1.0),
        (Operation::Scatter | Operation::Gather, AllPort) => {
            (p - 1.0 + lg) * tw * m + lg * (p - 1.0) * ts
        }
        (Operation::Allgather, AllPort) => ts * lg * lg + tw * m * (p - 1.0),
        (Operation::Allgather, Mesh) => ts * mesh_steps() + tw * m * (p - 1.0),
        (Operation::ReduceScatter, Hypercube) => ts * lg + tw * (m / p) * (p - 1.0),
        (Operation::ReduceScatter, Ring) => (ts + tw * m / p) * (p - 1.0),
        (Operation::ReduceScatter, AllPort) => ts * lg * lg + tw * (m / p) * (p - 1.0),
        (Operation::Bcast | Operation::Reduce, AllPort) => super::pipeline::pipelined_time(
            m_bytes,
            k,
            super::machine::pieces(m_bytes, k),
            c,
            false,
        ),
        (Operation::Allreduce, AllPort) => 2.0 * (ts * lg * lg + tw * (m / p) * (p - 1.0)),
        (Operation::Alltoall, StoreForward) => (ts + tw * m * p / 2.0) * lg,
        (Operation::Alltoall, Pairwise | Ecube)
        | (Operation::Scatter | Operation::Gather, Ecube) => c.routed(m, p - 1.0, all_hops),
        (Operation::Alltoall, Ring) => (ts + tw * m * p / 2.0) * (p - 1.0),
        (Operation::Alltoall, Mesh) => (ts + tw * m * p / 2.0) * mesh_steps(),
        (Operation::Shift, Ecube) => c.routed(m, 1.0, lg.max(1.0)),
        (Operation::Shift, GrayRing) => (ts + tw * m) * (2.0 * lg - 1.0).max(lg),
        (Operation::Barrier, Hypercube) => ts * lg,
        (Operation::Barrier, Tree) => 2.0 * ts * lg,
        (Operation::Scan, Chain) => {
            if k == 0 {
                0.0
            } else {
                let s = chain_segments(m_bytes) as f64;
                let seg = m / s;
                // p − 1 links of the chain, 2(p − 1) − log p links in all, the longest
                // (p/2 − 1 → p/2) log p.
                let all = c.routed(seg, p - 1.0, 2.0 * (p - 1.0) - lg);
                all + (s - 1.0) * c.routed(seg, 1.0, lg)
            }
        }
        _ => return None,
    })
}

/// The segments the model prices [`Algorithm::Chain`] with for an `m_bytes` vector:
/// near-equal ones of at most 64 KiB — the algorithm's own on wires and with a core per
/// rank ([`Machine::chain_segments`](super::Machine::chain_segments): larger ones where
/// ranks share the cores of one machine).
pub fn chain_segments(m_bytes: usize) -> usize {
    m_bytes.div_ceil(CHAIN_SEGMENT_BYTES).max(1)
}

#[cfg(test)]
mod tests {
    use super::model_time;
    use crate::collectives::select::{model_traffic, model_work, CostModel, Traffic};
    use crate::collectives::select::{Algorithm, Operation};
    use crate::transport::Forwarding;

    /// The closed forms of the e-cube algorithms are the sums over their routes: every
    /// message priced by [`CostModel::message_over`] at its hamming distance, and the
    /// traffic split into one first link per message and the rest forwarded.
    #[test]
    fn routed_closed_forms_are_the_sums_over_the_routes() {
        let models = [
            CostModel::new(100.0, 1.0),
            CostModel::new(100.0, 1.0).with_hop(7.0),
            CostModel::new(3.0, 0.5)
                .with_hop(2.0)
                .with_forwarding(Forwarding::StoreAndForward),
            CostModel::new(3.0, 0.5).with_forwarding(Forwarding::StoreAndForward),
        ];
        for k in 0..=6u32 {
            let p = 1u32 << k;
            for m in [1usize, 1000, 200 << 10] {
                let close = |a: f64, b: f64, what: &str| {
                    assert!(
                        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                        "{what}, k = {k}: {a} vs {b}"
                    )
                };
                for c in models {
                    // From node 0 to every other node, one after the other.
                    let from_root: f64 = (1..p).map(|j| c.message_over(m, j.count_ones())).sum();
                    for (op, alg) in [
                        (Operation::Scatter, Algorithm::Ecube),
                        (Operation::Gather, Algorithm::Ecube),
                        (Operation::Alltoall, Algorithm::Pairwise),
                    ] {
                        close(
                            model_time(op, alg, k, m, c).unwrap(),
                            from_root,
                            "e-cube sum",
                        );
                    }
                    // The worst shift: q = 1, the longest route (p − 1 → 0) log p links.
                    let longest = (0..p)
                        .map(|i| c.message_over(m, (i ^ ((i + 1) % p)).count_ones()))
                        .fold(if k == 0 { c.message(m) } else { 0.0 }, f64::max);
                    let shift = model_time(Operation::Shift, Algorithm::Ecube, k, m, c).unwrap();
                    close(shift, longest, "shift");
                    // The chain: p − 1 pipeline stages, S segments.
                    if k > 0 {
                        let s = super::chain_segments(m);
                        let seg = m / s;
                        let stages: Vec<f64> = (1..p)
                            .map(|j| c.message_over(seg, ((j - 1) ^ j).count_ones()))
                            .collect();
                        let max = stages.iter().copied().fold(0.0, f64::max);
                        let want = stages.iter().sum::<f64>() + (s as f64 - 1.0) * max;
                        if m % s == 0 {
                            close(
                                model_time(Operation::Scan, Algorithm::Chain, k, m, c).unwrap(),
                                want,
                                "chain",
                            );
                        }
                    }
                }
                // Traffic: one first link per message, the rest of every route forwarded.
                let links_from_root: u32 = (1..p).map(u32::count_ones).sum();
                let mf = m as f64;
                let per_root = Traffic {
                    first_hop: mf * (p - 1) as f64,
                    forwarded: mf * (links_from_root - (p - 1)) as f64,
                };
                for op in [Operation::Scatter, Operation::Gather] {
                    assert_eq!(model_traffic(op, Algorithm::Ecube, k, m), Some(per_root));
                }
                let pairwise =
                    model_traffic(Operation::Alltoall, Algorithm::Pairwise, k, m).unwrap();
                close(
                    pairwise.first_hop,
                    per_root.first_hop * p as f64,
                    "pairwise first",
                );
                close(
                    pairwise.forwarded,
                    per_root.forwarded * p as f64,
                    "pairwise forwarded",
                );
                // The volume is the same in both algorithms and both regimes.
                assert_eq!(
                    model_work(Operation::Alltoall, Algorithm::Pairwise, k, m),
                    model_work(Operation::Alltoall, Algorithm::StoreForward, k, m)
                );
                for op in [Operation::Scatter, Operation::Gather] {
                    assert_eq!(
                        model_work(op, Algorithm::Ecube, k, m),
                        model_work(op, Algorithm::Hypercube, k, m)
                    );
                }
            }
        }
    }

    /// The neighbour-only algorithms do not depend on the regime or on `t_h`; the e-cube
    /// ones cost more under store-and-forward as soon as a route has two links.
    #[test]
    fn only_routed_algorithms_depend_on_the_regime() {
        let ct = CostModel::new(10.0, 1.0).with_hop(3.0);
        let sf = ct.with_forwarding(Forwarding::StoreAndForward);
        let plain = CostModel::new(10.0, 1.0);
        let routed = [
            (Operation::Scatter, Algorithm::Ecube),
            (Operation::Gather, Algorithm::Ecube),
            (Operation::Alltoall, Algorithm::Pairwise),
            (Operation::Alltoall, Algorithm::Ecube),
            (Operation::Shift, Algorithm::Ecube),
            (Operation::Scan, Algorithm::Chain),
        ];
        let ops = [
            Operation::Bcast,
            Operation::Reduce,
            Operation::Allgather,
            Operation::ReduceScatter,
            Operation::Allreduce,
            Operation::Scan,
            Operation::Scatter,
            Operation::Gather,
            Operation::Alltoall,
            Operation::Shift,
            Operation::Barrier,
        ];
        for k in 2..=5u32 {
            for op in ops {
                for &alg in op.algorithms() {
                    let t = |c| model_time(op, alg, k, 4096, c).unwrap();
                    if routed.contains(&(op, alg)) {
                        assert!(t(sf) > t(ct) && t(ct) > t(plain), "{op:?} {alg:?} k = {k}");
                    } else {
                        assert_eq!(t(sf), t(plain), "{op:?} {alg:?} k = {k}");
                        assert_eq!(t(ct), t(plain), "{op:?} {alg:?} k = {k}");
                    }
                }
            }
        }
    }

    /// The topology's mesh is the one the mesh algorithms lay out (`allgather/mesh.rs`):
    /// `2^floor(k/2)` rows of `2^ceil(k/2)` columns.
    #[test]
    fn mesh_shape_is_floor_by_ceil() {
        for k in 0..=hypercube_topology::MAX_DIM {
            assert_eq!(
                super::mesh_shape(k),
                (1 << (k / 2), 1 << k.div_ceil(2)),
                "k = {k}"
            );
        }
    }
}
