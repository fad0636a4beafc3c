//! The engine's state and plumbing: the one lock over the mailbox, output queues, credits
//! and pending sends ([`State`]); which link a frame leaves on ([`Engine::route`]);
//! queuing and writing frames; failure and wake-ups. The message protocol that runs on it
//! is `protocol.rs`, how callers wait `wait.rs`, the progress thread `progress.rs`.

use rustc_hash::FxHashMap;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use hypercube_topology::{NodeId, Route};

use super::claim::Claims;
use super::link::{Flush, LinkIn, LinkOut, OutFrame};
use super::routes::Routes;
use super::sequence::Streams;
use super::sockopt;
use super::tuning::Tuning;
use crate::base::ids::HOST;
use crate::base::parts::Parts;
use crate::error::{Error, Result};
use crate::transport::mailbox::Mailbox;
use crate::wire::frame::Header;

/// A large send that waits for its clear-to-send or is being written.
pub(super) struct PendingSend {
    pub(super) dest: NodeId,
    pub(super) data: Parts,
    /// The route its data frames take (the one its request took).
    pub(super) route: Route,
}

/// Everything the engine's threads share, under one lock.
pub(crate) struct State {
    pub(super) mailbox: Mailbox,
    pub(super) out: Vec<LinkOut>,
    /// Eager bytes we may still send to each node.
    pub(super) credits: Vec<u64>,
    /// Eager bytes received from each node and consumed, not yet credited back.
    pub(super) consumed: Vec<u64>,
    pub(super) pending: FxHashMap<u64, PendingSend>,
    pub(super) pending_bytes: u64,
    pub(super) next_msg_id: u64,
    pub(super) failure: Option<Error>,
    /// Finalize has begun: EOFs are expected.
    pub(super) closing: bool,
    /// Per link: the peer sent Close.
    pub(super) peer_closed: Vec<bool>,
    /// Per link: EOF or error seen; not polled any more.
    pub(super) link_done: Vec<bool>,
    /// Per node: it has finished and will send nothing more, and every message it sent
    /// here has arrived.
    pub(super) finished: Vec<bool>,
    /// Per node: the messages (eager or announced) this node sent it.
    pub(super) sent_to: Vec<u64>,
    /// Per node: the messages (eager or announced) that arrived from it.
    pub(super) arrived_from: Vec<u64>,
    /// Per node: how many messages its `Fin` said it sent here (`None`: no `Fin` yet).
    /// Messages on different routes may arrive after the `Fin`: the node is finished
    /// when all of them are in.
    pub(super) fin_count: Vec<Option<u64>>,
    /// The link state known here, and the routes around the links down (`routes.rs`).
    pub(super) routes: Routes,
    /// The numbered frames of each pair, both ways (`sequence.rs`).
    pub(super) streams: Streams,
    /// The frames being read into a receive's memory now, and by which link (`claim.rs`).
    pub(super) claims: Claims,
    /// Per link: declared dead here (`reroute.rs`); nothing goes out on it.
    pub(super) dead: Vec<bool>,
    /// Per link: a dead link whose input side is still to be abandoned (by a thread that
    /// may take its input lock: `Engine::abandon_inputs`).
    pub(super) abandon: Vec<bool>,
    /// Per link: the reports this node has made about it (its link state number).
    pub(super) reports: Vec<u64>,
    /// Per link: frames received whole on it, as its reader last said.
    pub(super) frames_in: Vec<u64>,
    /// Per link: frames received whole that this node has acknowledged (`Kind::Ack`).
    pub(super) acked_in: Vec<u64>,
    /// Per link: bytes read when this node last acknowledged.
    pub(super) acked_bytes: Vec<u64>,
    /// Per link: `frames_in` when the progress thread last looked (an idle link's frames
    /// are acknowledged at its next look).
    pub(super) looked_in: Vec<u64>,
    /// Per node: it has passed the finalize barrier (`Kind::Left`, flooded).
    pub(super) left: Vec<bool>,
}

/// The engine behind a TCP node.
pub(crate) struct Engine {
    pub(super) me: NodeId,
    pub(super) dim: u32,
    pub(super) num_nodes: u32,
    /// The job has a host process (linked to node 0).
    pub(super) has_host: bool,
    pub(super) tuning: Tuning,
    /// Print every link's frames by kind at finalize (`HYPERCUBE_LINK_STATS=1`,
    /// `link_stats.rs`).
    pub(super) link_stats: bool,
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
    /// Callers parked in `poll`. Incremented and read under the state lock, so a
    /// notification is skipped (saving a syscall per message) only when nobody waits;
    /// decremented by the caller itself as soon as its `poll` returns (it looks at the
    /// state again before it parks again, so a notification missed then is not needed).
    pub(super) parked: AtomicUsize,
    /// The progress thread sleeps until woken because callers are parked (`progress.rs`):
    /// the last of them to leave its wait wakes it (`wait.rs`, `HandBack`).
    pub(super) progress_asleep: AtomicBool,
    /// A receive may wait with a landing: links read a frame's header alone first
    /// (`LinkIn::header_first`), so that its payload lands whole. Set by `post_landing`;
    /// cleared when a header is looked at while the mailbox has no landing.
    pub(super) landing_hint: AtomicBool,
    /// Counts dispatched frames: a waiter that sees it move knows the job is alive.
    pub(super) activity: AtomicU64,
    /// When this node last forwarded a frame, in ms since `epoch` (0: never).
    pub(super) last_forward_ms: AtomicU64,
    /// When a caller's wait last ended without handing the sockets back, in µs since
    /// `epoch` (0: never) — the progress thread keeps off the sockets for a tick after it.
    pub(super) last_wait_end_us: AtomicU64,
    /// When the progress thread last looked for quiet links to acknowledge (µs after
    /// `epoch`; `reroute.rs`, `ack_idle`).
    pub(super) ack_looked_us: AtomicU64,
    pub(super) epoch: Instant,
    /// The current streak of non-blocking polls that found nothing (`blocked.rs`).
    pub(super) polls: super::blocked::Polls,
    /// Link listener addresses by rank, where known (every rank's under `hcrun`, the
    /// neighbors' under PMI).
    pub(super) addrs: Vec<Option<SocketAddr>>,
    /// Some link of the cube is down: frames are read whole before they go on (no
    /// cut-through while routes make detours).
    pub(super) detour: AtomicBool,
    /// A link was declared dead whose input side is still to be abandoned
    /// (`Engine::abandon_inputs`).
    pub(super) abandoning: AtomicBool,
    /// How dead links come back, once start-up has handed the link acceptor over
    /// (`relink.rs`); unset: they stay dead.
    pub(super) relinking: std::sync::OnceLock<super::relink::Relinking>,
}

pub(super) use crate::transport::api::relock;

/// Set a link socket up: non-blocking, no Nagle, the buffers, congestion control and
/// liveness bound of `tuning` (`sockopt.rs`).
fn configure(s: &TcpStream, peer: NodeId, tuning: &Tuning) -> Result<()> {
    s.set_nonblocking(true)
        .map_err(|e| Error::io("configuring a link", e))?;
    let _ = s.set_nodelay(true);
    sockopt::set_buffers(s, tuning.socket_buffer);
    sockopt::set_congestion(s, &tuning.congestion);
    if let Err(e) = sockopt::set_liveness(s, tuning.link_timeout) {
        // Only the bound is lost (the kernel's own, many minutes, stays).
        tracing::warn!(
            "the link to node {peer} has no liveness bound ({e}): a dead link may go \
             unnoticed for minutes"
        );
    }
    Ok(())
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
            configure(&s, peer, &tuning)?;
            let r = s
                .try_clone()
                .map_err(|e| Error::io("cloning a link socket", e))?;
            out.push(LinkOut::new(peer, s));
            let cut_through = (tuning.forwarding
                == crate::transport::forwarding::Forwarding::CutThrough)
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
            pending: FxHashMap::default(),
            pending_bytes: 0,
            next_msg_id: 0,
            failure: None,
            closing: false,
            peer_closed: vec![false; nlinks],
            link_done: vec![false; nlinks],
            finished: vec![false; num_nodes as usize + 1],
            sent_to: vec![0; num_nodes as usize + 1],
            arrived_from: vec![0; num_nodes as usize + 1],
            fin_count: vec![None; num_nodes as usize + 1],
            routes: Routes::default(),
            streams: Streams::new(num_nodes as usize + 1),
            claims: Claims::default(),
            dead: vec![false; nlinks],
            abandon: vec![false; nlinks],
            reports: vec![0; nlinks],
            frames_in: vec![0; nlinks],
            acked_in: vec![0; nlinks],
            acked_bytes: vec![0; nlinks],
            looked_in: vec![0; nlinks],
            left: vec![false; num_nodes as usize + 1],
        };
        Ok(Engine {
            me,
            dim,
            num_nodes,
            has_host,
            tuning,
            link_stats: super::link_stats::wanted()?,
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
            progress_asleep: Default::default(),
            landing_hint: Default::default(),
            activity: Default::default(),
            last_forward_ms: Default::default(),
            last_wait_end_us: Default::default(),
            ack_looked_us: Default::default(),
            epoch: Instant::now(),
            polls: Default::default(),
            addrs,
            detour: AtomicBool::new(false),
            abandoning: AtomicBool::new(false),
            relinking: std::sync::OnceLock::new(),
        })
    }

    /// Set up a link socket to `peer` (one that comes back: `relink.rs`).
    pub(super) fn configure(&self, s: &TcpStream, peer: NodeId) -> Result<()> {
        configure(s, peer, &self.tuning)
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        relock(self.state.lock())
    }

    /// The link of the next hop towards `dest`: the e-cube one while its path is whole, else
    /// one around the links down (`routes.rs`); `None`: `dest` cannot be reached. The host's
    /// only link goes to node 0; node 0's link number `dim` goes to the host; other nodes
    /// route host-bound frames towards node 0.
    pub(super) fn route(&self, st: &mut State, dest: NodeId) -> Option<usize> {
        if self.me == HOST {
            return Some(0);
        }
        if dest == HOST && self.me == 0 {
            return Some(self.dim as usize);
        }
        let target = if dest == HOST { 0 } else { dest };
        if st.routes.all_up() {
            let next = hypercube_topology::ecube_next_hop(self.me, target).unwrap_or(self.me);
            return Some((self.me ^ next).trailing_zeros() as usize);
        }
        st.routes
            .next_hop(self.me, self.dim, target)
            .map(|k| k as usize)
    }

    /// The link a frame leaves this node on: the first hop its route lists (unless that
    /// link is down), else [`Engine::route`]. Frames to or from the host follow e-cube.
    pub(super) fn next_link(&self, st: &mut State, h: &Header) -> Option<usize> {
        match h.route.first() {
            Some(k) if self.me != HOST && h.dest != HOST && !st.routes.is_down(self.me, k) => {
                Some(k as usize)
            }
            _ => self.route(st, h.dest),
        }
    }

    /// [`Engine::next_link`], and the header as it goes out: its route without that hop
    /// (no route at all once it leaves the listed hops for a detour).
    pub(super) fn hop(&self, st: &mut State, h: &mut Header) -> Option<usize> {
        let listed = h
            .route
            .first()
            .is_some_and(|k| self.me != HOST && h.dest != HOST && !st.routes.is_down(self.me, k));
        let link = self.next_link(st, h);
        h.route = if listed { h.route.rest() } else { Route::ECUBE };
        link
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
        if st.out[link].closed || st.dead[link] {
            tracing::debug!(link, "dropping a frame for a link closed or dead");
            return;
        }
        let was_empty = st.out[link].queue.is_empty();
        self.queue(st, link, frame);
        if was_empty {
            self.flush(st, link);
        }
    }

    /// Queue a frame on a link, ranked by the links it still has to cross
    /// ([`LinkOut::enqueue`]), without writing.
    pub(super) fn queue(&self, st: &mut State, link: usize, mut frame: OutFrame) {
        frame.hops = self.hops_left(link, &frame.head);
        st.out[link].enqueue(frame);
    }

    /// Links a frame leaving on `link` with header `h` (its route after that link) still
    /// has to cross, that link included: its listed hops, then e-cube (`Route::hops`).
    fn hops_left(&self, link: usize, h: &Header) -> u32 {
        if self.me == HOST || link >= self.dim as usize {
            return 1;
        }
        let next = hypercube_topology::neighbor(self.me, link as u32);
        let target = if h.dest == HOST { 0 } else { h.dest };
        1 + h.route.hops(next, target)
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
                if !st.closing {
                    let err = self.link_error(st, link, peer, "writing to", &e);
                    // As a read error: on a link that came back and is not confirmed yet,
                    // a reset means the new connection did not take (`relink.rs`).
                    let err = self.unconfirmed(st, link, err);
                    if !self.link_down(st, link, &err) {
                        st.out[link].queue.clear();
                        self.fail(st, err);
                    }
                } else {
                    st.out[link].queue.clear();
                }
                false
            }
        }
    }

    /// Whether a live link holds bytes its neighbor has not taken yet: frames queued here,
    /// or bytes in the socket not acknowledged by the neighbor's kernel. A node waiting
    /// then waits on a link, not on a program, and is not reported blocked to the
    /// launcher's deadlock detector: within the link timeout the bytes go, or the link is
    /// declared dead ([`Error::LinkDead`]) — the verdict a dead link deserves, not
    /// "deadlock". Costs an `ioctl` per link; called only when a wait is to be reported.
    pub(super) fn link_stalled(&self, st: &State) -> bool {
        st.out.iter().enumerate().any(|(k, o)| {
            !st.link_done[k]
                && !o.closed
                && (!o.queue.is_empty() || sockopt::unacknowledged(&o.stream) > 0)
        })
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
            self.relink_no_more();
            if matches!(
                e,
                Error::PeerGone { .. } | Error::Protocol { .. } | Error::LinkDead { .. }
            ) {
                // The job cannot go on: under a process manager that does not watch
                // every rank for us, this makes it stop them all.
                crate::job::fatal(&e);
            }
            st.failure = Some(e);
        }
        self.notify();
    }

    /// Send a frame on its way: along the hops its route lists, then e-cube (or around the
    /// links down). A frame for a node that cannot be reached fails the job.
    pub(super) fn send_frame(
        &self,
        st: &mut State,
        mut h: Header,
        payload: Parts,
        completes: Option<u64>,
    ) {
        match self.hop(st, &mut h) {
            Some(link) => self.push(st, link, OutFrame::new(&h, payload, completes)),
            None => self.unreachable(st, h.dest),
        }
    }

    /// Send a frame this node originates (not one it forwards): it takes the next number of
    /// its pair's stream (`sequence.rs`).
    pub(super) fn originate(
        &self,
        st: &mut State,
        mut h: Header,
        payload: Parts,
        completes: Option<u64>,
    ) {
        let slot = self.slot(h.dest);
        st.streams.number(slot, &mut h);
        self.send_frame(st, h, payload, completes);
    }

    /// Mark the job as failing (e.g. the launcher said abort).
    pub(crate) fn abort(&self, e: Error) {
        let mut st = self.lock();
        self.fail(&mut st, e);
    }
}
