//! The cycle model of the thesis (§1.3, chapter 5); the simulation engine is `model/engine.rs`.
//!
//! * Time advances in synchronous *cycles*. In one cycle a node transmits at
//!   most one packet on one of its links and may receive several packets.
//! * Buffers are unbounded and all packets have the same size (one packet
//!   crosses one link in one cycle).
//! * Every packet moves along a minimal (Hamming) path: the next hop always
//!   corrects one of the dimensions in which the current node and the
//!   destination still differ.
//!
//! The engine asks a [`Router`] for at most one [`Move`] per node and cycle,
//! validates it against the rules above and applies it. Two [`Semantics`] are
//! provided: the model as the thesis states it ([`Semantics::Synchronous`]) and
//! what the appendix C programs actually compute ([`Semantics::Appendix`]).

use std::collections::VecDeque;
use std::fmt;

use hypercube_topology::{hamming, neighbor, NodeId};
use rand_chacha::ChaCha8Rng;

use crate::workload::Workload;

mod engine;
pub use engine::{simulate, SimOptions, SimResult};

/// Fixed-point unit of [`Network::flow`] (divisible by 1 … 10).
pub const FLOW_UNIT: u64 = 2520;

/// Index of a packet in [`Network::packet`].
pub type PacketId = u32;

/// How a cycle is executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Semantics {
    /// The model stated in the thesis (§1.3): every node decides on the state
    /// at the start of the cycle, all moves happen at once, a packet advances
    /// at most one hop per cycle. Routers see the number of packets queued at
    /// each node ([`Network::load`] = [`Network::queue_len`]).
    Synchronous,
    /// What the appendix C listings really simulate: inside a cycle the nodes
    /// `0, 1, …, N-1` act one after the other and update the shared arrays in
    /// place, so a packet handed to a higher-numbered node can be forwarded
    /// again in the same cycle; and the load counter `mtotal` of a node is also
    /// incremented when the node receives a packet addressed to itself
    /// ([`Network::load`] = that counter).
    Appendix,
}

/// One packet of a workload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Originating node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// Node currently holding the packet (equals `dst` once delivered).
    pub at: NodeId,
    /// Links crossed so far.
    pub hops: u32,
    /// Cycle (0-based) in which the packet reached its destination.
    pub delivered_at: Option<u64>,
}

impl Packet {
    /// Remaining Hamming distance to the destination.
    pub fn remaining(&self) -> u32 {
        hamming(self.at, self.dst)
    }
}

/// A routing decision of one node for one cycle: send `packet` across
/// dimension `dim`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The packet to transmit; it must be at the deciding node.
    pub packet: PacketId,
    /// The dimension (link) to use; bit `dim` must differ between the
    /// node and the packet's destination.
    pub dim: u32,
}

/// A violation of the cycle model (always a router bug) or a stalled run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// The router asked to move a packet that is not at the deciding node.
    NotHere {
        /// Deciding node.
        node: NodeId,
        /// Offending packet.
        packet: PacketId,
    },
    /// The chosen dimension does not shorten the distance to the destination.
    NotMinimal {
        /// Deciding node.
        node: NodeId,
        /// Offending packet.
        packet: PacketId,
        /// Offending dimension.
        dim: u32,
    },
    /// A node was scheduled twice in one cycle (it could send twice).
    TwiceInCycle {
        /// Offending node.
        node: NodeId,
    },
    /// A bookkeeping invariant failed (packets lost, duplicated, misplaced …).
    Invariant(String),
    /// No progress after the given number of cycles.
    Stalled(u64),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::NotHere { node, packet } => {
                write!(f, "node {node} tried to send packet {packet}, which it does not hold")
            }
            ModelError::NotMinimal { node, packet, dim } => write!(
                f,
                "node {node} tried to send packet {packet} across dimension {dim}, which is not on a minimal path"
            ),
            ModelError::TwiceInCycle { node } => write!(f, "node {node} was scheduled twice in one cycle"),
            ModelError::Invariant(s) => write!(f, "invariant violated: {s}"),
            ModelError::Stalled(c) => write!(f, "no completion after {c} cycles"),
        }
    }
}

impl std::error::Error for ModelError {}

/// The state of the hypercube during a simulation.
#[derive(Clone, Debug)]
pub struct Network {
    n: u32,
    semantics: Semantics,
    packets: Vec<Packet>,
    /// `buckets[node * (n + 1) + d]`: packets at `node` with remaining distance `d`, FIFO.
    buckets: Vec<VecDeque<PacketId>>,
    qlen: Vec<u32>,
    mtotal: Vec<u32>,
    /// `dest_count[node * N + dst]`: packets at `node` for `dst`.
    dest_count: Vec<u32>,
    /// `need[node * n + dim]`: distinct destinations with distance ≥ 2 at `node`
    /// whose minimal paths may use `dim`.
    need: Vec<u32>,
    /// `flow[node * n + dim]`: Σ over packets at `node` with distance `d ≥ 2`
    /// that may use `dim` of `FLOW_UNIT / d`.
    flow: Vec<u64>,
    incoming: Vec<u32>,
    cycle: u64,
    delivered: usize,
    total_hops: u64,
}

impl Network {
    /// Builds the initial state of `workload` (every packet at its source;
    /// a node's packets are queued in the order of the workload).
    pub fn new(workload: &Workload, semantics: Semantics) -> Self {
        let n = workload.n;
        let nodes = 1usize << n;
        let mut net = Network {
            n,
            semantics,
            packets: Vec::with_capacity(workload.packets.len()),
            buckets: vec![VecDeque::new(); nodes * (n as usize + 1)],
            qlen: vec![0; nodes],
            mtotal: vec![0; nodes],
            dest_count: vec![0; nodes * nodes],
            need: vec![0; nodes * n as usize],
            flow: vec![0; nodes * n as usize],
            incoming: vec![0; nodes],
            cycle: 0,
            delivered: 0,
            total_hops: 0,
        };
        for &(src, dst) in &workload.packets {
            let id = net.packets.len() as PacketId;
            net.packets.push(Packet {
                src,
                dst,
                at: src,
                hops: 0,
                delivered_at: None,
            });
            net.total_hops += hamming(src, dst) as u64;
            if src == dst {
                net.packets[id as usize].delivered_at = Some(0);
                net.delivered += 1;
            } else {
                net.enqueue(src, id);
            }
        }
        net
    }

    fn enqueue(&mut self, node: NodeId, id: PacketId) {
        let p = &self.packets[id as usize];
        let (dst, d) = (p.dst, hamming(node, p.dst));
        self.buckets[node as usize * (self.n as usize + 1) + d as usize].push_back(id);
        self.qlen[node as usize] += 1;
        self.mtotal[node as usize] += 1;
        if d >= 2 {
            let w = FLOW_UNIT / d as u64;
            self.for_dims(node ^ dst, |net, k| {
                net.flow[node as usize * net.n as usize + k as usize] += w
            });
        }
        let c = &mut self.dest_count[(node as usize) << self.n | dst as usize];
        *c += 1;
        if *c == 1 && d >= 2 {
            self.for_dims(node ^ dst, |net, k| {
                net.need[node as usize * net.n as usize + k as usize] += 1
            });
        }
    }

    fn dequeue(&mut self, node: NodeId, id: PacketId) -> bool {
        let p = &self.packets[id as usize];
        let (dst, d) = (p.dst, hamming(node, p.dst));
        let b = &mut self.buckets[node as usize * (self.n as usize + 1) + d as usize];
        let Some(pos) = b.iter().position(|&x| x == id) else {
            return false;
        };
        b.remove(pos);
        self.qlen[node as usize] -= 1;
        self.mtotal[node as usize] = self.mtotal[node as usize].saturating_sub(1);
        if d >= 2 {
            let w = FLOW_UNIT / d as u64;
            self.for_dims(node ^ dst, |net, k| {
                net.flow[node as usize * net.n as usize + k as usize] -= w
            });
        }
        let c = &mut self.dest_count[(node as usize) << self.n | dst as usize];
        *c -= 1;
        if *c == 0 && d >= 2 {
            self.for_dims(node ^ dst, |net, k| {
                net.need[node as usize * net.n as usize + k as usize] -= 1
            });
        }
        true
    }

    fn for_dims(&mut self, mut bits: u32, mut f: impl FnMut(&mut Self, u32)) {
        while bits != 0 {
            let k = bits.trailing_zeros();
            f(self, k);
            bits &= bits - 1;
        }
    }

    /// Moves a packet one hop (after validation). Returns the receiving node.
    fn apply(&mut self, node: NodeId, mv: Move) -> Result<NodeId, ModelError> {
        self.validate(node, mv)?;
        if !self.dequeue(node, mv.packet) {
            return Err(ModelError::Invariant(format!(
                "packet {} missing from the queue of node {node}",
                mv.packet
            )));
        }
        let to = neighbor(node, mv.dim);
        let cycle = self.cycle;
        let p = &mut self.packets[mv.packet as usize];
        p.at = to;
        p.hops += 1;
        if p.at == p.dst {
            p.delivered_at = Some(cycle);
            self.delivered += 1;
            // The appendix's `br2: src[na].mtotal += 1` also runs for j == 1.
            self.mtotal[to as usize] += 1;
        } else {
            self.enqueue(to, mv.packet);
        }
        Ok(to)
    }

    fn validate(&self, node: NodeId, mv: Move) -> Result<(), ModelError> {
        let p = self
            .packets
            .get(mv.packet as usize)
            .ok_or(ModelError::NotHere {
                node,
                packet: mv.packet,
            })?;
        if p.at != node || p.delivered_at.is_some() {
            return Err(ModelError::NotHere {
                node,
                packet: mv.packet,
            });
        }
        if mv.dim >= self.n || (p.at ^ p.dst) >> mv.dim & 1 == 0 {
            return Err(ModelError::NotMinimal {
                node,
                packet: mv.packet,
                dim: mv.dim,
            });
        }
        Ok(())
    }

    /// Dimension of the hypercube.
    pub fn dim(&self) -> u32 {
        self.n
    }
    /// Number of nodes, `2^n`.
    pub fn nodes(&self) -> u32 {
        1 << self.n
    }
    /// The semantics this network is simulated under.
    pub fn semantics(&self) -> Semantics {
        self.semantics
    }
    /// Current cycle (0-based; the number of completed cycles).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }
    /// All packets of the workload.
    pub fn packets(&self) -> &[Packet] {
        &self.packets
    }
    /// One packet.
    pub fn packet(&self, id: PacketId) -> &Packet {
        &self.packets[id as usize]
    }
    /// Packets not yet delivered.
    pub fn remaining(&self) -> usize {
        self.packets.len() - self.delivered
    }
    /// Sum over packets of their Hamming distances (the hops any minimal routing makes).
    pub fn total_hops(&self) -> u64 {
        self.total_hops
    }
    /// Packets queued at `node` (still to be transmitted by it).
    pub fn queue_len(&self, node: NodeId) -> u32 {
        self.qlen[node as usize]
    }
    /// The load figure the thesis's ALG I / ALG II compare: the queue length
    /// under [`Semantics::Synchronous`], the appendix's `mtotal` counter under
    /// [`Semantics::Appendix`].
    pub fn load(&self, node: NodeId) -> u32 {
        match self.semantics {
            Semantics::Synchronous => self.qlen[node as usize],
            Semantics::Appendix => self.mtotal[node as usize],
        }
    }
    /// Packets other nodes already decided to send to `node` in the current
    /// cycle (only non-zero during the decision phase under
    /// [`Semantics::Synchronous`]).
    pub fn incoming(&self, node: NodeId) -> u32 {
        self.incoming[node as usize]
    }
    /// Packets at `node` with remaining distance `d`, in queue order.
    pub fn bucket(&self, node: NodeId, d: u32) -> &VecDeque<PacketId> {
        &self.buckets[node as usize * (self.n as usize + 1) + d as usize]
    }
    /// Largest remaining distance among the packets at `node` (0 if empty).
    pub fn max_dist(&self, node: NodeId) -> u32 {
        (1..=self.n)
            .rev()
            .find(|&d| !self.bucket(node, d).is_empty())
            .unwrap_or(0)
    }
    /// The packet `node` sends first among those at remaining distance `d`:
    /// the oldest one under [`Semantics::Synchronous`]; under
    /// [`Semantics::Appendix`] the one with the lowest destination address
    /// (the listings scan `src[i].dest[0..N-1]` in ascending order and take
    /// the first destination with messages left).
    pub fn head(&self, node: NodeId, d: u32) -> Option<PacketId> {
        let b = self.bucket(node, d);
        match self.semantics {
            Semantics::Synchronous => b.front().copied(),
            Semantics::Appendix => b
                .iter()
                .copied()
                .min_by_key(|&id| self.packets[id as usize].dst),
        }
    }
    /// The head of the farthest-first ordered list of `node` (§4.2):
    /// [`Network::head`] of the largest remaining distance.
    pub fn farthest(&self, node: NodeId) -> Option<PacketId> {
        (1..=self.n).rev().find_map(|d| self.head(node, d))
    }
    /// Number of distinct destinations, at Hamming distance ≥ 2 from `node`,
    /// for which `node` holds packets whose minimal paths may use dimension
    /// `dim` — the count the appendix's ALG II accumulates in `add`.
    pub fn need(&self, node: NodeId, dim: u32) -> u32 {
        self.need[node as usize * self.n as usize + dim as usize]
    }
    /// Expected number of packets `node` will eventually forward across `dim`
    /// (each packet at distance `d ≥ 2` that may use `dim` counts `1/d`), in
    /// units of [`FLOW_UNIT`].
    pub fn flow(&self, node: NodeId, dim: u32) -> u64 {
        self.flow[node as usize * self.n as usize + dim as usize]
    }
    /// Packets at `node` destined for `dst`.
    pub fn dest_count(&self, node: NodeId, dst: NodeId) -> u32 {
        self.dest_count[(node as usize) << self.n | dst as usize]
    }

    /// Checks the bookkeeping invariants: every undelivered packet is queued
    /// exactly once at the node holding it, in the bucket of its remaining
    /// distance; packets are conserved; counters agree with the queues.
    pub fn check(&self) -> Result<(), ModelError> {
        let inv = |s: String| Err(ModelError::Invariant(s));
        let mut seen = vec![false; self.packets.len()];
        let mut queued = 0usize;
        for node in 0..self.nodes() {
            let mut q = 0;
            for d in 1..=self.n {
                for &id in self.bucket(node, d) {
                    let p = &self.packets[id as usize];
                    if p.at != node || p.remaining() != d || p.delivered_at.is_some() {
                        return inv(format!("packet {id} misplaced at node {node}, bucket {d}"));
                    }
                    if std::mem::replace(&mut seen[id as usize], true) {
                        return inv(format!("packet {id} queued twice"));
                    }
                    q += 1;
                }
            }
            if q != self.qlen[node as usize] {
                return inv(format!(
                    "queue length of node {node} is {} but {q} packets are queued",
                    self.qlen[node as usize]
                ));
            }
            queued += q as usize;
        }
        let delivered = self
            .packets
            .iter()
            .filter(|p| p.delivered_at.is_some())
            .count();
        if delivered != self.delivered || queued + delivered != self.packets.len() {
            return inv(format!(
                "{} packets, {queued} queued + {delivered} delivered (counter {})",
                self.packets.len(),
                self.delivered
            ));
        }
        for p in &self.packets {
            if p.hops + p.remaining() != hamming(p.src, p.dst) {
                return inv(format!("packet {}->{} left its minimal path", p.src, p.dst));
            }
        }
        Ok(())
    }
}

/// A routing algorithm: picks, per node and cycle, the packet to send and the link.
pub trait Router {
    /// Short name used in tables.
    fn name(&self) -> String;
    /// Called once at the start of every cycle.
    fn begin_cycle(&mut self, _net: &Network, _rng: &mut ChaCha8Rng) {}
    /// Order in which nodes decide in this cycle (each node at most once).
    /// `None` means `0, 1, …, N-1` (the appendix's order). Ignored under
    /// [`Semantics::Appendix`], whose order is always ascending.
    fn order(&mut self, _net: &Network, _rng: &mut ChaCha8Rng) -> Option<Vec<NodeId>> {
        None
    }
    /// The move of `node` in the current cycle, or `None` to stay idle.
    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move>;
}

impl<R: Router + ?Sized> Router for Box<R> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn begin_cycle(&mut self, net: &Network, rng: &mut ChaCha8Rng) {
        (**self).begin_cycle(net, rng)
    }
    fn order(&mut self, net: &Network, rng: &mut ChaCha8Rng) -> Option<Vec<NodeId>> {
        (**self).order(net, rng)
    }
    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        (**self).choose(net, node, rng)
    }
}
