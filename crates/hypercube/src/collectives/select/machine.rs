//! What is known of this machine ([`Machine`], [`machine`]), and what follows from it
//! alone: how many pieces the pipelined trees cut a part into ([`pieces`]).

use super::cost::CostModel;
use super::pipeline::pieces_for;
use crate::transport::Forwarding;

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
    /// ([`Traffic::forwarded`](super::Traffic::forwarded)); [`Machine::copy`] unless a cheaper (e.g. zero-copy)
    /// forwarding path is measured.
    pub forward_copy: f64,
    /// Cores the ranks of the job share.
    pub cores: usize,
    /// Seconds per byte of the job's links as measured at start-up (the slowest of node
    /// 0's; `boot::probe`), or `None` where nothing was measured (the in-process
    /// transport, a job of one node, `HYPERCUBE_LINK_PROBE=0`).
    pub link_tw: Option<f64>,
    /// Bytes a link passes at core speed after idle time — a shaper's token bucket (`tc
    /// tbf`'s burst, as on the emulated cube; a cloud VM's network credits) — as the
    /// start-up probe measured it (`boot::probe`: the smallest of node 0's links, at most
    /// 128 KiB), or `HYPERCUBE_MODEL_LINK_BURST`; 0 on a plain wire or where nothing was
    /// measured.
    pub link_burst: usize,
    /// Bytes up to which a message goes whole at once (`HYPERCUBE_EAGER_LIMIT`, 64 KiB by
    /// default; `Tuning::eager_limit`); a longer one waits for its receiver's
    /// clear-to-send, a round trip more.
    pub eager_limit: usize,
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
    /// all-port model)? Then [`selection_time`](super::selection_time) prices the all-port algorithms by
    /// [`all_port_time`](super::all_port_time), and the rules measured where a link is a copy on the shared
    /// cores do not apply. What the cores can copy still bounds every algorithm (the work
    /// term of [`selection_time`](super::selection_time)): on the emulated 4-cube at 1 Gbit/s, 16 ranks on two
    /// cores cannot feed all 64 links, and the all-port all-to-all still measured 1.3–2.2×
    /// faster than store-and-forward there (docs/perf/cubenet.md), moving the same bytes
    /// in fewer copies.
    pub fn links_bound(&self, k: u32) -> bool {
        k > 0 && self.wire_tw().is_some()
    }

    /// Can the links of a subcube of dimension `k` carry more than its ranks' cores can
    /// copy — `p k` directed wires at `1/t_w` bytes per second each against the cores'
    /// `cores/copy` ([`Machine::copy`], at most one core per rank)? Then the operation is
    /// bound by the cores although the links are wires: on the emulated 4-cube at 1 Gbit/s
    /// (64 links of 119 MB/s, 2 cores of 1.8 GB/s each) but not at 100 Mbit/s nor on the
    /// 3-cube at 1 Gbit/s (24 links).
    pub fn links_outrun_cores(&self, k: u32) -> bool {
        match self.wire_tw() {
            Some(tw) if k > 0 => {
                let p = (1u64 << k.min(30)) as f64;
                p * f64::from(k) / tw > self.shared_cores(k) / self.copy
            }
            _ => false,
        }
    }

    /// Do the ranks of a subcube of dimension `k` outnumber the cores ([`Machine::cores`])?
    /// Then a byte moved is a core's time, and the rules measured on shared cores apply
    /// (`policy.rs`, [`Machine::chain_segments`]).
    pub(crate) fn oversubscribed(&self, k: u32) -> bool {
        self.cores < 1usize << k.min(30)
    }

    /// How many ranks per core a subcube of dimension `k` has from which a message counts
    /// more as the wake-up it costs than as its place on the critical path
    /// ([`Machine::crowded`]).
    pub(crate) const CROWDED_RANKS_PER_CORE: usize = 4;

    /// Do the ranks of a subcube of dimension `k` outnumber the cores
    /// [`Machine::CROWDED_RANKS_PER_CORE`] to one or more (8 ranks on 2 cores)? There every
    /// message is a wake-up of a rank that waits for a core, and an algorithm with fewer
    /// messages beats one with a shorter critical path that the model prefers: the barrier
    /// up and down the tree (`2 (p − 1)` messages) against the exchange (`p log p`),
    /// `policy.rs`.
    pub(crate) fn crowded(&self, k: u32) -> bool {
        self.cores
            .max(1)
            .saturating_mul(Self::CROWDED_RANKS_PER_CORE)
            <= 1usize << k.min(30)
    }

    /// The cores the ranks of a subcube of dimension `k` share: [`Machine::cores`], at most
    /// one per rank.
    pub(crate) fn shared_cores(&self, k: u32) -> f64 {
        self.cores.clamp(1, 1 << k.min(30)) as f64
    }

    /// Does the all-to-all of `m_bytes` blocks on a subcube of dimension `k` send each block
    /// eagerly when it sends the blocks on their own (e-cube), but its store-and-forward
    /// steps (`m p/2` bytes) by rendezvous ([`Machine::eager_limit`])?
    pub fn blocks_eager_steps_not(&self, k: u32, m_bytes: usize) -> bool {
        let step = m_bytes.saturating_mul(1usize << k.min(30)) / 2;
        m_bytes <= self.eager_limit && step > self.eager_limit
    }

    /// The segments of the pipelined chain ([`Algorithm::Chain`](super::Algorithm::Chain))
    /// for an `m_bytes` vector on a subcube of dimension `k`. Where ranks share fewer
    /// cores than there are of them and the links are not wires, near-equal segments of a
    /// quarter of the vector, at least 64 KiB and at most 256 KiB: a segment's messages,
    /// wake-ups and scheduling cost more there than the pipeline's overlap saves, which
    /// the shared cores mostly do not have. Elsewhere [`chain_segments`](super::chain_segments)'s
    /// 64 KiB (what the model prices). Measured on loopback, 4–16 ranks on 2 cores, the
    /// chain's time per call and barrier with segments of 64 KiB / 256 KiB: 1 MiB
    /// 2.0–2.2 / 1.5–1.8 ms (d = 2), 6.7–7.0 / 3.7–3.9 (d = 3), 17.9–18.3 / 10.8–11.2
    /// (d = 4); at 256 KiB 64 KiB segments are the fastest of 64, 128, 256 and 512 KiB
    /// (`docs/perf/analysis.md`, "Session of 2026-11-27 (11:30– UTC)").
    pub fn chain_segments(&self, k: u32, m_bytes: usize) -> usize {
        let segment = if self.oversubscribed(k) && self.wire_tw().is_none() {
            (m_bytes / 4).clamp(super::model::CHAIN_SEGMENT_BYTES, 256 << 10)
        } else {
            super::model::CHAIN_SEGMENT_BYTES
        };
        m_bytes.div_ceil(segment).max(1)
    }

    /// How many pieces each of the d parts of an `m_bytes` pipelined broadcast or
    /// reduction over Johnsson & Ho's trees is cut into on this machine
    /// (`pipeline::pieces_for` under its model and [`Machine::link_burst`]).
    pub(crate) fn pieces(&self, m_bytes: usize, d: u32) -> usize {
        pieces_for(m_bytes, d, self.model, self.link_burst)
    }

    /// Do `bytes` sent over one link at once, on a link idle since the last call, go
    /// through at core speed ([`Machine::link_burst`])?
    pub fn within_burst(&self, bytes: usize) -> bool {
        bytes > 0 && bytes <= self.link_burst
    }
}

/// This machine, from the environment (see the module docs), read once per process:
/// `HYPERCUBE_MODEL_TS_US` (default 150), `HYPERCUBE_MODEL_TW_NS` (1.2),
/// `HYPERCUBE_MODEL_TH_US` (0: the per-hop time has not been measured on the development
/// VM), the regime of `HYPERCUBE_FORWARDING` ([`Forwarding::current`]),
/// `HYPERCUBE_MODEL_COPY_NS` (0.55 ns per byte, fitted to the scans at p = 4..16 on the
/// development VM), `HYPERCUBE_MODEL_FORWARD_COPY_NS` (the copy cost unless set) and
/// the cores: node 0's count (`HYPERCUBE_MODEL_CORES`, else its available parallelism),
/// which every node receives at start-up with the link probe's result (`boot::probe`), so
/// that every member chooses alike under any launcher — or, where nothing was received
/// (the in-process transport, a job of one node), this process's own.
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
        let cores = crate::boot::probe::job_cores().unwrap_or_else(local_cores);
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
            link_burst: crate::boot::probe::measured_burst(),
            eager_limit: crate::transport::tcp::Tuning::from_env(1)
                .map_or(64 << 10, |t| t.eager_limit),
        };
        // A wire is no faster than the probe measured it.
        if let Some(tw) = m.wire_tw() {
            m.model.t_w = m.model.t_w.max(tw);
        }
        m
    })
}

/// The cores this process counts for the job's ranks: `HYPERCUBE_MODEL_CORES`, which
/// `hcrun` sets for every rank to the launching machine's available parallelism, else this
/// machine's available parallelism (under Slurm, the CPUs allotted to the task). Node 0's
/// figure is the job's ([`machine`]).
pub(crate) fn local_cores() -> usize {
    std::env::var(crate::wire::control::ENV_MODEL_CORES)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How many pieces each of the d parts of an `m_bytes` pipelined broadcast or reduction
/// is cut into on this machine (`pipeline::pieces_for` under [`machine`]'s model and link
/// burst): the same on every node of a job.
pub(crate) fn pieces(m_bytes: usize, d: u32) -> usize {
    machine().pieces(m_bytes, d)
}
