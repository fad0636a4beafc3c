//! What the algorithms cost, the inputs of the automatic choice (`policy.rs`): Grama's
//! model time ([`model_time`], with the [`CostModel`] parameters and routing regime), the
//! bytes an algorithm moves ([`model_work`], split into first-link and forwarded bytes by
//! [`model_traffic`]), and what is known of this [`machine`].

use hypercube_topology::mesh_shape_for;

use super::all_port::all_port_time;
use super::names::{Algorithm, Operation};
use crate::transport::Forwarding;

/// The textbook's communication cost parameters and routing regime (Grama §2.5.1): a
/// message of `m` bytes between neighbours costs `t_s + t_w m`, and one routed over
/// `l ≥ 1` links costs
///
/// - cut-through (eq. 2.3): `t_s + t_w m + (l − 1) t_h`,
/// - store-and-forward (eq. 2.2): `t_s + t_w m + (l − 1)(t_h + t_w m)`.
///
/// These are the book's equations with the first link's header time inside `t_s`: the
/// book's neighbour message (`l = 1`) costs `t_s + t_w m` in chapter 4, where eq. 2.2/2.3
/// give `t_s + t_w m + t_h`, so here `t_h` is charged per link *beyond the first*, and the
/// `t_s` of this model is the book's `t_s + t_h`. Every neighbour-only algorithm then costs
/// exactly its chapter 4 expression in both regimes, and with `t_h = 0` under cut-through
/// the cost does not depend on the distance (chapter 4's assumption). Time units are the
/// caller's (seconds, microseconds, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Start-up time per message (including the first link's header time).
    pub t_s: f64,
    /// Transfer time per byte.
    pub t_w: f64,
    /// Per-hop (header) time of every link of a route beyond the first.
    pub t_h: f64,
    /// The routing regime of messages between non-neighbours.
    pub forwarding: Forwarding,
}

impl CostModel {
    /// `t_s` and `t_w`, no per-hop time, cut-through: every message costs `t_s + t_w m`
    /// whatever the distance (chapter 4's assumption).
    pub const fn new(t_s: f64, t_w: f64) -> CostModel {
        CostModel {
            t_s,
            t_w,
            t_h: 0.0,
            forwarding: Forwarding::CutThrough,
        }
    }

    /// The same model with per-hop time `t_h`.
    pub const fn with_hop(self, t_h: f64) -> CostModel {
        CostModel { t_h, ..self }
    }

    /// The same model under the routing regime `forwarding`.
    pub const fn with_forwarding(self, forwarding: Forwarding) -> CostModel {
        CostModel { forwarding, ..self }
    }

    /// The cost of one message of `len_bytes` between neighbours: `t_s + t_w m`.
    pub fn message(&self, len_bytes: usize) -> f64 {
        self.routed(len_bytes as f64, 1.0, 1.0)
    }

    /// The cost of one message of `len_bytes` over `links` links in this model's regime
    /// (see [`CostModel`]); `links = 0` (a node's message to itself) costs as one link.
    pub fn message_over(&self, len_bytes: usize, links: u32) -> f64 {
        self.routed(len_bytes as f64, 1.0, links.max(1) as f64)
    }

    /// What a route's every link beyond the first adds to a message of `m` bytes: `t_h`
    /// under cut-through, `t_h + t_w m` under store-and-forward.
    fn extra_link(&self, m: f64) -> f64 {
        match self.forwarding {
            Forwarding::CutThrough => self.t_h,
            Forwarding::StoreAndForward => self.t_h + self.t_w * m,
        }
    }

    /// `messages` messages of `m` bytes, one after the other, whose routes have `links`
    /// links in all (at least one each): `messages (t_s + t_w m)` plus the extra links'
    /// cost. The hop terms are linear in the links, so only their sum matters.
    fn routed(&self, m: f64, messages: f64, links: f64) -> f64 {
        messages * (self.t_s + self.t_w * m) + (links - messages) * self.extra_link(m)
    }
}

/// The bytes an algorithm moves through the links ([`model_traffic`]), split by what the
/// link's sender does with them: bytes on the **first link** of their message's route
/// (sent by the node that holds them, a copy out of the application), and bytes on
/// every **later link** (passed on by an intermediate node's transport, which may be
/// cheaper: [`Machine::forward_copy`]). An algorithm that talks to neighbours only has
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
///   `(n + d)(d t_s + t_w m/n)` (`esbt::pipelined_time`); the all-port scatter and gather
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
        (Operation::Bcast | Operation::Reduce, AllPort) => {
            crate::collectives::esbt::pipelined_time(m_bytes, k, c, false)
        }
        (Operation::Allreduce, AllPort) => 2.0 * (ts * lg * lg + tw * (m / p) * (p - 1.0)),
        (Operation::Alltoall, StoreForward) => (ts + tw * m * p / 2.0) * lg,
        (Operation::Alltoall, Pairwise | Ecube)
        | (Operation::Scatter | Operation::Gather, Ecube) => c.routed(m, p - 1.0, all_hops),
        (Operation::Alltoall, Ring) => (ts + tw * m * p / 2.0) * (p - 1.0),
        (Operation::Alltoall, Mesh) => (ts + tw * m * p / 2.0) * mesh_steps(),
        (Operation::Shift, Ecube) => c.routed(m, 1.0, lg.max(1.0)),
        (Operation::Shift, GrayRing) => (ts + tw * m) * (2.0 * lg - 1.0).max(lg),
        (Operation::Barrier, Hypercube) => ts * lg,
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

/// The segments of [`Algorithm::Chain`] for an `m_bytes` vector: near-equal ones of at
/// most 64 KiB (the algorithm splits its vector this way too).
pub fn chain_segments(m_bytes: usize) -> usize {
    m_bytes.div_ceil(CHAIN_SEGMENT_BYTES).max(1)
}

/// The bytes `alg` moves through the links for `op` on `2^k` nodes, summed over every link
/// a message crosses (a message routed over h links counts h times); `m_bytes` as in
/// [`model_time`]. The same in both routing regimes: a forwarded message crosses every
/// link of its route either way. On a machine whose cores are shared by the ranks, every
/// byte costs copies on some core, so this volume bounds the time from below (see
/// [`selection_time`]). [`model_traffic`] splits it into first-link and forwarded bytes.
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
        (Operation::Barrier, Hypercube) => direct(0.0),
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

/// What the automatic choice knows of the machine: Grama's parameters and the routing
/// regime in force, the cost of moving one byte through a link in CPU time (sent by its
/// owner, or passed on by an intermediate node), and the cores the ranks share.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Machine {
    /// `t_s`, `t_w` and `t_h` of the critical path, in seconds (per byte for `t_w`), and
    /// the routing regime ([`Forwarding::current`] for [`machine`]).
    pub model: CostModel,
    /// CPU seconds per byte moved over a link by the node that sends it, both ends'
    /// copies together.
    pub copy: f64,
    /// CPU seconds per byte that an intermediate node passes on along an e-cube route
    /// ([`Traffic::forwarded`]); [`Machine::copy`] unless a cheaper (e.g. zero-copy)
    /// forwarding path is measured.
    pub forward_copy: f64,
    /// Cores the ranks of the job share.
    pub cores: usize,
    /// Seconds per byte of the job's links as measured at start-up (the slowest of node
    /// 0's; `boot::probe`), or `None` where nothing was measured (the in-process
    /// transport, a job of one node, `HYPERCUBE_LINK_PROBE=0`).
    pub link_tw: Option<f64>,
}

impl Machine {
    /// How much slower than a copy a link must measure to count as a wire of its own
    /// rather than a memcpy on the shared cores (loopback measures 1–3 copies' worth).
    pub const WIRE_FACTOR: f64 = 10.0;

    /// The links' seconds per byte when they are wires — slower than
    /// [`Machine::WIRE_FACTOR`] copies — else `None` (loopback, or not measured).
    pub fn wire_tw(&self) -> Option<f64> {
        self.link_tw
            .filter(|&tw| tw.is_finite() && tw >= Self::WIRE_FACTOR * self.copy)
    }

    /// Are the links of a subcube of dimension `k ≥ 1` wires ([`Machine::wire_tw`]), each
    /// node's an independent resource that can be busy at once with the others (the
    /// all-port model)? Then [`selection_time`] prices the all-port algorithms by
    /// [`all_port_time`], and the rules measured where a link is a copy on the shared
    /// cores do not apply. What the cores can copy still bounds every algorithm (the work
    /// term of [`selection_time`]): on the emulated 4-cube at 1 Gbit/s, 16 ranks on two
    /// cores cannot feed all 64 links, and the all-port all-to-all still measured 1.3–2.2×
    /// faster than store-and-forward there (docs/perf/cubenet.md), moving the same bytes
    /// in fewer copies.
    pub fn links_bound(&self, k: u32) -> bool {
        k > 0 && self.wire_tw().is_some()
    }
}

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
    let mut t = model_time(op, alg, k, m_bytes, machine.model)?;
    if machine.links_bound(k) {
        if let Some(all) = all_port_time(op, alg, k, m_bytes, machine.model) {
            t = all;
        }
    }
    let shared = machine.cores.clamp(1, 1 << k.min(30)) as f64;
    let work = model_traffic(op, alg, k, m_bytes).map_or(0.0, |w| {
        w.first_hop * machine.copy + w.forwarded * machine.forward_copy
    }) / shared;
    Some(t.max(work))
}

/// This machine, from the environment (see the module docs), read once per process:
/// `HYPERCUBE_MODEL_TS_US` (default 150), `HYPERCUBE_MODEL_TW_NS` (1.2),
/// `HYPERCUBE_MODEL_TH_US` (0: the per-hop time has not been measured on the development
/// VM), the regime of `HYPERCUBE_FORWARDING` ([`Forwarding::current`]),
/// `HYPERCUBE_MODEL_COPY_NS` (0.55 ns per byte, fitted to the scans at p = 4..16 on the
/// development VM), `HYPERCUBE_MODEL_FORWARD_COPY_NS` (the copy cost unless set) and
/// `HYPERCUBE_MODEL_CORES`, which `hcrun` sets for every rank to the launching machine's
/// available parallelism (else this machine's), so that every member chooses alike.
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
        let copy_ns = get("HYPERCUBE_MODEL_COPY_NS", 0.55);
        let mut m = Machine {
            model: CostModel::new(
                get("HYPERCUBE_MODEL_TS_US", 150.0) * 1e-6,
                get("HYPERCUBE_MODEL_TW_NS", 1.2) * 1e-9,
            )
            .with_hop(get("HYPERCUBE_MODEL_TH_US", 0.0) * 1e-6)
            .with_forwarding(Forwarding::current()),
            copy: copy_ns * 1e-9,
            forward_copy: get("HYPERCUBE_MODEL_FORWARD_COPY_NS", copy_ns) * 1e-9,
            cores,
            link_tw: crate::boot::probe::measured(),
        };
        // A wire is no faster than the probe measured it.
        if let Some(tw) = m.wire_tw() {
            m.model.t_w = m.model.t_w.max(tw);
        }
        m
    })
}

#[cfg(test)]
mod tests {
    use super::{model_time, model_traffic, model_work, CostModel, Forwarding, Traffic};
    use crate::collectives::select::{Algorithm, Operation};

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
