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
use crate::transport::local::Cube;
use crate::transport::local_clock::{Bucket, ClockModel};

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

/// The links of a cube under a virtual clock ([`run_local_timed_links`]). The default is
/// the book's: one port per node, links unshaped.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Links {
    /// All-port nodes: one port per dimension, as [`run_local_timed_all_port`]; `false`,
    /// one port per node, as [`run_local_timed`].
    pub all_port: bool,
    /// Every directed link a token bucket of this many bytes (0: none), as `hcrun
    /// --link-rate` shapes the emulated cube's links with `tc tbf` and as a cloud VM's
    /// network credits work: the bucket starts full and gains a byte per `t_w` of virtual
    /// time, and the bytes of a message it holds tokens for cross the link free (at core
    /// speed), the rest at `t_w` a byte — so a message after idle time is cheaper than
    /// one right after another, as on the shaped links
    /// ([`Machine::link_burst`](crate::collectives::select::Machine::link_burst) is what
    /// the start-up probe measured of it). Only the first link of a route has a bucket of
    /// its own (the clock keeps no state for the links beyond it, as it models no
    /// congestion): under cut-through a message's time is its first link's, and under
    /// store-and-forward every further link is taken to save what the first saved.
    pub burst: usize,
}

/// Like [`run_local_timed`] with the nodes' ports and links described by `links`: with
/// `Links::default()` it is [`run_local_timed`], with `all_port` set
/// [`run_local_timed_all_port`]; a `burst` gives every directed link a token bucket.
///
/// ```
/// use hypercube::collectives::select::CostModel;
/// use hypercube::local::{run_local_timed_links, Links};
/// use hypercube::{MsgType, TypeSel};
/// // 1 µs a byte, a 1000-byte bucket: the first 600-byte message passes free, the second
/// // finds 400 bytes of tokens and pays for 200 bytes.
/// let links = Links { all_port: true, burst: 1000 };
/// let out = run_local_timed_links(1, CostModel::new(0.0, 1e-6), links, |node| {
///     if node.mynode() == 0 {
///         node.send(1, MsgType(1), vec![0u8; 600]).unwrap();
///         node.send(1, MsgType(1), vec![0u8; 600]).unwrap();
///     } else {
///         node.recv(TypeSel::Is(1)).unwrap();
///         node.recv(TypeSel::Is(1)).unwrap();
///     }
/// });
/// assert!((out[1].1 - 200e-6).abs() < 1e-9, "{}", out[1].1);
/// ```
pub fn run_local_timed_links<T: Send>(
    dim: u32,
    model: CostModel,
    links: Links,
    f: impl Fn(Node) -> T + Sync,
) -> Vec<(T, f64)> {
    run(dim, Some(model), links, f)
}

fn run<T: Send>(
    dim: u32,
    model: Option<CostModel>,
    links: Links,
    f: impl Fn(Node) -> T + Sync,
) -> Vec<(T, f64)> {
    assert!(
        dim <= 16,
        "run_local: dimension {dim} is too large for one process (max 16)"
    );
    let p = 1usize << dim;
    let clock = model.map(|m| ClockModel {
        cost: Box::new(move |len, links| m.message_over(len, links)),
        all_port: links.all_port.then_some(m.t_s),
        bucket: (links.burst > 0).then(|| Bucket {
            burst: links.burst as f64,
            t_w: m.t_w,
            store_and_forward: m.forwarding == crate::transport::Forwarding::StoreAndForward,
        }),
    });
    let cube = Cube::new(dim, clock);
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
    run(dim, None, Links::default(), f)
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
    run(dim, Some(model), Links::default(), f)
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
    let links = Links {
        all_port: true,
        burst: 0,
    };
    run(dim, Some(model), links, f)
}
