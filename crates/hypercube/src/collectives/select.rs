//! Which algorithm runs: a per-call override ([`crate::collectives::Subcube::with`]), else a
//! per-job setting `HYPERCUBE_ALG_<OP>=<name>` (e.g. `HYPERCUBE_ALG_ALLREDUCE=ring`), else
//! the algorithm with the least [`selection_time`] (Grama's expressions, [`model_time`],
//! bounded below by the bytes moved over the cores the ranks share, [`model_work`]) under this
//! [`machine`]'s parameters: `t_s` = `HYPERCUBE_MODEL_TS_US` (default 150 µs) and `t_w` =
//! `HYPERCUBE_MODEL_TW_NS` per byte (default 1.2 ns), fitted to the `coll_bench` example at
//! p = 8 on the 2-core development VM (see `docs/collectives.md`), and the copy cost and
//! core count of [`Machine`]; ties as [`automatic`] says. Every input to the choice is the
//! same on every member, so all members choose alike.

use std::str::FromStr;

use crate::error::{Error, Result};
use crate::transport::local::CostModel;

/// An algorithm for a collective operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// Choose by message size and dimension (the default).
    Auto,
    /// The log p-step hypercube algorithm of the operation (binomial tree: Alg. 4.1–4.3,
    /// §4.4; recursive doubling/halving: Alg. 4.7–4.9, eq. 4.5).
    Hypercube,
    /// p-1 steps on the Gray-code ring (Alg. 4.4, 4.5; §4.5.1).
    Ring,
    /// Rows then columns of the embedded 2-D mesh (Alg. 4.6; §4.5.2).
    Mesh,
    /// Long broadcast: scatter then all-to-all broadcast (§4.7.1, eq. 4.13).
    ScatterAllgather,
    /// Long reduction: all-to-all reduction then gather (§4.7.2, Problem 4.17).
    ReduceScatterGather,
    /// Long all-reduce: all-to-all reduction then all-to-all broadcast (§4.7.3, eq. 4.14).
    ReduceScatterAllgather,
    /// All-to-all personalized in log p store-and-forward exchanges (§4.5.3, eq. 4.9).
    StoreForward,
    /// All-to-all personalized by pairwise XOR exchange (Alg. 4.10, eq. 4.10).
    Pairwise,
    /// Circular shift sent directly along e-cube routes (§4.6.2, eq. 4.12).
    Ecube,
    /// Circular shift as power-of-two shifts on the Gray-code ring (§4.6.2, eq. 4.11).
    GrayRing,
    /// Prefix sums along the chain of ranks 0 → … → p−1, pipelined in 64 KiB segments
    /// (the linear array of §4.1.1 with the pipelining of §4.2): fewer bytes than Alg. 4.9
    /// (≈ 2m(p−1) instead of m p log p), more steps.
    Chain,
}

impl FromStr for Algorithm {
    type Err = Error;
    fn from_str(s: &str) -> Result<Algorithm> {
        Ok(
            match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
                "auto" => Algorithm::Auto,
                "hypercube" => Algorithm::Hypercube,
                "ring" => Algorithm::Ring,
                "mesh" => Algorithm::Mesh,
                "scatter-allgather" => Algorithm::ScatterAllgather,
                "reduce-scatter-gather" => Algorithm::ReduceScatterGather,
                "reduce-scatter-allgather" => Algorithm::ReduceScatterAllgather,
                "store-forward" => Algorithm::StoreForward,
                "pairwise" => Algorithm::Pairwise,
                "ecube" => Algorithm::Ecube,
                "gray-ring" => Algorithm::GrayRing,
                "chain" => Algorithm::Chain,
                other => {
                    return Err(Error::Config(format!(
                    "unknown collective algorithm {other:?}; use one of auto, hypercube, ring, \
                     mesh, scatter-allgather, reduce-scatter-gather, reduce-scatter-allgather, \
                     store-forward, pairwise, ecube, gray-ring, chain"
                )))
                }
            },
        )
    }
}

/// A collective operation (for selection and job settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// One-to-all broadcast (`MPI_Bcast`).
    Bcast,
    /// All-to-one reduction (`MPI_Reduce`).
    Reduce,
    /// All-to-all broadcast (`MPI_Allgather`, `MPI_Allgatherv`).
    Allgather,
    /// All-to-all reduction (`MPI_Reduce_scatter`).
    ReduceScatter,
    /// All-reduce (`MPI_Allreduce`).
    Allreduce,
    /// Prefix sums (`MPI_Scan`, `MPI_Exscan`).
    Scan,
    /// Scatter (`MPI_Scatter`).
    Scatter,
    /// Gather (`MPI_Gather`, `MPI_Gatherv`).
    Gather,
    /// All-to-all personalized (`MPI_Alltoall`, `MPI_Alltoallv`).
    Alltoall,
    /// Circular q-shift.
    Shift,
    /// Barrier (`MPI_Barrier`).
    Barrier,
}

impl Operation {
    /// The suffix of the job setting `HYPERCUBE_ALG_<OP>`.
    pub fn env_name(self) -> &'static str {
        match self {
            Operation::Bcast => "BCAST",
            Operation::Reduce => "REDUCE",
            Operation::Allgather => "ALLGATHER",
            Operation::ReduceScatter => "REDUCE_SCATTER",
            Operation::Allreduce => "ALLREDUCE",
            Operation::Scan => "SCAN",
            Operation::Scatter => "SCATTER",
            Operation::Gather => "GATHER",
            Operation::Alltoall => "ALLTOALL",
            Operation::Shift => "SHIFT",
            Operation::Barrier => "BARRIER",
        }
    }

    /// The algorithms that implement the operation; the first is the default on ties.
    pub fn algorithms(self) -> &'static [Algorithm] {
        use Algorithm::*;
        match self {
            Operation::Bcast => &[Hypercube, ScatterAllgather],
            Operation::Reduce => &[Hypercube, ReduceScatterGather],
            Operation::Allgather => &[Hypercube, Ring, Mesh],
            Operation::ReduceScatter => &[Hypercube, Ring],
            Operation::Allreduce => &[Hypercube, ReduceScatterAllgather, Ring],
            Operation::Scan => &[Hypercube, Chain],
            Operation::Scatter | Operation::Gather => &[Hypercube, Ecube],
            Operation::Barrier => &[Hypercube],
            Operation::Alltoall => &[StoreForward, Pairwise, Ring, Mesh],
            Operation::Shift => &[Ecube, GrayRing],
        }
    }
}

/// The 2-D mesh a subcube of dimension `k` is viewed as: `(rows, cols)` =
/// `(2^floor(k/2), 2^ceil(k/2))`.
pub fn mesh_shape(k: u32) -> (u32, u32) {
    (1 << (k / 2), 1 << k.div_ceil(2))
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
    let (r, cols) = mesh_shape(k);
    let mesh_steps = (r + cols) as f64 - 2.0;
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
        (Operation::Allgather, Mesh) => ts * mesh_steps + tw * m * (p - 1.0),
        (Operation::ReduceScatter, Hypercube) => ts * lg + tw * (m / p) * (p - 1.0),
        (Operation::ReduceScatter, Ring) => (ts + tw * m / p) * (p - 1.0),
        (Operation::Alltoall, StoreForward) => (ts + tw * m * p / 2.0) * lg,
        (Operation::Alltoall, Pairwise) => (ts + tw * m) * (p - 1.0),
        (Operation::Alltoall, Ring) => (ts + tw * m * p / 2.0) * (p - 1.0),
        (Operation::Alltoall, Mesh) => (ts + tw * m * p / 2.0) * mesh_steps,
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
    m_bytes.div_ceil(super::scan::chain::SEGMENT_BYTES).max(1)
}

/// The bytes `alg` moves through the links for `op` on `2^k` nodes, summed over every link
/// a message crosses (a message routed over h links counts h times); `m_bytes` as in
/// [`model_time`]. On a machine whose cores are shared by the ranks, every byte costs
/// copies on some core, so this volume bounds the time from below (see [`choose`]).
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

/// May the automatic choice pick `a` for `op` (a block or vector of `m_bytes`, on `2^k`
/// nodes)? Three measured rules, where the model and this machine disagree (commands in
/// docs/collectives.md and docs/perf/analysis.md):
///
/// - The two-phase broadcast and reduction (§4.7.1/§4.7.2) win in the book's model for
///   long messages, where p nodes move data in parallel; on a machine whose ranks share
///   two cores the extra steps only add work, and they measured slower than the one-phase
///   tree at every size and p = 8, 16. They stay available by request.
/// - Scatter and gather with more ranks than cores: the e-cube algorithm (every block sent
///   straight to or from the root, forwarded without copies, all sends started at once)
///   measured faster than the binomial tree for gather at every size and for scatter from
///   64 KiB on (the eager limit) at p = 4–16, although in Grama's single-port model the
///   root's p − 1 start-ups make it slower. Below 64 KiB, or with a core per rank, the
///   scatter is the tree of §4.4.
/// - Scan with more ranks than cores, from 64 KiB on: the pipelined chain. The work bound
///   already picks it for long vectors at p = 8 and 16; at p = 4 and at 64 KiB the model
///   charges each of its p − 2 + S steps a full `t_s` (a wake-up on this machine), while
///   in the pipeline the ranks are already awake, and it measured faster there too
///   (64 KiB: 92–126 µs vs 155–175 at p = 4, 307–319 vs 342–409 at p = 8; 1 MiB at p = 4:
///   1.04–1.08 ms vs 1.30–1.51).
fn auto_candidate(op: Operation, a: Algorithm, k: u32, m_bytes: usize, machine: &Machine) -> bool {
    let oversubscribed = machine.cores < (1usize << k.min(30));
    match (op, a) {
        (Operation::Bcast, Algorithm::ScatterAllgather)
        | (Operation::Reduce, Algorithm::ReduceScatterGather) => false,
        (Operation::Gather, Algorithm::Hypercube) => !oversubscribed,
        (Operation::Gather, Algorithm::Ecube) => oversubscribed,
        (Operation::Scatter, Algorithm::Hypercube) => !oversubscribed || m_bytes < 64 << 10,
        (Operation::Scatter, Algorithm::Ecube) => oversubscribed && m_bytes >= 64 << 10,
        (Operation::Scan, Algorithm::Hypercube) => !oversubscribed || m_bytes < 64 << 10,
        (Operation::Scan, Algorithm::Chain) => oversubscribed && m_bytes >= 64 << 10,
        _ => true,
    }
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

/// The job-wide `HYPERCUBE_ALG_<OP>` setting for `op`, read once per process.
fn job_setting(op: Operation) -> Option<String> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<&'static str, Option<String>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    cache
        .entry(op.env_name())
        .or_insert_with(|| std::env::var(format!("HYPERCUBE_ALG_{}", op.env_name())).ok())
        .clone()
}

/// Does `a` combine the terms of `op` out of rank order (a commutative ⊕ only)?
fn reorders(op: Operation, a: Algorithm) -> bool {
    matches!(op, Operation::ReduceScatter | Operation::Allreduce)
        && matches!(a, Algorithm::Ring | Algorithm::Mesh)
}

/// The algorithm that runs: `requested` unless `Auto`, else the job setting, else
/// [`automatic`] on this [`machine`]. `commutative` is false for a reduction whose operator
/// may not be reordered; the ring and mesh reductions are then excluded (an explicit
/// request is an error).
pub fn choose(
    op: Operation,
    requested: Algorithm,
    k: u32,
    m_bytes: usize,
    commutative: bool,
) -> Result<Algorithm> {
    let mut alg = requested;
    if alg == Algorithm::Auto {
        if let Some(v) = job_setting(op) {
            alg = v.parse()?;
        }
    }
    if alg != Algorithm::Auto {
        if !op.algorithms().contains(&alg) {
            return Err(Error::InvalidArgument(format!(
                "algorithm {alg:?} does not implement {op:?}; it has {:?}",
                op.algorithms()
            )));
        }
        if !commutative && reorders(op, alg) {
            return Err(Error::InvalidArgument(format!(
                "algorithm {alg:?} for {op:?} reorders the terms and needs a commutative \
                 operator; use Op::Commutative or another algorithm"
            )));
        }
        return Ok(alg);
    }
    Ok(automatic(op, k, m_bytes, commutative, &machine()))
}

/// The automatic choice on `machine`: the candidate with the least [`selection_time`];
/// between equal ones (equal volumes, when the work bound decides) the one with fewer
/// steps — the start-ups the volume does not hide — then the shorter critical path, then
/// the first listed in [`Operation::algorithms`].
/// Candidates exclude what a non-commutative operator cannot use and what the measured
/// rules of this machine rule out (see the module source, `auto_candidate`).
pub fn automatic(
    op: Operation,
    k: u32,
    m_bytes: usize,
    commutative: bool,
    machine: &Machine,
) -> Algorithm {
    let steps_model = CostModel { t_s: 1.0, t_w: 0.0 };
    let mut best = (
        (f64::INFINITY, f64::INFINITY, f64::INFINITY),
        op.algorithms()[0],
    );
    for &a in op.algorithms() {
        if !commutative && reorders(op, a) {
            continue;
        }
        if !auto_candidate(op, a, k, m_bytes, machine) {
            continue;
        }
        if let (Some(t), Some(steps), Some(path)) = (
            selection_time(op, a, k, m_bytes, machine),
            model_time(op, a, k, m_bytes, steps_model),
            model_time(op, a, k, m_bytes, machine.model),
        ) {
            if (t, steps, path) < best.0 {
                best = ((t, steps, path), a);
            }
        }
    }
    best.1
}
