//! The engine's state and plumbing: the one lock over the mailbox, output queues, credits
//! and pending sends ([`State`]); which link a frame leaves on ([`Engine::route`]);
//! queuing and writing frames; failure and wake-ups. The message protocol that runs on it
//! is `protocol.rs`, how callers wait `wait.rs`, the progress thread `progress.rs`.

use std::collections::HashMap;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use hypercube_topology::NodeId;

use super::link::{Flush, LinkIn, LinkOut, OutFrame};
use super::{sockopt, Tuning};
use crate::error::{Error, Result};
use crate::ids::HOST;
use crate::mailbox::Mailbox;
use crate::parts::Parts;
use crate::wire::frame::Header;

/// A large send that waits for its clear-to-send or is being written.
pub(super) struct PendingSend {
    pub(super) dest: NodeId,
    pub(super) data: Parts,
}

/// Everything the engine's threads share, under one lock.
pub(crate) struct State {
    pub(super) mailbox: Mailbox,
    pub(super) out: Vec<LinkOut>,
    /// Eager bytes we may still send to each node.
    pub(super) credits: Vec<u64>,
    /// Eager bytes received from each node and consumed, not yet credited back.
    pub(super) consumed: Vec<u64>,
    pub(super) pending: HashMap<u64, PendingSend>,
    pub(super) pending_bytes: u64,
    pub(super) next_msg_id: u64,
    pub(super) failure: Option<Error>,
    /// Finalize has begun: EOFs are expected.
    pub(super) closing: bool,
    /// Per link: the peer sent Close.
    pub(super) peer_closed: Vec<bool>,
    /// Per link: EOF or error seen; not polled any more.
    pub(super) link_done: Vec<bool>,
    /// Per node: it has finished and will send nothing more.
    pub(super) finished: Vec<bool>,
}

/// The engine behind a TCP node.
pub(crate) struct Engine {
    pub(super) me: NodeId,
    pub(super) dim: u32,
    pub(super) num_nodes: u32,
    /// The job has a host process (linked to node 0).
    pub(super) has_host: bool,
    pub(super) tuning: Tuning,
    pub(super) state: Mutex<State>,
    pub(super) inputs: Vec<Mutex<LinkIn>>,
    pub(super) wake_tx: UnixStream,
    pub(super) wake_rx: UnixStream,
    /// Wakes callers parked in `poll` (instead of a condition variable: a parked caller
    /// keeps reading the sockets itself, so an arriving reply wakes it directly rather
    /// than waking the progress thread, which would then wake it).
    pub(super) waiter_tx: UnixStream,
    pub(super) waiter_rx: UnixStream,
    pub(super) stop: AtomicBool,
    /// Payload bytes per data frame once the links are known to be wires
    /// ([`super::TcpTransport::links_are_wires`]); 0: `tuning.chunk`.
    pub(super) wire_chunk: std::sync::atomic::AtomicUsize,
    /// The eager limit once the links are known to be wires; 0: `tuning.eager_limit`.
    pub(super) wire_eager: std::sync::atomic::AtomicUsize,
    /// Threads currently spinning in `wait_for` (reading the sockets themselves). While
    /// there are any, the progress thread leaves the links alone instead of being woken
    /// by every arriving frame — on a 2-core machine that wake-up steals the core the
    /// spinning peer needs.
    pub(super) spinners: AtomicUsize,
    /// Callers parked in `poll`. Changed and read only under the state lock, so a
    /// notification is skipped (saving a syscall per message) only when nobody waits.
    pub(super) parked: AtomicUsize,
    /// Counts dispatched frames: a waiter that sees it move knows the job is alive.
    pub(super) activity: AtomicU64,
    /// When this node last forwarded a frame, in ms since `epoch` (0: never).
    pub(super) last_forward_ms: AtomicU64,
    /// When a caller's wait last ended without handing the sockets back, in µs since
    /// `epoch` (0: never) — the progress thread keeps off the sockets for a tick after it.
    pub(super) last_wait_end_us: AtomicU64,
    pub(super) epoch: Instant,
    /// The current streak of non-blocking polls that found nothing (`polls.rs`).
    pub(super) polls: super::polls::Polls,
    /// Link listener addresses by rank, where known (every rank's under `hcrun`, the
    /// neighbors' under PMI).
    pub(super) addrs: Vec<Option<SocketAddr>>,
}

pub(super) fn relock<T>(r: std::sync::LockResult<T>) -> T {
    r.unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    /// Assemble the engine from established links (`links[k]` is link k, to the node named
    /// with it): configure the sockets, make the wake-up pipes, start from empty state.
    pub(super) fn new(
        me: NodeId,
        dim: u32,
        links: Vec<(NodeId, TcpStream)>,
        addrs: Vec<Option<SocketAddr>>,
        has_host: bool,
        tuning: Tuning,
    ) -> Result<Engine> {
        let num_nodes = 1u32 << dim;
        let nlinks = links.len();
        let mut out = Vec::new();
        let mut inputs = Vec::new();
        for (peer, s) in links {
            s.set_nonblocking(true)
                .map_err(|e| Error::io("configuring a link", e))?;
            let _ = s.set_nodelay(true);
            sockopt::set_buffers(&s, tuning.socket_buffer);
            sockopt::set_congestion(&s, &tuning.congestion);
            let r = s
                .try_clone()
                .map_err(|e| Error::io("cloning a link socket", e))?;
            out.push(LinkOut {
                peer,
                stream: s,
                queue: Default::default(),
                closed: false,
            });
            let cut_through = (tuning.forwarding == crate::transport::Forwarding::CutThrough)
                .then_some(tuning.cut_through_min);
            inputs.push(Mutex::new(LinkIn::new(peer, r, me, cut_through)));
        }
        let pipe = || -> Result<(UnixStream, UnixStream)> {
            let (tx, rx) =
                UnixStream::pair().map_err(|e| Error::io("creating a wake-up pipe", e))?;
            tx.set_nonblocking(true)
                .and_then(|_| rx.set_nonblocking(true))
                .map_err(|e| Error::io("configuring a wake-up pipe", e))?;
            Ok((tx, rx))
        };
        let (wake_tx, wake_rx) = pipe()?;
        let (waiter_tx, waiter_rx) = pipe()?;
        let state = State {
            mailbox: Mailbox::default(),
            out,
            credits: vec![tuning.eager_window; num_nodes as usize + 1],
            consumed: vec![0; num_nodes as usize + 1],
            pending: HashMap::new(),
            pending_bytes: 0,
            next_msg_id: 0,
            failure: None,
            closing: false,
            peer_closed: vec![false; nlinks],
            link_done: vec![false; nlinks],
            finished: vec![false; num_nodes as usize + 1],
        };
        Ok(Engine {
            me,
            dim,
            num_nodes,
            has_host,
            tuning,
            state: Mutex::new(state),
            inputs,
            wake_tx,
            wake_rx,
            waiter_tx,
            waiter_rx,
            stop: AtomicBool::new(false),
            wire_chunk: std::sync::atomic::AtomicUsize::new(0),
            wire_eager: std::sync::atomic::AtomicUsize::new(0),
            spinners: Default::default(),
            parked: Default::default(),
            activity: Default::default(),
            last_forward_ms: Default::default(),
            last_wait_end_us: Default::default(),
            epoch: Instant::now(),
            polls: Default::default(),
            addrs,
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        relock(self.state.lock())
    }

    /// The link of the e-cube next hop towards `dest` (`topology::ecube_next_hop`). The
    /// host's only link goes to node 0; node 0's link number `dim` goes to the host; other
    /// nodes route host-bound frames towards node 0.
    pub(super) fn route(&self, dest: NodeId) -> usize {
        if self.me == HOST {
            return 0;
        }
        if dest == HOST && self.me == 0 {
            return self.dim as usize;
        }
        let target = if dest == HOST { 0 } else { dest };
        let next = hypercube_topology::ecube_next_hop(self.me, target).unwrap_or(self.me);
        (self.me ^ next).trailing_zeros() as usize
    }

    /// Index of a node (or the host) in per-node tables.
    pub(super) fn slot(&self, n: NodeId) -> usize {
        if n == HOST {
            self.num_nodes as usize
        } else {
            n as usize
        }
    }

    /// Every node (and the host) except this one.
    pub(super) fn others(&self) -> impl Iterator<Item = NodeId> + '_ {
        let host = (self.has_host && self.me != HOST).then_some(HOST);
        (0..self.num_nodes)
            .filter(move |n| *n != self.me)
            .chain(host)
    }

    pub(super) fn wake_progress(&self) {
        use std::io::Write;
        let _ = (&self.wake_tx).write(&[1]);
    }

    /// Queue a frame on a link and try to write it at once.
    pub(super) fn push(&self, st: &mut State, link: usize, frame: OutFrame) {
        if st.out[link].closed {
            tracing::debug!(link, "dropping a frame for a link we already closed");
            return;
        }
        let was_empty = st.out[link].queue.is_empty();
        st.out[link].enqueue(frame);
        if was_empty {
            self.flush(st, link);
        }
    }

    /// Write what a link's socket takes; on a full socket, let the progress thread poll
    /// for POLLOUT.
    pub(super) fn flush(&self, st: &mut State, link: usize) {
        if self.write_out(st, link) {
            self.wake_progress();
        }
    }

    /// Write what a link's socket takes; true if the socket is full (output remains).
    pub(super) fn write_out(&self, st: &mut State, link: usize) -> bool {
        let mut done = Vec::new();
        let r = st.out[link].flush(&mut done);
        for id in done {
            if let Some(p) = st.pending.remove(&id) {
                st.pending_bytes -= p.data.len() as u64;
            }
        }
        match r {
            Ok(Flush::Empty) => false,
            Ok(Flush::Blocked) => true,
            Err(e) => {
                let peer = st.out[link].peer;
                st.out[link].queue.clear();
                if !st.closing {
                    self.fail(
                        st,
                        Error::PeerGone {
                            peer,
                            detail: format!("writing to the link failed: {e}"),
                        },
                    );
                }
                false
            }
        }
    }

    /// Tell the launcher (if any) that this node is blocked or running again.
    pub(super) fn report(&self, msg: &crate::wire::control::ToLauncher) {
        crate::job::report(msg);
    }

    /// Wake parked waiters. Call with the state lock held (after changing the state).
    pub(super) fn notify(&self) {
        if self.parked.load(Ordering::Relaxed) > 0 {
            use std::io::Write;
            let _ = (&self.waiter_tx).write(&[1]);
        }
    }

    pub(super) fn fail(&self, st: &mut State, e: Error) {
        if st.failure.is_none() {
            tracing::error!("{e}");
            if matches!(e, Error::PeerGone { .. } | Error::Protocol { .. }) {
                // The job cannot go on: under a process manager that does not watch
                // every rank for us, this makes it stop them all.
                crate::job::fatal(&e);
            }
            st.failure = Some(e);
        }
        self.notify();
    }

    /// Route a frame towards its destination (or deliver it here).
    pub(super) fn send_frame(
        &self,
        st: &mut State,
        h: Header,
        payload: Parts,
        completes: Option<u64>,
    ) {
        let link = self.route(h.dest);
        self.push(st, link, OutFrame::new(&h, payload, completes));
    }

    /// Mark the job as failing (e.g. the launcher said abort).
    pub(crate) fn abort(&self, e: Error) {
        let mut st = self.lock();
        self.fail(&mut st, e);
    }
}
