//! PLANNED: packets follow the routes of the runtime's planner,
//! [`hypercube_topology::Plan`] (issue 23: "the simulator and the runtime
//! share the planner").
//!
//! Source: the planner (`crates/topology/src/plan.rs`) — a greedy after
//! Bhatt's ALG I/II (thesis ch. 4) that places every part of every message,
//! largest first, on the minimal path whose busiest link is least loaded
//! (a bottleneck shortest path over the subcube between the ends).
//!
//! Before the first cycle the router counts the packets of every
//! (source, destination) pair and asks [`Plan::balanced`] for a plan of those
//! counts (a message of `m` packets is `m` "bytes", so a *part* is a number of
//! packets; parts of at least one packet, at most [`MAX_ROUTE_HOPS`] per
//! message). The pair's packets, in workload order, are dealt to its legs by
//! offset, and each packet then crosses exactly the dimensions of its leg's
//! route, in order (source routing). What the router still decides every
//! cycle is *which* packet a node sends: its farthest one (Proposition 4 of
//! §2.2), among those the one whose next node has the smallest projected
//! queue after this cycle (as [`super::Ours`]), ties at random.
//!
//! **What the plan predicts.** The planner balances *links*: in its model all
//! `n` links of a node send at once (the runtime's TCP links do). The thesis's
//! cycle model ([`crate::model`]) is *one-port*: a node sends one packet per
//! cycle on one of its links. So the plan's busiest directed link
//! ([`Plan::busiest`]) is a lower bound on the plan's time in the all-port
//! model only; in the one-port model the bound of a plan is its busiest
//! *port* — the most packets any node must send, summed over its links
//! ([`busiest_port`]) — which the planner does not minimise.
//!
//! For `n` above [`MAX_PLAN_DIM`] there is no plan and packets follow e-cube
//! routes.

use hypercube_topology::{neighbor, NodeId, Plan, PlanOptions, Route, MAX_PLAN_DIM};
use rand_chacha::ChaCha8Rng;

use hypercube_topology::MAX_ROUTE_HOPS;

use super::RandomMin;
use crate::model::{Move, Network, Router};
use crate::workload::Workload;

/// The plan options the simulator uses: a part is at least one packet, and a
/// message is cut into at most [`MAX_ROUTE_HOPS`] parts (the planner never
/// cuts more finely than the message's distance).
pub const SIM_PLAN_OPTIONS: PlanOptions = PlanOptions {
    min_part: 1,
    max_parts: MAX_ROUTE_HOPS as u32,
};

/// The packet counts of `packets` as the planner's size matrix
/// (`sizes[src * 2^n + dst]`).
pub fn sizes(n: u32, packets: impl IntoIterator<Item = (NodeId, NodeId)>) -> Vec<u64> {
    let p = 1usize << n;
    let mut s = vec![0u64; p * p];
    for (src, dst) in packets {
        s[src as usize * p + dst as usize] += 1;
    }
    s
}

/// The balanced plan of a workload (`None` when `n > MAX_PLAN_DIM`).
pub fn plan_of(w: &Workload) -> Option<Plan> {
    Plan::balanced(
        w.n,
        &sizes(w.n, w.packets.iter().copied()),
        SIM_PLAN_OPTIONS,
    )
}

/// The most packets any node sends under `plan`, summed over its links: the
/// plan's lower bound in the one-port cycle model.
pub fn busiest_port(plan: &Plan) -> u64 {
    let n = plan.dim() as usize;
    if n == 0 {
        return 0;
    }
    plan.loads()
        .chunks(n)
        .map(|c| c.iter().sum::<u64>())
        .max()
        .unwrap_or(0)
}

/// One route per packet of `w` (in workload order), dealt from `plan`'s legs:
/// the packets of each pair take the pair's legs in offset order, `bytes`
/// packets per leg.
pub fn routes_of(w: &Workload, plan: &Plan) -> Vec<Route> {
    let p = 1usize << w.n;
    // Next packet index within each pair.
    let mut next = vec![0u64; p * p];
    w.packets
        .iter()
        .map(|&(src, dst)| {
            if src == dst {
                return Route::ECUBE;
            }
            let i = &mut next[src as usize * p + dst as usize];
            let leg = plan
                .legs_from(src)
                .iter()
                .find(|l| l.dst == dst && l.offset <= *i && *i < l.offset + l.bytes);
            *i += 1;
            leg.map(|l| l.route).unwrap_or(Route::ECUBE)
        })
        .collect()
}

/// Cycles to deliver `w` along `routes` in the *all-port* variant of the
/// cycle model, where every directed link (not every node) carries one packet
/// per cycle — the model the planner balances for, and the runtime's (its
/// links send at once). Each link sends the packet with the most hops left
/// first (then the lowest id); a packet that crosses a link in cycle `t` can
/// cross the next one in cycle `t + 1`. The result is at least the plan's
/// [`Plan::busiest`] link and at least the longest route.
pub fn all_port_cycles(w: &Workload, routes: &[Route]) -> u64 {
    let n = w.n as usize;
    let nodes = 1usize << n;
    let hops: Vec<Vec<u32>> = w
        .packets
        .iter()
        .zip(routes)
        .map(|(&(s, d), r)| {
            let mut v: Vec<u32> = r.dims().collect();
            if v.is_empty() && s != d {
                v = (0..w.n).filter(|k| (s ^ d) >> k & 1 == 1).collect();
            }
            v
        })
        .collect();
    // Per directed link (node * n + dim): (packet, index of its next hop).
    let mut queues: Vec<Vec<(u32, usize)>> = vec![Vec::new(); nodes * n];
    let mut left = 0usize;
    for (id, (&(s, _), h)) in w.packets.iter().zip(&hops).enumerate() {
        if let Some(&k) = h.first() {
            queues[s as usize * n + k as usize].push((id as u32, 0));
            left += 1;
        }
    }
    let mut cycles = 0u64;
    let mut moved: Vec<(u32, usize, usize)> = Vec::new();
    while left > 0 {
        moved.clear();
        for (link, q) in queues.iter_mut().enumerate() {
            let Some(pos) = (0..q.len()).max_by_key(|&i| {
                let (id, at) = q[i];
                (hops[id as usize].len() - at, std::cmp::Reverse(id))
            }) else {
                continue;
            };
            let (id, at) = q.swap_remove(pos);
            moved.push((id, at, link));
        }
        for &(id, at, link) in &moved {
            let h = &hops[id as usize];
            if at + 1 == h.len() {
                left -= 1;
            } else {
                let node = (link / n) ^ (1 << h[at]);
                queues[node * n + h[at + 1] as usize].push((id, at + 1));
            }
        }
        cycles += 1;
    }
    cycles
}

/// The planned router; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Planned {
    /// Each packet's route from its source (empty until the first cycle).
    routes: Vec<Route>,
    /// The plan's busiest directed link (packets).
    busiest_link: u64,
    /// The plan's busiest port (packets a node sends).
    busiest_port: u64,
}

impl Planned {
    /// The plan's busiest directed link, in packets (0 before the first cycle
    /// or without a plan).
    pub fn predicted_link(&self) -> u64 {
        self.busiest_link
    }

    /// The plan's busiest port, in packets (see [`busiest_port`]).
    pub fn predicted_port(&self) -> u64 {
        self.busiest_port
    }

    /// The dimension packet `id` (at `node`, `hops` links from its source)
    /// crosses next.
    fn next_dim(&self, net: &Network, id: u32) -> u32 {
        let p = net.packet(id);
        self.routes
            .get(id as usize)
            .and_then(|r| r.dims().nth(p.hops as usize))
            .unwrap_or((p.at ^ p.dst).trailing_zeros())
    }
}

impl Router for Planned {
    fn name(&self) -> String {
        "PLANNED".into()
    }

    fn begin_cycle(&mut self, net: &Network, _rng: &mut ChaCha8Rng) {
        if !self.routes.is_empty() || net.packets().is_empty() {
            return;
        }
        let w = Workload {
            n: net.dim(),
            packets: net.packets().iter().map(|p| (p.src, p.dst)).collect(),
        };
        if net.dim() <= MAX_PLAN_DIM {
            if let Some(plan) = plan_of(&w) {
                self.busiest_link = plan.busiest();
                self.busiest_port = busiest_port(&plan);
                self.routes = routes_of(&w, &plan);
                return;
            }
        }
        self.routes = vec![Route::ECUBE; w.packets.len()];
    }

    fn choose(&mut self, net: &Network, node: NodeId, rng: &mut ChaCha8Rng) -> Option<Move> {
        let d = net.max_dist(node);
        if d == 0 {
            return None;
        }
        let mut best = RandomMin::default();
        for &id in net.bucket(node, d) {
            let dim = self.next_dim(net, id);
            let c = neighbor(node, dim);
            let q = net.queue_len(c);
            let s = q + net.incoming(c) - u32::from(q > 0);
            best.offer(s, Move { packet: id, dim }, rng);
        }
        best.pick()
    }
}
