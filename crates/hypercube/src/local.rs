//! The in-process driver: [`run_local`] runs an SPMD closure on `2^d` threads, each with
//! its own [`Node`] over the in-process transport (`transport/local.rs`, whose module docs
//! describe the whole, virtual clock included); [`run_local_timed`] gives every node a
//! virtual clock under a [`CostModel`], and [`now`] reads the calling node's.
//!
//! Public as `hypercube::local`: the in-process counterpart of [`crate::init`], at the top
//! beside `lib.rs` (it builds `Node`s and takes the collectives' [`CostModel`]).

use std::cell::RefCell;
use std::sync::{Arc, Mutex};

use hypercube_topology::NodeId;

use crate::collectives::select::CostModel;
use crate::node::Node;
use crate::transport::local::{Cube, MessageCost};

thread_local! {
    static CLOCK: RefCell<Option<Arc<Mutex<f64>>>> = const { RefCell::new(None) };
}

/// The virtual clock of the node running on the calling thread, if it runs under
/// [`run_local_timed`] (`None` elsewhere, e.g. over TCP or under [`run_local`]).
pub fn now() -> Option<f64> {
    CLOCK.with(|c| {
        c.borrow()
            .as_ref()
            .map(|c| *c.lock().unwrap_or_else(|p| p.into_inner()))
    })
}

/// Marks the cube failed if the node thread unwinds.
struct PanicGuard<'a> {
    cube: &'a Cube,
    rank: NodeId,
}

impl Drop for PanicGuard<'_> {
    fn drop(&mut self) {
        CLOCK.with(|c| c.borrow_mut().take());
        if std::thread::panicking() {
            self.cube.node_panicked(self.rank);
        }
    }
}

fn run<T: Send>(
    dim: u32,
    model: Option<CostModel>,
    all_port: bool,
    f: impl Fn(Node) -> T + Sync,
) -> Vec<(T, f64)> {
    assert!(
        dim <= 16,
        "run_local: dimension {dim} is too large for one process (max 16)"
    );
    let p = 1usize << dim;
    let cost =
        model.map(|m| -> MessageCost { Box::new(move |len, links| m.message_over(len, links)) });
    let cube = Cube::new(dim, cost, model.filter(|_| all_port).map(|m| m.t_s));
    let f = &f;
    let results: Vec<std::thread::Result<(T, f64)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..p as NodeId)
            .map(|rank| {
                let cube = cube.clone();
                std::thread::Builder::new()
                    .name(format!("hc-local-{rank}"))
                    .spawn_scoped(s, move || {
                        let _guard = PanicGuard { cube: &cube, rank };
                        let clock = Arc::new(Mutex::new(0.0));
                        if model.is_some() {
                            CLOCK.with(|c| *c.borrow_mut() = Some(clock.clone()));
                        }
                        let t = Arc::new(cube.transport(rank, clock.clone()));
                        let out = f(Node::with_transport(t));
                        let time = *clock.lock().unwrap_or_else(|p| p.into_inner());
                        (out, time)
                    })
                    .expect("spawning a node thread")
            })
            .collect();
        handles.into_iter().map(|h| h.join()).collect()
    });
    let first = cube.first_failed();
    let mut out = Vec::with_capacity(p);
    let mut panics = Vec::new();
    for (rank, r) in results.into_iter().enumerate() {
        match r {
            Ok(v) => out.push(v),
            Err(e) => panics.push((rank as NodeId, e)),
        }
    }
    if !panics.is_empty() {
        // Re-raise the panic that started it all, not the follow-up failures.
        let i = panics
            .iter()
            .position(|(r, _)| Some(*r) == first)
            .unwrap_or(0);
        std::panic::resume_unwind(panics.swap_remove(i).1);
    }
    out
}

/// Run `f` on `2^dim` threads, one [`Node`] each, over the in-process transport; returns
/// each node's result in rank order. A panic on any node is re-raised here (the first one),
/// after every other node has stopped.
pub fn run_local<T: Send>(dim: u32, f: impl Fn(Node) -> T + Sync) -> Vec<T> {
    run(dim, None, false, f)
        .into_iter()
        .map(|(v, _)| v)
        .collect()
}

/// Like [`run_local`] with a virtual clock per node under `model` (see the module docs);
/// returns each node's result with its final virtual time.
pub fn run_local_timed<T: Send>(
    dim: u32,
    model: CostModel,
    f: impl Fn(Node) -> T + Sync,
) -> Vec<(T, f64)> {
    run(dim, Some(model), false, f)
}

/// Like [`run_local_timed`] with **all-port** nodes: one port per dimension, a send
/// occupying the port of its route's first link while the node only pays its start-up
/// (see the module docs of `transport::local`). The all-port algorithms
/// (`Algorithm::AllPort`, `Algorithm::Ecube` all-to-all) meet their
/// `collectives::select::all_port_time` here.
pub fn run_local_timed_all_port<T: Send>(
    dim: u32,
    model: CostModel,
    f: impl Fn(Node) -> T + Sync,
) -> Vec<(T, f64)> {
    run(dim, Some(model), true, f)
}
