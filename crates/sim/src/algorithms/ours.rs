//! OURS: an online router that watches the lower bound.
//!
//! Not from the thesis; it follows the thesis's conclusion (chapter 6) that
//! "the careful selection of the next intermediate node reduces the total
//! communication time" and its suggestion of a deeper lookahead. Every cycle
//! it decides from the current state only (queues, the moves already chosen
//! in this cycle) — no search over futures.
//!
//! At the start of every cycle it computes, from the state, the two parts of
//! the lower bound ([`crate::bound`]) on the time still needed: the *hop* part
//! `⌈hops left / N⌉` and the *source* part `max_x LB(x)`, where
//! `LB(x) = max_t (t + d_t − 1)` over the packets queued at `x` sorted by
//! decreasing remaining distance (`x` sends one per cycle, farthest first,
//! Proposition 4 of §2.2). Then:
//!
//! * **While the hop part strictly dominates** (every node must send in every
//!   cycle to the end, as in all-to-all), a node sends the packet whose lowest
//!   differing dimension is smallest, across that dimension: the
//!   dimension-ordered exchange ([`super::exchange`]) decided node by node.
//!   On all-to-all it runs in lock-step with the exchange and meets the hop
//!   bound exactly.
//! * **Otherwise** (a source or a sink is the bottleneck, as on most
//!   many-to-many rows) nodes decide one after another, busiest first, and
//!   each one scores its candidate moves — up to `width` distinct
//!   destinations per remaining distance, every minimal-path link — by, in
//!   order of weight:
//!   1. how far the move pushes the receiving node's `LB` (with this packet,
//!      the packets already routed to it in this cycle, minus the one it sends)
//!      and the sender's own `LB` (a sender that does not send its farthest
//!      packet may fall behind) above the remaining bound `target` — a node
//!      whose `LB` exceeds `target` lengthens the schedule;
//!   2. farthest first (Proposition 4): a nearer packet only when the farthest
//!      ones would overload someone;
//!   3. the receiver's projected queue after this cycle
//!      (`queue + incoming − [it sends]`) plus `beta ×` its expected inflow
//!      (Σ over its other neighbours' packets at distance `d ≥ 2` that may pass
//!      through it of `1/d`), plus `gamma ×` its `LB`;
//!
//!   ties at random.
//!
//! ALG II *guesses* what a candidate will receive in the cycle
//! (`threshold × add`); here it is known exactly (the moves already chosen),
//! and the guess about the future is the expected inflow.

use std::cmp::Ordering;

use hypercube_topology::{neighbor, NodeId};
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::{candidate_dims, RandomMin};
use crate::model::{Move, Network, Router, FLOW_UNIT};

/// Our online router; see the module documentation.
#[derive(Clone, Debug)]
pub struct Ours {
    /// How many distinct destinations per remaining distance are considered.
    pub width: usize,
    /// Node order: 0 ascending, 1 busiest (longest queue) first, 2 random,
    /// 3 least busy first.
    pub order: u32,
    /// Weight of the expected future inflow.
    pub beta: f64,
    /// Weight of the receiving node's local bound `LB`.
    pub gamma: f64,
    /// Use the exchange order while the hop bound strictly dominates.
    pub exchange_phase: bool,
    /// Exchange order in this cycle (set by `begin_cycle`).
    exchange: bool,
    /// The lower bound on the cycles still needed after this one.
    target: u32,
    /// `arr[node * (n + 1) + d]`: packets routed to `node` in this cycle that
    /// will be at distance `d` there.
    arr: Vec<u32>,
    /// Distance of the packet `node` sends in this cycle (`u32::MAX`: not decided).
    sent: Vec<u32>,
}

impl Default for Ours {
    fn default() -> Self {
        Ours {
            width: 4,
            order: 1,
            beta: 1.0,
            gamma: 0.1,
            exchange_phase: true,
            exchange: false,
            target: 0,
            arr: Vec::new(),
            sent: Vec::new(),
        }
    }
}

impl Ours {
    fn projected(net: &Network, c: NodeId) -> f64 {
        let q = net.queue_len(c);
        (q + net.incoming(c)) as f64 - if q > 0 { 1.0 } else { 0.0 }
    }

    /// `LB(c)` after this cycle with one more packet at distance `e` (none if
    /// 0): `c` sends the packet it chose in this cycle, or its farthest one if
    /// it has not decided yet.
    fn local_bound(&self, net: &Network, c: NodeId, e: u32) -> u32 {
        let out = match self.sent.get(c as usize) {
            Some(&d) if d != u32::MAX => d,
            _ => net.max_dist(c),
        };
        self.bound_with(net, c, e, out)
    }

    /// `LB(c)` after this cycle if `c` sends a packet at distance `out` (none
    /// if 0) and receives one more at distance `e` (none if 0), besides the
    /// packets already routed to it in this cycle.
    fn bound_with(&self, net: &Network, c: NodeId, e: u32, mut out: u32) -> u32 {
        let n = net.dim();
        let base = c as usize * (n as usize + 1);
        let mut ge = 0u32;
        let mut lb = 0u32;
        for d in (1..=n).rev() {
            let mut k = net.bucket(c, d).len() as u32
                + self.arr.get(base + d as usize).copied().unwrap_or(0)
                + u32::from(d == e);
            if d == out && k > 0 {
                k -= 1;
                out = 0;
            }
            if k > 0 {
                ge += k;
                lb = lb.max(ge + d - 1);
            }
        }
        lb
    }

    /// The exchange order: the packet with the lowest still-to-correct
    /// dimension, across it (farthest first among equals).
    fn exchange_move(net: &Network, node: NodeId, maxd: u32) -> Option<Move> {
        (1..=maxd)
            .rev()
            .flat_map(|e| net.bucket(node, e).iter().copied())
            .map(|id| (id, (node ^ net.packet(id).dst).trailing_zeros()))
            .min_by_key(|&(_, k)| k)
            .map(|(packet, dim)| Move { packet, dim })
    }

    /// The bound-watching choice of the module documentation.
    fn balanced_move(
        &self,
        net: &Network,
        node: NodeId,
        maxd: u32,
        rng: &mut ChaCha8Rng,
    ) -> Option<Move> {
        let mut best = RandomMin::default();
        for e in (1..=maxd).rev() {
            let self_over = self.bound_with(net, node, 0, e).saturating_sub(self.target);
            let mut seen: Vec<NodeId> = Vec::with_capacity(self.width);
            for &id in net.bucket(node, e) {
                let dst = net.packet(id).dst;
                if seen.contains(&dst) {
                    continue;
                }
                if seen.len() >= self.width {
                    break;
                }
                seen.push(dst);
                for k in candidate_dims(node, dst) {
                    let c = neighbor(node, k);
                    let inflow: u64 = (0..net.dim())
                        .filter(|&f| f != k)
                        .map(|f| net.flow(neighbor(c, f), f))
                        .sum();
                    let lb = if e > 1 {
                        self.local_bound(net, c, e - 1)
                    } else {
                        0
                    };
                    let over = lb.saturating_sub(self.target) + self_over;
                    let s = over as f64 * 1e4
                        + (maxd - e) as f64 * 100.0
                        + Self::projected(net, c)
                        + self.beta * inflow as f64 / FLOW_UNIT as f64
                        + self.gamma * lb as f64;
                    let mv = Move { packet: id, dim: k };
                    best.offer_by(s, mv, rng, |s: f64, b| {
                        if s > b + 1e-9 {
                            Ordering::Greater
                        } else if (s - b).abs() <= 1e-9 {
                            Ordering::Equal
                        } else {
                            Ordering::Less
                        }
                    });
                }
            }
        }
        best.pick()
    }

    /// Remembers this cycle's move of `node` (what it sends, what its
    /// neighbour receives).
    fn record(&mut self, net: &Network, node: NodeId, mv: Move) {
        let n1 = net.dim() as usize + 1;
        let p = net.packet(mv.packet);
        let d = (p.at ^ p.dst).count_ones();
        let to = neighbor(node, mv.dim) as usize;
        if let (Some(s), Some(a)) = (
            self.sent.get_mut(node as usize),
            self.arr.get_mut(to * n1 + d as usize - 1),
        ) {
            *s = d;
            *a += 1;
        }
    }
}

impl Router for Ours {
    fn name(&self) -> String {
        "OURS".into()
    }

    fn begin_cycle(&mut self, net: &Network, _rng: &mut ChaCha8Rng) {
        let n = net.dim();
        self.arr.clear();
        self.arr.resize(net.nodes() as usize * (n as usize + 1), 0);
        self.sent.clear();
        self.sent.resize(net.nodes() as usize, u32::MAX);
        let mut hops = 0u64;
        let mut source = 0u64;
        for x in 0..net.nodes() {
            let mut ge = 0u64;
            for d in (1..=n).rev() {
                let c = net.bucket(x, d).len() as u64;
                if c > 0 {
                    ge += c;
                    hops += c * u64::from(d);
                    source = source.max(ge + u64::from(d) - 1);
                }
            }
        }
        let hop = hops.div_ceil(u64::from(net.nodes()));
        self.target = u32::try_from(hop.max(source).saturating_sub(1)).unwrap_or(u32::MAX);
        self.exchange = self.exchange_phase && hop > source;
    }

    fn order(&mut self, net: &Network, rng: &mut ChaCha8Rng) -> Option<Vec<NodeId>> {
        let mut v: Vec<NodeId> = (0..net.nodes()).collect();
        if self.order == 0 {
            return Some(v);
        }
        v.shuffle(rng);
        if self.order == 1 {
            v.sort_by_key(|&x| std::cmp::Reverse(net.queue_len(x)));
        }
        if self.order == 3 {
            v.sort_by_key(|&x| net.queue_len(x));
        }
        Some(v)
    }

    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        let d = net.max_dist(node);
        if d == 0 {
            return None;
        }
        let mv = if self.exchange {
            Self::exchange_move(net, node, d)?
        } else {
            self.balanced_move(net, node, d, rng)?
        };
        self.record(net, node, mv);
        Some(mv)
    }
}

/// OURS-BEST: an offline schedule search over a portfolio of routers.
///
/// The thesis notes (§4.3, chapter 6) that its algorithms target
/// *deterministic* application algorithms whose communication is known at
/// static time. Then the schedule can be planned before it is executed: we
/// simulate every router of `portfolio` on the workload, each with its own
/// random stream from `seed_of(index)`, and keep the fastest schedule (the
/// simulation *is* the schedule: it fixes every packet's send cycle and link).
/// Returns the best communication time and the index of the winning router.
pub fn plan_best(
    workload: &crate::workload::Workload,
    portfolio: &mut [Box<dyn Router>],
    semantics: crate::model::Semantics,
    mut seed_of: impl FnMut(usize) -> u64,
) -> Result<(u64, usize), crate::model::ModelError> {
    use rand::SeedableRng;
    let mut best = (u64::MAX, 0);
    for (i, r) in portfolio.iter_mut().enumerate() {
        let mut rng = ChaCha8Rng::seed_from_u64(seed_of(i));
        let opts = crate::model::SimOptions {
            semantics,
            check: false,
        };
        let c = crate::model::simulate(workload, r.as_mut(), opts, &mut rng)?.cycles;
        if c < best.0 {
            best = (c, i);
        }
    }
    Ok(best)
}
