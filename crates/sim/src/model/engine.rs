//! The engine of the cycle model (`model.rs`): [`simulate`] runs a [`Router`] on a
//! [`Workload`] cycle by cycle, validates every move against the model's rules and checks
//! the bookkeeping.

use hypercube_topology::{hamming, neighbor, NodeId};
use rand_chacha::ChaCha8Rng;

use super::{ModelError, Move, Network, Router, Semantics};
use crate::workload::Workload;

/// Outcome of one simulation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimResult {
    /// Communication time `com_time`: cycles until the last packet arrived.
    pub cycles: u64,
    /// Packets in the workload.
    pub packets: usize,
    /// Link traversals made (equals the total Hamming distance: minimal routing).
    pub hops: u64,
    /// Largest queue seen at any node at the start of a cycle.
    pub max_queue: u32,
}

/// Options of [`simulate`].
#[derive(Clone, Copy, Debug)]
pub struct SimOptions {
    /// Cycle semantics.
    pub semantics: Semantics,
    /// Run [`Network::check`] after every cycle (slow; for tests).
    pub check: bool,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            semantics: Semantics::Synchronous,
            check: false,
        }
    }
}

/// Runs `router` on `workload` until every packet is delivered.
///
/// Validates every move (the packet is at the node, the link is on a minimal
/// path, each node sends at most once per cycle; under
/// [`Semantics::Synchronous`] each packet moves at most once per cycle) and,
/// with [`SimOptions::check`], the bookkeeping invariants after every cycle.
pub fn simulate(
    workload: &Workload,
    router: &mut dyn Router,
    opts: SimOptions,
    rng: &mut ChaCha8Rng,
) -> Result<SimResult, ModelError> {
    let mut net = Network::new(workload, opts.semantics);
    let nodes = net.nodes();
    // Every cycle of a sane router makes progress at least once per n cycles.
    let limit = net.total_hops * (net.n as u64 + 1) + 2 * net.n as u64 + 2;
    let mut hops = 0u64;
    let mut max_queue = 0;
    let mut sent = vec![u64::MAX; nodes as usize];
    let mut planned: Vec<(NodeId, Move)> = Vec::with_capacity(nodes as usize);
    let default_order: Vec<NodeId> = (0..nodes).collect();
    while net.remaining() > 0 {
        if net.cycle >= limit {
            return Err(ModelError::Stalled(net.cycle));
        }
        max_queue = max_queue.max(net.qlen.iter().copied().max().unwrap_or(0));
        router.begin_cycle(&net, rng);
        let order = match opts.semantics {
            Semantics::Synchronous => router.order(&net, rng),
            Semantics::Appendix => None,
        };
        let order = order.as_deref().unwrap_or(&default_order);
        planned.clear();
        for &node in order {
            if node >= nodes || sent[node as usize] == net.cycle {
                return Err(ModelError::TwiceInCycle { node });
            }
            sent[node as usize] = net.cycle;
            let Some(mv) = router.choose(&net, node, rng) else {
                continue;
            };
            match opts.semantics {
                Semantics::Synchronous => {
                    net.validate(node, mv)?;
                    net.incoming[neighbor(node, mv.dim) as usize] += 1;
                    planned.push((node, mv));
                }
                Semantics::Appendix => {
                    net.apply(node, mv)?;
                    hops += 1;
                }
            }
        }
        for &(node, mv) in &planned {
            net.apply(node, mv)?;
            hops += 1;
        }
        net.incoming.iter_mut().for_each(|x| *x = 0);
        net.cycle += 1;
        if opts.check {
            net.check()?;
        }
    }
    net.check_final()?;
    Ok(SimResult {
        cycles: net.cycle,
        packets: net.packets.len(),
        hops,
        max_queue,
    })
}

impl Network {
    fn check_final(&self) -> Result<(), ModelError> {
        for (i, p) in self.packets.iter().enumerate() {
            if p.delivered_at.is_none() || p.at != p.dst || p.hops != hamming(p.src, p.dst) {
                return Err(ModelError::Invariant(format!(
                    "packet {i} ({}->{}) not delivered on a minimal path",
                    p.src, p.dst
                )));
            }
        }
        if self.delivered != self.packets.len() {
            return Err(ModelError::Invariant("delivery counter disagrees".into()));
        }
        Ok(())
    }
}
