//! OURS: same-cycle-aware balancing with downstream lookahead.
//!
//! Not from the thesis; it follows the thesis's conclusion (chapter 6) that
//! "the careful selection of the next intermediate node reduces the total
//! communication time" and its suggestion of a deeper lookahead.
//!
//! ALG II *guesses* what a candidate node will receive in the current cycle
//! (`threshold × add`). In a synchronous machine that is known exactly once
//! the nodes decide one after the other in a cycle, so our router:
//!
//! 1. lets the nodes decide in order of decreasing queue length (the busiest
//!    nodes have the fewest good options left, so they choose first; ties at
//!    random);
//! 2. keeps the farthest-first discipline (Proposition 3/4 of §2.2: a node
//!    should send its farthest packets first), but looks at up to `width`
//!    distinct destinations among the packets at the largest distance
//!    instead of only the head of the list;
//! 3. scores every (packet, link) by the *projected* queue of the receiving
//!    node after this cycle — its queue, minus the packet it sends itself
//!    this cycle, plus the packets already routed to it in this cycle
//!    ([`Network::incoming`]) — plus `alpha` times the best projected queue
//!    one hop further along the packet's remaining minimal path (downstream
//!    load);
//! 4. takes the minimum, ties at random.
//!
//! Keeping every node's queue non-empty and balanced keeps all `N` senders
//! busy, which is what the hop lower bound `⌈Σ hops / N⌉` requires.

use hypercube_topology::{neighbor, NodeId};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::candidate_dims;
use crate::model::{Move, Network, Router, FLOW_UNIT};

/// Our router; see the module documentation.
#[derive(Clone, Debug)]
pub struct Ours {
    /// How many distinct destinations of the farthest bucket are considered.
    pub width: usize,
    /// Weight of the downstream (second-hop) load.
    pub alpha: f64,
    /// Node order: 0 ascending, 1 busiest first, 2 random.
    pub order: u32,
    /// Weight of the expected future inflow.
    pub beta: f64,
}

impl Default for Ours {
    fn default() -> Self {
        Ours {
            width: 1,
            alpha: 0.0,
            order: 1,
            beta: 1.0,
        }
    }
}

impl Ours {
    fn projected(net: &Network, c: NodeId) -> f64 {
        let q = net.queue_len(c);
        (q + net.incoming(c)) as f64 - if q > 0 { 1.0 } else { 0.0 }
    }
}

impl Router for Ours {
    fn name(&self) -> String {
        "OURS".into()
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
        let bucket = net.bucket(node, d);
        let mut seen: Vec<NodeId> = Vec::with_capacity(self.width);
        let mut best: Option<(f64, Move)> = None;
        let mut ties = 0u32;
        for &id in bucket {
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
                    .filter(|&e| e != k)
                    .map(|e| net.flow(neighbor(c, e), e))
                    .sum();
                let mut s = Self::projected(net, c) + self.beta * inflow as f64 / FLOW_UNIT as f64;
                if c != dst {
                    let down = candidate_dims(c, dst)
                        .map(|e| Self::projected(net, neighbor(c, e)))
                        .fold(f64::INFINITY, f64::min);
                    s += self.alpha * down;
                }
                let mv = Move { packet: id, dim: k };
                match best {
                    Some((b, _)) if s > b + 1e-12 => {}
                    Some((b, _)) if (s - b).abs() <= 1e-12 => {
                        ties += 1;
                        if rng.gen_range(0..ties) == 0 {
                            best = Some((b, mv));
                        }
                    }
                    _ => {
                        best = Some((s, mv));
                        ties = 1;
                    }
                }
            }
        }
        best.map(|(_, m)| m)
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
