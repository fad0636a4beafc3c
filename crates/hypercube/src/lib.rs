//! # hypercube
//!
//! SPMD programs that run as real processes wired into a d-dimensional hypercube over TCP,
//! in the Intel iPSC programming model: typed `csend`/`crecv`, forwarding along e-cube
//! routes, and (in later modules) the Moler–Scott communication utilities and the basic
//! communication operations of Grama et al., chapter 4.
//!
//! ```no_run
//! use hypercube::{MsgType, TypeSel};
//!
//! fn main() -> anyhow::Result<()> {
//!     let node = hypercube::init()?; // joins the cube the launcher (hcrun) set up
//!     let last = node.numnodes() - 1;
//!     if node.mynode() == 0 {
//!         node.send(last, MsgType(10), b"hi")?; // forwarded over d hops
//!     }
//!     if node.mynode() == last {
//!         let m = node.recv(TypeSel::Is(10))?;
//!         assert_eq!((m.source(), &m.data()[..]), (0, &b"hi"[..]));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! Run it with `cargo run --release -p launcher -- --dim 3 -- path/to/program`.
#![deny(missing_docs)]

mod base;
mod boot;
pub mod collectives;
mod error;
pub mod ipsc;
mod job;
pub mod local;
mod node;
mod trace;
pub mod transport;
pub mod wire;

pub use base::ids::HOST;
pub use base::message::{Message, MsgType, Select, Status, TypeSel, MAX_USER_TYPE};
pub use base::parts::{IntoPayload, Parts};
pub use bytes;
pub use collectives::p2p::Peer;
pub use error::{Error, Result};
pub use hypercube_topology as topology;
pub use hypercube_topology::NodeId;
pub use node::{Node, RecvRequest, SendRequest};
pub use wire::codec;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Join the job this process was started in, open its d links and pass the ready barrier.
///
/// The process manager is found from the environment: `hcrun` (one host), or a PMI-1
/// manager — MPICH's `mpiexec` (Hydra) or Slurm's `srun --mpi=pmi2` — on one host or many
/// (`docs/clusters.md`). Started by none of them, the process is a job of one node
/// (d = 0), like an MPI singleton. A process joins one job: a second call is
/// [`Error::AlreadyInitialized`].
pub fn init() -> Result<Node> {
    static INITIALIZED: AtomicBool = AtomicBool::new(false);
    if INITIALIZED.swap(true, Ordering::SeqCst) {
        return Err(Error::AlreadyInitialized);
    }
    base::memory::keep_freed();
    let t = boot::join(boot::Launch::detect()?)?;
    trace::startup_work(|| boot::probe::run(&t))?;
    if collectives::select::machine().links_bound(1) {
        t.links_are_wires();
    }
    boot::clock::estimate_clock(&t);
    Ok(Node::with_transport(Arc::new(t)))
}

/// Run a node program: `init`, then `f`; on an error, print it (with its causes) and stop
/// the whole job (instead of waiting in finalize for ranks that wait for this one).
///
/// `f` may return any error that converts into `Box<dyn Error + Send + Sync>`: this
/// crate's [`Error`], `anyhow::Error`, `eyre::Report`, `std::io::Error`, a `String`, ...
/// A named function (`hypercube::run(program)` with
/// `fn program(node: &Node) -> anyhow::Result<()>`) needs no annotation; a closure that
/// uses `?` says its error type once, on its return type:
///
/// ```no_run
/// fn main() -> hypercube::Result<()> {
///     hypercube::run(|node| -> anyhow::Result<()> {
///         let sum = node.cube().allreduce(&[1u64], hypercube::collectives::Op::Sum)?;
///         anyhow::ensure!(sum[0] == u64::from(node.numnodes()), "bad sum {sum:?}");
///         Ok(())
///     })
/// }
/// ```
pub fn run<F, E>(f: F) -> Result<()>
where
    F: FnOnce(&Node) -> std::result::Result<(), E>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let node = init()?;
    if let Err(e) = f(&node) {
        node.abort(&error_chain(&*e.into()));
    }
    node.finalize()
}

/// An error and its causes on one line: `outer: cause: root cause`.
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let c_s = c.to_string();
        // anyhow's context chain repeats nothing, but some errors print their source too.
        if !s.contains(&c_s) {
            s.push_str(": ");
            s.push_str(&c_s);
        }
        cause = c.source();
    }
    s
}

#[cfg(test)]
mod run_tests {
    use super::error_chain;

    /// `run`'s bound accepts the common error types (a compile-time check that fails
    /// when the bound narrows again) and prints an error's causes.
    #[test]
    fn run_accepts_any_boxable_error() {
        fn accepts<E: Into<Box<dyn std::error::Error + Send + Sync>>>() {}
        accepts::<anyhow::Error>();
        accepts::<std::io::Error>();
        accepts::<crate::Error>();
        accepts::<String>();
        accepts::<Box<dyn std::error::Error + Send + Sync>>();
        let e = anyhow::anyhow!("root cause").context("reading the input");
        let boxed: Box<dyn std::error::Error + Send + Sync> = e.into();
        assert_eq!(error_chain(&*boxed), "reading the input: root cause");
    }
}

/// The README's node program, compiled and run as a doctest (as a one-node job).
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The guide `docs/guide-sample-sort.md`, compiled and run as a doctest.
#[doc = include_str!("../../../docs/guide-sample-sort.md")]
#[cfg(doctest)]
pub struct SampleSortGuide;

/// The guide `docs/guide-heat.md`, compiled and run as a doctest.
#[doc = include_str!("../../../docs/guide-heat.md")]
#[cfg(doctest)]
pub struct HeatGuide;

/// The examples of `docs/collectives.md`, compiled and run as doctests.
#[doc = include_str!("../../../docs/collectives.md")]
#[cfg(doctest)]
pub struct CollectivesDoctests;
