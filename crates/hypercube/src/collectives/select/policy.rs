//! Which algorithm runs: the caller's request, else the job setting, else the automatic
//! choice by [`selection_time`] within the rules this machine was measured to need.

use super::all_port::all_port_time;
use super::cost::CostModel;
use super::machine::{machine, Machine};
use super::model::model_time;
use super::names::{Algorithm, Operation};
use super::traffic::model_traffic;
use crate::error::{Error, Result};

/// The time the automatic choice compares: the larger of Grama's model time (the
/// critical path, every node on its own processor, in the machine's routing regime) and
/// the work bound — the bytes [`model_traffic`] moves, at [`Machine::copy`] each on their
/// first link and [`Machine::forward_copy`] on every later one, spread over the cores the
/// ranks share (at most one per rank). With a core per rank the first term decides; with
/// 16 ranks on 2 cores, long messages are decided by the volume. On the development VM
/// both terms predict the measured scan within 10% (docs/perf/analysis.md).
pub fn selection_time(
    op: Operation,
    alg: Algorithm,
    k: u32,
    m_bytes: usize,
    machine: &Machine,
) -> Option<f64> {
    times(op, alg, k, m_bytes, machine).map(|(t, _)| t)
}

/// [`selection_time`], and the critical path ([`path_time`]) it bounds from below.
fn times(
    op: Operation,
    alg: Algorithm,
    k: u32,
    m_bytes: usize,
    machine: &Machine,
) -> Option<(f64, f64)> {
    let path = path_time(op, alg, k, m_bytes, machine)?;
    let work = model_traffic(op, alg, k, m_bytes).map_or(0.0, |w| {
        w.first_hop * machine.copy + w.forwarded * machine.forward_copy
    }) / machine.shared_cores(k);
    Some((path.max(work), path))
}

/// The critical path of `alg` for `op` on `machine`: where the links are wires
/// ([`Machine::links_bound`]) and `alg` drives them at once, its all-port time
/// ([`all_port_time`]); else Grama's one-port [`model_time`].
fn path_time(
    op: Operation,
    alg: Algorithm,
    k: u32,
    m_bytes: usize,
    machine: &Machine,
) -> Option<f64> {
    let one_port = model_time(op, alg, k, m_bytes, machine.model)?;
    if !machine.links_bound(k) {
        return Some(one_port);
    }
    Some(all_port_time(op, alg, k, m_bytes, machine.model).unwrap_or(one_port))
}

/// May the automatic choice pick `a` for `op` (a block or vector of `m_bytes`, on `2^k`
/// nodes)? Five measured rules, where the model and this machine disagree (commands in
/// docs/collectives.md and docs/perf/analysis.md). They were measured with the TCP
/// transport storing and forwarding whole frames at intermediate nodes, and they apply in
/// both routing regimes until they are measured again under cut-through; the routing
/// regime itself needs no rule — it is in [`model_time`] (the e-cube algorithms cost more
/// under store-and-forward) and so in [`selection_time`]:
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
///   scatter is the tree of §4.4. The model explains the "core per rank" half (the tree's
///   `t_s log p + t_w m (p − 1)` is below the e-cube time in both regimes) but not the
///   other: the two move the same bytes (`m (p/2) log p`), and only a
///   [`Machine::forward_copy`] below [`Machine::copy`] — forwarding without the copies
///   that the tree's intermediate nodes make — would tilt the work bound toward e-cube,
///   and even then, with the default parameters, the tree's shorter critical path keeps it
///   ahead. So the rule
///   stays.
/// - Scan with more ranks than cores, from 64 KiB on: the pipelined chain. The work bound
///   already picks it for long vectors at p = 8 and 16; at p = 4 and at 64 KiB the model
///   charges each of its p − 2 + S steps a full `t_s` (a wake-up on this machine), while
///   in the pipeline the ranks are already awake, and it measured faster there too
///   (64 KiB: 92–126 µs vs 155–175 at p = 4, 307–319 vs 342–409 at p = 8; 1 MiB at p = 4:
///   1.04–1.08 ms vs 1.30–1.51).
/// - All-to-all with more ranks than cores: store-and-forward, never pairwise. Both move the
///   same bytes, and at p ≥ 8 the work bound already picks store-and-forward (fewer steps);
///   at p = 4 the volume bound is below the path and the path prices pairwise lower from
///   ~100 KB under cut-through, but store-and-forward measured faster there: 256 KiB
///   835–889 µs against 1020–1034, 1 MiB 3.82–4.02 ms against 4.16–4.40 (three
///   alternations of `osu alltoall -a store-forward|pairwise` on a 2-cube, 2 cores).
///   Except where its blocks go eagerly and store-and-forward's steps (`m p/2` bytes) would
///   not ([`Machine::blocks_eager_steps_not`]): then e-cube, every block sent at once with
///   no clear-to-send to wait for. Measured in one job (`osu alltoall --alg store-forward
///   --vs-alg ecube`, 300 calls, three jobs; store-and-forward / e-cube): 64 KiB blocks
///   1.41–1.43 on 4 ranks, 1.14–1.19 on 8, 1.04–1.08 on 16; 16 KiB on 16 ranks 1.35–1.44;
///   where both are eager (16 KiB on 8 ranks) 0.90, both by rendezvous (256 KiB) 0.81–0.93.
///   With the rule (`--alg auto --vs-alg store-forward`, auto / store-and-forward): 0.64–0.69
///   at 64 KiB on 4 ranks, 0.68–0.73 at 32 KiB and 0.78–0.85 at 64 KiB on 8, 0.68–0.72 at
///   16 KiB, 0.76–0.78 at 32 KiB and 0.92–0.94 at 64 KiB on 16.
/// - Barrier with ranks outnumbering the cores four to one or more
///   ([`Machine::crowded`]), on loopback and on wires alike: up and down the tree, not the
///   exchange. The model prices the tree's `2 log p` start-ups against the exchange's
///   `log p`, but where 8 or 16 ranks share 2 cores each message is a wake-up of a rank
///   that waits for a core, and the tree sends `2 (p − 1)` of them against `p log p`.
///   Slowest rank, three alternations of `HYPERCUBE_ALG_BARRIER=hypercube|tree osu barrier
///   --per-rank` (AMD EPYC VM, 2 cores; exchange against tree): loopback 8 ranks 117–146
///   against 86–104 µs, 16 ranks 371–440 against 271–309; emulated 3-cube at 1 Gbit/s
///   138–168 against 113–119, 4-cube at 100 Mbit/s 486–516 against 324–394 (Open MPI's
///   recursive doubling 460–570 there). With 4 ranks on 2 cores the two tie (42–52
///   against 39–41), with 2 the exchange wins (8–18 against 11–12); on the Intel Xeon VM
///   before, 8 ranks tied and 16 gave the tree 10–20 %.
///
/// Where the links, not the cores, limit the operation ([`Machine::links_bound`]: the
/// probe found them slow), the rules that rest on shared cores do not apply, and the
/// all-port all-to-all ([`Algorithm::Ecube`], priced by
/// [`super::all_port_time`]) joins the candidates; elsewhere it is by request only,
/// since Grama's one-port model prices it as Alg. 4.10 and the shared-core rule above
/// already excludes that. Two rules hold there:
///
/// - All-to-all whose step fits the links' burst ([`Machine::within_burst`]: the `m p/2`
///   bytes each link carries in a call, in one step of store-and-forward or over the whole
///   call of e-cube): store-and-forward, never e-cube or pairwise. Both models charge the
///   link's `t_w` for those bytes, store-and-forward once per step; but a shaped link
///   passes them at core speed, so what is left is the start-ups, `log p` against `p − 1`.
///   Measured on the emulated cubes (`osu alltoall -a store-forward|ecube`, 96 KiB
///   bucket at 100 Mbit/s, 125 kB at 1 Gbit/s), store-and-forward against e-cube: 4-cube
///   100 Mbit/s 8 B / 1 KiB / 4 KiB 0.58 / 0.70 / 1.68 ms against 1.58 / 1.77 / 2.08,
///   3-cube 16 KiB 1.92 against 3.95 ms, 3-cube 1 Gbit/s 4 KiB / 16 KiB 0.27 / 0.46 ms
///   against 0.41 / 0.65; past the burst e-cube wins (4-cube 100 Mbit/s 16 KiB: 14.8
///   against 8.0 ms).
/// - All-reduce where the links outrun the cores ([`Machine::links_outrun_cores`]): not
///   the all-port algorithm, whose `2 d²` messages per rank on cores shared by 16 ranks
///   cost far more than its `t_s` each. On the emulated 4-cube at 1 Gbit/s (`osu allreduce
///   -a all-port|reduce-scatter-allgather --per-rank`, slowest rank) 64 KiB / 256 KiB /
///   1 MiB took 4.7 / 6.3 / 42 ms all-port against 1.8 / 3.9 / 18 ms for reduce-scatter +
///   allgather (Open MPI: 1.8 / 5.1 / 25 ms); where the links do not outrun the cores the
///   all-port algorithm stays the faster (3-cube at 1 Gbit/s, 1 MiB: 8.6 against 13.1 ms;
///   4-cube at 100 Mbit/s: 81 against 126 ms). The all-port reduce-scatter measured as the
///   model prices it against the hypercube's there (slower at 64 and 256 KiB, faster at
///   1 MiB: 126–137 against 205 ms) and needs no rule.
/// - Scan with more ranks than cores, from 64 KiB on (256 KiB on 16 ranks or more): the pipelined chain, as on shared
///   cores. The model prices the hypercube scan's `log p` steps at the links' `t_w` and
///   the chain's `p − 1` messages too, and so keeps the hypercube up to 256 KiB on the
///   4-cubes; but a shaped link passes a step of up to its burst at core speed, and the
///   hypercube scan's two messages and a combine per step on the shared cores cost more
///   than the chain's one each. Measured, the slowest rank's mean time, chain against
///   hypercube (`osu scan -m 65536:262144 -i 100 --alg chain|hypercube --per-rank`, one
///   job each), at 64 / 128 / 256 KiB: 3-cube at 1 Gbit/s 0.88 / 1.60 / 3.22 ms against
///   1.18 / 2.03 / 4.54; at 100 Mbit/s 5.43 / 13.9 / 23.7 against 5.44 / 10.9 / 43.8;
///   4-cube at 1 Gbit/s 2.67 / 3.53 / 7.33 against 2.77 / 4.91 / 12.7; at 100 Mbit/s
///   5.35 / 19.3 / 33.1 against 5.29 / 15.5 / 58.9 — the chain as fast or faster but at
///   128 KiB on the 100 Mbit/s links (past their 96 KiB bucket: 1.25–1.28× the hypercube's
///   time), where the rule loses. Below 64 KiB the hypercube is the faster on the 4-cubes.
///   On 16 ranks the rule starts at 256 KiB: the comparison with Open MPI at 2b499ba found
///   the 4-cube's 64 KiB scan at 1 Gbit/s 2.74× its time by the slowest rank (5.36 ms,
///   against 2.63 for the hypercube in the run before), and rechecked (`--per-rank`, one
///   job each), the chain's slowest rank and loop took 3.69 and 3.76 ms against the
///   hypercube's 2.11 and 2.77 — a 64 KiB vector is one segment, and the chain's 15 hops
///   one after another outweigh the hypercube's 4 steps (on the 3-cube, 7 hops against 3,
///   the chain's loop still 0.69–0.74 ms against 1.05–1.19). Below it the model chooses
///   (the hypercube on the 4-cubes).
fn auto_candidate(op: Operation, a: Algorithm, k: u32, m_bytes: usize, machine: &Machine) -> bool {
    let oversubscribed = machine.oversubscribed(k);
    // The rules that hold on loopback and on wires alike.
    match (op, a) {
        (Operation::Bcast, Algorithm::ScatterAllgather)
        | (Operation::Reduce, Algorithm::ReduceScatterGather) => return false,
        (Operation::Barrier, Algorithm::Hypercube) => return !machine.crowded(k),
        _ => {}
    }
    if machine.links_bound(k) {
        let step = m_bytes.saturating_mul(1usize << k.min(30)) / 2;
        // The scan rule on wires (above): the chain from 64 KiB, on 16 ranks or more
        // from 256 KiB.
        let chain_from = if k <= 3 { 64 << 10 } else { 256 << 10 };
        return match (op, a) {
            (Operation::Alltoall, Algorithm::Ecube | Algorithm::Pairwise) => {
                !machine.within_burst(step)
            }
            (Operation::Allreduce, Algorithm::AllPort) => !machine.links_outrun_cores(k),
            (Operation::Scan, Algorithm::Hypercube) => !oversubscribed || m_bytes < chain_from,
            _ => true,
        };
    }
    match (op, a) {
        (Operation::Gather, Algorithm::Hypercube) => !oversubscribed,
        (Operation::Gather, Algorithm::Ecube) => oversubscribed,
        (Operation::Scatter, Algorithm::Hypercube) => !oversubscribed || m_bytes < 64 << 10,
        (Operation::Scatter, Algorithm::Ecube) => oversubscribed && m_bytes >= 64 << 10,
        (Operation::Scan, Algorithm::Hypercube) => !oversubscribed || m_bytes < 64 << 10,
        (Operation::Scan, Algorithm::Chain) => oversubscribed && m_bytes >= 64 << 10,
        (Operation::Alltoall, a)
            if oversubscribed && machine.blocks_eager_steps_not(k, m_bytes) =>
        {
            a == Algorithm::Ecube
        }
        (Operation::Alltoall, Algorithm::Pairwise) => !oversubscribed,
        (Operation::Alltoall, Algorithm::Ecube) | (_, Algorithm::AllPort) => false,
        _ => true,
    }
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
    (matches!(op, Operation::ReduceScatter | Operation::Allreduce)
        && matches!(a, Algorithm::Ring | Algorithm::Mesh | Algorithm::AllPort))
        || (op == Operation::Reduce && a == Algorithm::AllPort)
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
    choose_on(op, requested, k, m_bytes, commutative, &machine())
}

/// [`choose`] on `machine` instead of this job's.
pub(crate) fn choose_on(
    op: Operation,
    requested: Algorithm,
    k: u32,
    m_bytes: usize,
    commutative: bool,
    machine: &Machine,
) -> Result<Algorithm> {
    let alg = requested_or_set(op, requested, commutative)?;
    if alg != Algorithm::Auto {
        return Ok(alg);
    }
    Ok(automatic(op, k, m_bytes, commutative, machine))
}

/// `requested` unless `Auto`, else the job setting `HYPERCUBE_ALG_<OP>`, else `Auto`:
/// checked to implement `op` (and, for a non-commutative ⊕, not to reorder it).
pub(crate) fn requested_or_set(
    op: Operation,
    requested: Algorithm,
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
    }
    Ok(alg)
}

/// The error of an operation's dispatch for an algorithm it has no arm for. [`choose`]
/// returns only algorithms that [`Operation::algorithms`] lists, so this is a bug in the
/// crate (a listed algorithm without code) — an error, never another algorithm in its place.
pub(crate) fn not_implemented(op: Operation, alg: Algorithm) -> Error {
    Error::InvalidArgument(format!(
        "{op:?} has no code for algorithm {alg:?}, which Operation::algorithms lists for it \
         (a bug in hypercube: the operation's dispatch lacks an arm)"
    ))
}

/// The automatic choice on `machine`: the candidate with the least [`selection_time`];
/// between equal ones (equal volumes, when the work bound decides) the one with fewer
/// steps — the start-ups the volume does not hide — then the shorter critical path (on
/// wires the all-port one: where 16 ranks on 2 cores bound pairwise and e-cube all-to-all
/// alike, e-cube, which keeps every link busy, measured 1.5× faster at 256 KiB on the
/// emulated 4-cube at 1 Gbit/s), then the first listed in [`Operation::algorithms`].
/// Candidates exclude what a non-commutative operator cannot use and what the measured
/// rules of this machine rule out (see the module source, `auto_candidate`).
pub fn automatic(
    op: Operation,
    k: u32,
    m_bytes: usize,
    commutative: bool,
    machine: &Machine,
) -> Algorithm {
    let steps_model = CostModel::new(1.0, 0.0);
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
        if let (Some((t, path)), Some(steps)) = (
            times(op, a, k, m_bytes, machine),
            model_time(op, a, k, m_bytes, steps_model),
        ) {
            if (t, steps, path) < best.0 {
                best = ((t, steps, path), a);
            }
        }
    }
    best.1
}
