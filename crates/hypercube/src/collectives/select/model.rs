//! What the algorithms cost, the inputs of the automatic choice (`policy.rs`): Grama's
//! model time ([`model_time`], with the [`CostModel`] parameters), the bytes an algorithm
//! moves ([`model_work`]), and what is known of this [`machine`].

use hypercube_topology::mesh_shape_for;

use super::names::{Algorithm, Operation};

/// The textbook's communication cost parameters: a message of `m` bytes costs
/// `t_s + t_w * m` (time units are the caller's: seconds, microseconds, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Start-up time per message.
    pub t_s: f64,
    /// Transfer time per byte.
    pub t_w: f64,
}

impl CostModel {
    /// The cost of one message of `len_bytes`.
    pub fn message(&self, len_bytes: usize) -> f64 {
        self.t_s + self.t_w * len_bytes as f64
    }
}

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
/// its worst case (eq. 4.11's bound).
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
        (Operation::Allgather, Mesh) => ts * mesh_steps() + tw * m * (p - 1.0),
        (Operation::ReduceScatter, Hypercube) => ts * lg + tw * (m / p) * (p - 1.0),
        (Operation::ReduceScatter, Ring) => (ts + tw * m / p) * (p - 1.0),
        (Operation::Alltoall, StoreForward) => (ts + tw * m * p / 2.0) * lg,
        (Operation::Alltoall, Pairwise) => (ts + tw * m) * (p - 1.0),
        (Operation::Alltoall, Ring) => (ts + tw * m * p / 2.0) * (p - 1.0),
        (Operation::Alltoall, Mesh) => (ts + tw * m * p / 2.0) * mesh_steps(),
        (Operation::Shift, Ecube) => ts + tw * m,
        (Operation::Scatter | Operation::Gather, Ecube) => (ts + tw * m) * (p - 1.0),
        (Operation::Shift, GrayRing) => (ts + tw * m) * (2.0 * lg - 1.0).max(lg),
        (Operation::Barrier, Hypercube) => ts * lg,
        (Operation::Scan, Chain) => {
            if k == 0 {
                0.0
            } else {
                let s = chain_segments(m_bytes) as f64;
                (p - 2.0 + s) * (ts + tw * m / s)
            }
        }
        _ => return None,
    })
}

/// The segments of [`Algorithm::Chain`] for an `m_bytes` vector: near-equal ones of at
/// most 64 KiB (the algorithm splits its vector this way too).
pub fn chain_segments(m_bytes: usize) -> usize {
    m_bytes.div_ceil(CHAIN_SEGMENT_BYTES).max(1)
}

/// The bytes `alg` moves through the links for `op` on `2^k` nodes, summed over every link
/// a message crosses (a message routed over h links counts h times); `m_bytes` as in
/// [`model_time`]. On a machine whose cores are shared by the ranks, every byte costs
/// copies on some core, so this volume bounds the time from below (see
/// [`choose`](super::choose)).
pub fn model_work(op: Operation, alg: Algorithm, k: u32, m_bytes: usize) -> Option<f64> {
    use Algorithm::*;
    let m = m_bytes as f64;
    let p = (1u64 << k) as f64;
    let lg = k as f64;
    // Σ over the p nodes of the hops to every other node: p · (p/2) log p.
    let all_pairs_hops = p * p / 2.0 * lg;
    Some(match (op, alg) {
        (Operation::Bcast | Operation::Reduce, Hypercube) => m * (p - 1.0),
        (Operation::Bcast, ScatterAllgather) | (Operation::Reduce, ReduceScatterGather) => {
            m / p * p / 2.0 * lg + m * (p - 1.0)
        }
        (Operation::Allreduce | Operation::Scan, Hypercube) => m * p * lg,
        (Operation::Allreduce, ReduceScatterAllgather | Ring) => 2.0 * m * (p - 1.0),
        (Operation::Allgather, Hypercube | Ring | Mesh) => m * p * (p - 1.0),
        (Operation::ReduceScatter, Hypercube | Ring) => m * (p - 1.0),
        (Operation::Scatter | Operation::Gather, Hypercube | Ecube) => m * p / 2.0 * lg,
        (Operation::Alltoall, StoreForward | Pairwise) => m * all_pairs_hops,
        (Operation::Alltoall, Ring) => m * p / 2.0 * (p - 1.0) * p,
        (Operation::Alltoall, Mesh) => {
            let (r, c) = mesh_shape(k);
            m * p / 2.0 * ((r + c) as f64 - 2.0) * p
        }
        (Operation::Shift, Ecube | GrayRing) => m * p * lg,
        (Operation::Barrier, Hypercube) => 0.0,
        (Operation::Scan, Chain) => {
            let hops: u32 = (1..(1u32 << k)).map(|j| ((j - 1) ^ j).count_ones()).sum();
            m * hops as f64
        }
        _ => return None,
    })
}

/// What the automatic choice knows of the machine: Grama's parameters, the cost of moving
/// one byte through a link in CPU time, and the cores the ranks share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    /// `t_s` and `t_w` of the critical path, in seconds (per byte for `t_w`).
    pub model: CostModel,
    /// CPU seconds per byte moved over a link, both ends' copies together.
    pub copy: f64,
    /// Cores the ranks of the job share.
    pub cores: usize,
}

/// The time the automatic choice compares: the larger of Grama's model time (the
/// critical path, every node on its own processor) and the work bound — the bytes
/// [`model_work`] moves, at [`Machine::copy`] each, spread over the cores the ranks share
/// (at most one per rank). With a core per rank the first term decides; with 16 ranks on
/// 2 cores, long messages are decided by the volume. On the development VM both terms
/// predict the measured scan within 10% (docs/perf/analysis.md).
pub fn selection_time(
    op: Operation,
    alg: Algorithm,
    k: u32,
    m_bytes: usize,
    machine: &Machine,
) -> Option<f64> {
    let t = model_time(op, alg, k, m_bytes, machine.model)?;
    let shared = machine.cores.clamp(1, 1 << k.min(30)) as f64;
    let work = model_work(op, alg, k, m_bytes).unwrap_or(0.0) * machine.copy / shared;
    Some(t.max(work))
}

/// This machine, from the environment (see the module docs), read once per process:
/// `HYPERCUBE_MODEL_TS_US` (default 150), `HYPERCUBE_MODEL_TW_NS` (1.2),
/// `HYPERCUBE_MODEL_COPY_NS` (0.55 ns per byte, fitted to the scans at p = 4..16 on the
/// development VM) and `HYPERCUBE_MODEL_CORES`, which `hcrun` sets for every rank to the
/// launching machine's available parallelism (else this machine's), so that every member
/// chooses alike.
pub fn machine() -> Machine {
    static MACHINE: std::sync::OnceLock<Machine> = std::sync::OnceLock::new();
    *MACHINE.get_or_init(|| {
        let get = |name: &str, default: f64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .unwrap_or(default)
        };
        let cores = std::env::var("HYPERCUBE_MODEL_CORES")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        Machine {
            model: CostModel {
                t_s: get("HYPERCUBE_MODEL_TS_US", 150.0) * 1e-6,
                t_w: get("HYPERCUBE_MODEL_TW_NS", 1.2) * 1e-9,
            },
            copy: get("HYPERCUBE_MODEL_COPY_NS", 0.55) * 1e-9,
            cores,
        }
    })
}

#[cfg(test)]
mod tests {
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
