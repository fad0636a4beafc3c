//! The TCP transport: one socket per hypercube dimension, e-cube forwarding, eager and
//! rendezvous messages with credits, and a progress thread that keeps forwarding while the
//! node program computes.
//!
//! Threads: the caller's thread writes frames itself and, while it waits, reads the sockets
//! itself for a short spin; then it parks and the progress thread (blocked in `poll`)
//! carries on. See `docs/architecture.md`.
//!
//! The rooms: this file is the [`Transport`] implementation and the transport's start-up;
//! `engine.rs` the shared state, routing and output queues; `protocol.rs` sending,
//! receiving (eager, rendezvous, credits) and the dispatch of arrived frames; `wait.rs` how
//! a caller waits; `progress.rs` the progress thread; `finalize.rs` leaving the job;
//! `link.rs` one socket's frames; `sockopt.rs` socket options; `tuning.rs` the knobs.

mod engine;
mod finalize;
mod link;
mod polls;
mod progress;
mod protocol;
mod sockopt;
mod tuning;
mod wait;

pub(crate) use engine::Engine;
pub use tuning::Tuning;

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use hypercube_topology::NodeId;

use engine::relock;

use crate::error::{Error, Result};
use crate::ids::HOST;
use crate::message::{Message, Select, Status};
use crate::parts::Parts;
use crate::transport::{RecvToken, SendToken, Transport};

/// A node's TCP transport: the engine plus its background threads.
pub struct TcpTransport {
    engine: Arc<Engine>,
    progress: Mutex<Option<JoinHandle<()>>>,
    finalized: AtomicBool,
    /// Set when finalize is done (the control thread then ignores the launcher's EOF).
    pub(crate) done_flag: Arc<AtomicBool>,
}

impl TcpTransport {
    /// Assemble the engine from established links and start the progress thread.
    pub(crate) fn start(
        me: NodeId,
        dim: u32,
        links: Vec<(NodeId, TcpStream)>,
        addrs: Vec<Option<SocketAddr>>,
        has_host: bool,
        tuning: Tuning,
    ) -> Result<TcpTransport> {
        let engine = Arc::new(Engine::new(me, dim, links, addrs, has_host, tuning)?);
        crate::trace::start(me, dim);
        let e2 = engine.clone();
        let progress = std::thread::Builder::new()
            .name(format!("hc-progress-{me}"))
            .spawn(move || progress::run(&e2))
            .map_err(|e| Error::io("starting the progress thread", e))?;
        Ok(TcpTransport {
            engine,
            progress: Mutex::new(Some(progress)),
            finalized: AtomicBool::new(false),
            done_flag: Arc::new(AtomicBool::new(false)),
        })
    }

    /// The engine (for the control channel's watcher and reports).
    pub(crate) fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn check_dest(&self, dest: NodeId) -> Result<()> {
        let e = &*self.engine;
        let host_ok = dest == HOST && e.has_host && e.me != HOST;
        if dest >= e.num_nodes && !host_ok {
            return Err(Error::InvalidNode {
                node: dest as i64,
                what: if e.has_host {
                    format!("cube of dimension {} (or the host, {})", e.dim, HOST)
                } else {
                    format!("cube of dimension {} (the job has no host)", e.dim)
                },
                first: 0,
                last: e.num_nodes - 1,
            });
        }
        Ok(())
    }

    fn stop_progress(&self) {
        self.engine.stop.store(true, Ordering::SeqCst);
        self.engine.wake_progress();
        if let Some(h) = relock(self.progress.lock()).take() {
            let _ = h.join();
        }
    }
}

impl Transport for TcpTransport {
    fn rank(&self) -> NodeId {
        self.engine.me
    }

    fn dim(&self) -> u32 {
        self.engine.dim
    }

    fn isend(&self, dest: NodeId, tag: u32, data: Parts) -> Result<SendToken> {
        self.check_dest(dest)?;
        self.engine.send(dest, tag, data)
    }

    fn test_send(&self, token: SendToken) -> Result<bool> {
        self.engine.test_send(token)
    }

    fn wait_send(&self, token: SendToken) -> Result<()> {
        self.engine.wait_send(token)
    }

    fn post_recv(&self, sel: Select) -> Result<RecvToken> {
        if let Some(s) = sel.source {
            self.check_dest(s)?;
        }
        Ok(self.engine.post(sel))
    }

    fn test_recv(&self, token: RecvToken) -> Result<Option<Message>> {
        self.engine.test_recv(token)
    }

    fn wait_recv(&self, token: RecvToken, timeout: Option<Duration>) -> Result<Message> {
        self.engine.wait_recv(token, timeout)
    }

    fn cancel_recv(&self, token: RecvToken) -> bool {
        self.engine.lock().mailbox.cancel(token)
    }

    fn abandon_recv(&self, token: RecvToken) {
        self.engine.lock().mailbox.abandon(token);
    }

    fn probe(
        &self,
        sel: &Select,
        block: bool,
        timeout: Option<Duration>,
    ) -> Result<Option<Status>> {
        let e = &*self.engine;
        if !block {
            let t0 = std::time::Instant::now();
            e.poll_inputs();
            let found = e.lock().mailbox.probe(sel);
            e.after_poll(t0, found.is_some(), || wait::describe_select(sel));
            return Ok(found);
        }
        e.wait_probe(sel, timeout).map(Some)
    }

    fn claim(&self, status: &Status) -> Result<RecvToken> {
        self.engine.claim(status)
    }

    fn finalize(&self) -> Result<()> {
        self.leave()
    }

    fn peer_address(&self, node: NodeId) -> Option<SocketAddr> {
        self.engine.addrs.get(node as usize).copied().flatten()
    }
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        self.stop_progress();
        crate::trace::flush();
    }
}
