//! What the cost-model tests share (`collectives_cost.rs`, `selection.rs`): the models they
//! run under, the virtual time of a job, and the comparison with a model time.
#![allow(dead_code)] // each test file uses its own part

use hypercube::collectives::select::CostModel;
use hypercube::local::run_local_timed;
use hypercube::transport::Forwarding;
use hypercube::Node;

/// (t_s, t_w, t_h) in both regimes; t_h ≠ 0 everywhere, so that a neighbour-only
/// algorithm that sent over a longer route would be caught.
pub const MODELS: [CostModel; 6] = [
    CostModel::new(100.0, 1.0).with_hop(10.0),
    CostModel::new(1.0, 0.5).with_hop(0.25),
    CostModel::new(7.0, 0.0).with_hop(2.0),
    CostModel::new(100.0, 1.0)
        .with_hop(10.0)
        .with_forwarding(Forwarding::StoreAndForward),
    CostModel::new(1.0, 0.5)
        .with_hop(0.25)
        .with_forwarding(Forwarding::StoreAndForward),
    CostModel::new(7.0, 0.0)
        .with_hop(2.0)
        .with_forwarding(Forwarding::StoreAndForward),
];

/// What a route's every link beyond the first adds to a message of `m` bytes.
pub fn extra_link(c: CostModel, m: f64) -> f64 {
    match c.forwarding {
        Forwarding::CutThrough => c.t_h,
        Forwarding::StoreAndForward => c.t_h + c.t_w * m,
    }
}

/// Largest final clock over the nodes of a 2^d cube running `f`.
pub fn time(d: u32, model: CostModel, f: impl Fn(&Node) + Sync) -> f64 {
    run_local_timed(d, model, |node| f(&node))
        .into_iter()
        .map(|(_, t)| t)
        .fold(0.0, f64::max)
}

pub fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.max(1.0),
        "{what}: virtual time {got}, model {want}"
    );
}

/// Calls `check(d, p, m, model)` for d = 1..=5 and m a multiple of p (so m/p is whole).
pub fn each(check: impl Fn(u32, f64, usize, CostModel)) {
    for d in 1..=5u32 {
        let p = 1usize << d;
        for model in MODELS {
            for m in [p, 16 * p] {
                check(d, p as f64, m, model);
            }
        }
    }
}

pub fn lg(p: f64) -> f64 {
    p.log2()
}
