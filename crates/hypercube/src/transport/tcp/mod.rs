//! The TCP transport: one socket per hypercube dimension, e-cube forwarding, eager and
//! rendezvous messages with credits, and a progress thread that keeps forwarding while the
//! node program computes.
//!
//! Threads: the caller's thread writes frames itself and, while it waits, reads the sockets
//! itself for a short spin; then it parks and the progress thread (blocked in `poll`)
//! carries on. See `docs/architecture.md`.

mod link;
mod progress;
mod sockopt;
mod tuning;
mod wait;

pub use tuning::Tuning;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;

use hypercube_topology::NodeId;
use link::{Flush, LinkIn, LinkOut, OutFrame, ReadError, ReadOutcome};

use crate::error::{Error, Result};
use crate::ids::HOST;
use crate::mailbox::{Body, Mailbox, NeedCts};
use crate::message::{Message, Select, Status};
use crate::parts::Parts;
use crate::tags;
use crate::transport::{RecvToken, SendToken, Transport};
use crate::wire::frame::{Header, Kind};

/// Per-message overhead charged against eager credit (so empty messages are bounded too).
const EAGER_OVERHEAD: u64 = 64;
/// The token of a send that completed inside `isend` (eager or to this node itself).
const SENT: SendToken = SendToken::MAX;

/// A large send that waits for its clear-to-send or is being written.
struct PendingSend {
    dest: NodeId,
    data: Parts,
}

/// Everything the engine's threads share, under one lock.
pub(crate) struct State {
    mailbox: Mailbox,
    out: Vec<LinkOut>,
    /// Eager bytes we may still send to each node.
    credits: Vec<u64>,
    /// Eager bytes received from each node and consumed, not yet credited back.
    consumed: Vec<u64>,
    pending: HashMap<u64, PendingSend>,
    pending_bytes: u64,
    next_msg_id: u64,
    failure: Option<Error>,
    /// Finalize has begun: EOFs are expected.
    closing: bool,
    /// Per link: the peer sent Close.
    peer_closed: Vec<bool>,
    /// Per link: EOF or error seen; not polled any more.
    link_done: Vec<bool>,
    /// Per node: it has finished and will send nothing more.
    finished: Vec<bool>,
}

/// The engine behind a TCP node.
pub(crate) struct Engine {
    me: NodeId,
    dim: u32,
    num_nodes: u32,
    /// The job has a host process (linked to node 0).
    has_host: bool,
    tuning: Tuning,
    state: Mutex<State>,
    inputs: Vec<Mutex<LinkIn>>,
    wake_tx: UnixStream,
    wake_rx: UnixStream,
    /// Wakes callers parked in `poll` (instead of a condition variable: a parked caller
    /// keeps reading the sockets itself, so an arriving reply wakes it directly rather
    /// than waking the progress thread, which would then wake it).
    waiter_tx: UnixStream,
    waiter_rx: UnixStream,
    stop: AtomicBool,
    /// Threads currently spinning in `wait_for` (reading the sockets themselves). While
    /// there are any, the progress thread leaves the links alone instead of being woken
    /// by every arriving frame — on a 2-core machine that wake-up steals the core the
    /// spinning peer needs.
    spinners: std::sync::atomic::AtomicUsize,
    /// Callers parked in `poll`. Changed and read only under the state lock, so a
    /// notification is skipped (saving a syscall per message) only when nobody waits.
    parked: std::sync::atomic::AtomicUsize,
    /// Counts dispatched frames: a waiter that sees it move knows the job is alive.
    activity: std::sync::atomic::AtomicU64,
    /// When this node last forwarded a frame, in ms since `epoch` (0: never).
    last_forward_ms: std::sync::atomic::AtomicU64,
    /// When a caller's wait last ended without handing the sockets back, in µs since
    /// `epoch` (0: never) — the progress thread keeps off the sockets for a tick after it.
    last_wait_end_us: std::sync::atomic::AtomicU64,
    epoch: std::time::Instant,
    /// Link listener addresses by rank, where known (every rank's under `hcrun`, the
    /// neighbors' under PMI).
    addrs: Vec<Option<SocketAddr>>,
}

/// A node's TCP transport: the engine plus its background threads.
pub struct TcpTransport {
    engine: Arc<Engine>,
    progress: Mutex<Option<JoinHandle<()>>>,
    finalized: AtomicBool,
    /// Set when finalize is done (the control thread then ignores the launcher's EOF).
    pub(crate) done_flag: Arc<AtomicBool>,
}

fn relock<T>(r: std::sync::LockResult<T>) -> T {
    r.unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        relock(self.state.lock())
    }

    /// The link of the e-cube next hop towards `dest` (`topology::ecube_next_hop`). The
    /// host's only link goes to node 0; node 0's link number `dim` goes to the host; other
    /// nodes route host-bound frames towards node 0.
    fn route(&self, dest: NodeId) -> usize {
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
    fn slot(&self, n: NodeId) -> usize {
        if n == HOST {
            self.num_nodes as usize
        } else {
            n as usize
        }
    }

    /// Every node (and the host) except this one.
    fn others(&self) -> impl Iterator<Item = NodeId> + '_ {
        let host = (self.has_host && self.me != HOST).then_some(HOST);
        (0..self.num_nodes)
            .filter(move |n| *n != self.me)
            .chain(host)
    }

    fn wake_progress(&self) {
        use std::io::Write;
        let _ = (&self.wake_tx).write(&[1]);
    }

    /// Queue a frame on a link and try to write it at once.
    fn push(&self, st: &mut State, link: usize, frame: OutFrame) {
        if st.out[link].closed {
            tracing::debug!(link, "dropping a frame for a link we already closed");
            return;
        }
        let was_empty = st.out[link].queue.is_empty();
        st.out[link].queue.push_back(frame);
        if was_empty {
            self.flush(st, link);
        }
    }

    /// Write what a link's socket takes; on a full socket, let the progress thread poll
    /// for POLLOUT.
    fn flush(&self, st: &mut State, link: usize) {
        if self.write_out(st, link) {
            self.wake_progress();
        }
    }

    /// Write what a link's socket takes; true if the socket is full (output remains).
    fn write_out(&self, st: &mut State, link: usize) -> bool {
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
    fn report(&self, msg: &crate::wire::control::ToLauncher) {
        crate::job::report(msg);
    }

    /// Wake parked waiters. Call with the state lock held (after changing the state).
    fn notify(&self) {
        if self.parked.load(Ordering::Relaxed) > 0 {
            use std::io::Write;
            let _ = (&self.waiter_tx).write(&[1]);
        }
    }

    fn fail(&self, st: &mut State, e: Error) {
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
    fn send_frame(&self, st: &mut State, h: Header, payload: Parts, completes: Option<u64>) {
        let link = self.route(h.dest);
        self.push(st, link, OutFrame::new(&h, payload, completes));
    }

    fn issue_cts(&self, st: &mut State, need: Option<NeedCts>) {
        if let Some(n) = need {
            let h = Header::control(Kind::Cts, self.me, n.source, n.msg_id, 0);
            self.send_frame(st, h, Parts::default(), None);
        }
    }

    /// Read one link (the caller holds its input lock) and act on what came.
    fn service_input(&self, inp: &mut LinkIn, link: usize) {
        let res = inp.read(self.num_nodes, self.has_host);
        if matches!(&res, Ok(ReadOutcome::Frames(f)) if f.is_empty()) {
            return;
        }
        let mut st = self.lock();
        let (frames, eof) = match res {
            Ok(ReadOutcome::Frames(f)) => (f, false),
            Ok(ReadOutcome::Eof(f)) => (f, true),
            Err(err) => {
                st.link_done[link] = true;
                let _ = inp.stream.shutdown(std::net::Shutdown::Both);
                let e = match err {
                    ReadError::Protocol(detail) => Error::Protocol {
                        peer: inp.peer,
                        detail,
                    },
                    ReadError::Io(e) => Error::PeerGone {
                        peer: inp.peer,
                        detail: format!("reading the link failed: {e}"),
                    },
                };
                if !st.closing {
                    self.fail(&mut st, e);
                }
                return;
            }
        };
        let any = !frames.is_empty();
        if any {
            self.activity.fetch_add(1, Ordering::Relaxed);
        }
        for (h, payload) in frames {
            self.dispatch(&mut st, link, h, payload);
        }
        if eof && !st.link_done[link] {
            st.link_done[link] = true;
            if !st.peer_closed[link] && !st.closing {
                let e = Error::PeerGone {
                    peer: inp.peer,
                    detail: "the connection closed without a goodbye (the process probably died)"
                        .into(),
                };
                self.fail(&mut st, e);
            }
        }
        if any || eof {
            self.notify();
        }
    }

    fn dispatch(&self, st: &mut State, link: usize, h: Header, payload: Bytes) {
        if h.kind == Kind::Close {
            st.peer_closed[link] = true;
            return;
        }
        if h.dest != self.me {
            // Forward on the e-cube route; the payload is shared, not copied.
            self.send_frame(st, h, payload.into(), None);
            let now = self.epoch.elapsed().as_millis() as u64 + 1;
            self.last_forward_ms.store(now, Ordering::Relaxed);
            return;
        }
        match h.kind {
            Kind::Eager => {
                st.mailbox
                    .arrive(h.src, h.tag, h.total_len, Body::Ready(payload));
            }
            Kind::Rts => {
                let need = st.mailbox.arrive(
                    h.src,
                    h.tag,
                    h.total_len,
                    Body::Pending {
                        msg_id: h.msg_id,
                        buf: None,
                    },
                );
                self.issue_cts(st, need);
            }
            Kind::Cts => self.start_payload(st, h.src, h.msg_id),
            Kind::Data => {
                if let Err(detail) = st.mailbox.data(h.src, h.msg_id, payload) {
                    let peer = st.out[link].peer;
                    self.fail(st, Error::Protocol { peer, detail });
                }
            }
            Kind::Credit => {
                let slot = self.slot(h.src);
                let c = &mut st.credits[slot];
                *c = c.saturating_add(h.total_len).min(self.tuning.eager_window);
            }
            Kind::Fin => {
                let slot = self.slot(h.src);
                st.finished[slot] = true;
            }
            Kind::Close => {}
        }
    }

    /// A receive that can never complete because the nodes it could come from finished.
    fn hopeless(&self, st: &State, token: RecvToken) -> Option<Error> {
        let sel = st.mailbox.unbound_select(token)?;
        self.hopeless_sel(st, &sel)
    }

    /// Can a message matching `sel` still come?
    fn hopeless_sel(&self, st: &State, sel: &Select) -> Option<Error> {
        if sel.ty == crate::message::TypeSel::Is(tags::FINALIZE) {
            return None;
        }
        // Cheap checks first: this runs on every turn of a waiting loop.
        let peer = match sel.source {
            Some(s) if s != self.me && st.finished[self.slot(s)] => s,
            Some(_) => return None,
            None => {
                if !self.others().all(|n| st.finished[self.slot(n)]) {
                    return None;
                }
                self.others().last()?
            }
        };
        let what = describe_type(sel);
        Some(Error::PeerFinished { peer, what })
    }

    /// The receiver is ready for a large message: queue its payload as data frames.
    fn start_payload(&self, st: &mut State, receiver: NodeId, msg_id: u64) {
        let Some(p) = st.pending.get(&msg_id) else {
            let peer = receiver;
            self.fail(
                st,
                Error::Protocol {
                    peer,
                    detail: format!("clear-to-send for unknown message {msg_id}"),
                },
            );
            return;
        };
        if p.dest != receiver {
            self.fail(
                st,
                Error::Protocol {
                    peer: receiver,
                    detail: format!("clear-to-send for message {msg_id} from the wrong node"),
                },
            );
            return;
        }
        let data = p.data.clone();
        let total = data.len() as u64;
        if data.is_empty() {
            st.pending.remove(&msg_id);
            self.notify();
            return;
        }
        let link = self.route(receiver);
        let chunk = self.tuning.chunk;
        let mut off = 0;
        while off < data.len() {
            let end = (off + chunk).min(data.len());
            let last = end == data.len();
            let h = Header {
                kind: Kind::Data,
                src: self.me,
                dest: receiver,
                tag: 0,
                msg_id,
                total_len: total,
                frame_len: (end - off) as u32,
            };
            let frame = OutFrame::new(&h, data.slice(off..end), last.then_some(msg_id));
            // Queue all chunks, then write: push() flushes only when the queue was empty.
            st.out[link].queue.push_back(frame);
            off = end;
        }
        self.flush(st, link);
    }

    /// Account for a consumed eager message and return credit when enough piled up.
    fn consumed(&self, st: &mut State, source: NodeId, len: u64) {
        if source == self.me {
            return;
        }
        let slot = self.slot(source);
        let c = &mut st.consumed[slot];
        *c += len + EAGER_OVERHEAD;
        if *c >= self.tuning.eager_window / 4 {
            let amount = std::mem::take(c);
            let h = Header::control(Kind::Credit, self.me, source, 0, amount);
            self.send_frame(st, h, Parts::default(), None);
        }
    }

    fn take(&self, st: &mut State, token: RecvToken) -> Option<Message> {
        let t = st.mailbox.take(token)?;
        if t.eager {
            self.consumed(st, t.message.source, t.message.data.len() as u64);
        }
        Some(t.message)
    }
}

/// "a message of type 5" — what a receive waits for, without its source.
fn describe_type(sel: &Select) -> String {
    match sel.ty {
        crate::message::TypeSel::Any => "a message of any type".to_string(),
        crate::message::TypeSel::Is(tags::FINALIZE) => {
            "the other ranks to finish (finalize)".to_string()
        }
        crate::message::TypeSel::Is(t) if t > crate::message::MAX_USER_TYPE => {
            "a message of a utility or collective".to_string()
        }
        crate::message::TypeSel::Is(t) => format!("a message of type {t}"),
    }
}

/// "a message of type 5 from node 3" — for reports to the launcher.
fn describe_select(sel: &Select) -> String {
    let what = describe_type(sel);
    match sel.source {
        _ if sel.ty == crate::message::TypeSel::Is(tags::FINALIZE) => what,
        Some(s) if s == HOST => format!("{what} from the host"),
        Some(s) => format!("{what} from node {s}"),
        None => format!("{what} from any node"),
    }
}

impl TcpTransport {
    /// Assemble the engine from established links and start the progress thread.
    pub(crate) fn start(
        me: NodeId,
        dim: u32,
        links: Vec<(NodeId, std::net::TcpStream)>,
        addrs: Vec<Option<SocketAddr>>,
        has_host: bool,
        tuning: Tuning,
    ) -> Result<TcpTransport> {
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
            inputs.push(Mutex::new(LinkIn::new(peer, r)));
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
        let engine = Arc::new(Engine {
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
            spinners: Default::default(),
            parked: Default::default(),
            activity: Default::default(),
            last_forward_ms: Default::default(),
            last_wait_end_us: Default::default(),
            epoch: std::time::Instant::now(),
            addrs,
        });
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

impl Engine {
    /// Mark the job as failing (e.g. the launcher said abort).
    pub(crate) fn abort(&self, e: Error) {
        let mut st = self.lock();
        self.fail(&mut st, e);
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
        let e = &*self.engine;
        let len = data.len() as u64;
        if dest == e.me {
            let mut st = e.lock();
            st.mailbox
                .arrive(dest, tag, len, Body::Ready(data.into_bytes()));
            e.notify();
            return Ok(SENT);
        }
        let cost = len + EAGER_OVERHEAD;
        {
            let mut st = e.lock();
            if let Some(f) = &st.failure {
                return Err(f.duplicate());
            }
            let slot = e.slot(dest);
            if len <= e.tuning.eager_limit as u64 && st.credits[slot] >= cost {
                st.credits[slot] -= cost;
                let h = Header {
                    kind: Kind::Eager,
                    src: e.me,
                    dest,
                    tag,
                    msg_id: 0,
                    total_len: len,
                    frame_len: len as u32,
                };
                e.send_frame(&mut st, h, data, None);
                return Ok(SENT);
            }
        }
        // Rendezvous: announce, keep the bytes until the receiver asks for them. Wait while
        // too many bytes are already pending (at least one send may always be pending).
        let max = e.tuning.max_pending;
        e.wait_for("room for a large send (flow control)", None, |_, st| {
            (st.pending_bytes == 0 || st.pending_bytes + len <= max).then_some(())
        })?;
        let mut st = e.lock();
        let id = st.next_msg_id;
        st.next_msg_id += 1;
        st.pending.insert(id, PendingSend { dest, data });
        st.pending_bytes += len;
        let h = Header {
            kind: Kind::Rts,
            src: e.me,
            dest,
            tag,
            msg_id: id,
            total_len: len,
            frame_len: 0,
        };
        e.send_frame(&mut st, h, Parts::default(), None);
        Ok(id)
    }

    fn test_send(&self, token: SendToken) -> Result<bool> {
        let st = self.engine.lock();
        if let Some(f) = &st.failure {
            return Err(f.duplicate());
        }
        Ok(!st.pending.contains_key(&token))
    }

    fn wait_send(&self, token: SendToken) -> Result<()> {
        if token == SENT {
            // An eager (or local) send is complete when `isend` returns.
            return Ok(());
        }
        let mut gone = None;
        self.engine.wait_for("a send to complete", None, |_, st| {
            match st.pending.get(&token) {
                None => Some(()),
                Some(p) if st.finished[self.engine.slot(p.dest)] => {
                    gone = Some(p.dest);
                    Some(())
                }
                Some(_) => None,
            }
        })?;
        match gone {
            None => Ok(()),
            Some(peer) => Err(Error::PeerFinished {
                peer,
                what: "a receive matching a large send".into(),
            }),
        }
    }

    fn post_recv(&self, sel: Select) -> Result<RecvToken> {
        if let Some(s) = sel.source {
            self.check_dest(s)?;
        }
        let e = &*self.engine;
        let mut st = e.lock();
        let (token, need) = st.mailbox.post(sel);
        e.issue_cts(&mut st, need);
        Ok(token)
    }

    fn test_recv(&self, token: RecvToken) -> Result<Option<Message>> {
        let e = &*self.engine;
        e.poll_inputs();
        let mut st = e.lock();
        if let Some(m) = e.take(&mut st, token) {
            return Ok(Some(m));
        }
        if !st.mailbox.knows(token) {
            return Err(Error::InvalidRequest(format!(
                "receive {token} is not pending"
            )));
        }
        if let Some(f) = &st.failure {
            return Err(f.duplicate());
        }
        Ok(None)
    }

    fn wait_recv(&self, token: RecvToken, timeout: Option<Duration>) -> Result<Message> {
        {
            let st = self.engine.lock();
            if !st.mailbox.knows(token) {
                return Err(Error::InvalidRequest(format!(
                    "receive {token} is not pending"
                )));
            }
        }
        let describe = |st: &State| match st.mailbox.unbound_select(token) {
            Some(sel) => describe_select(&sel),
            None => "the rest of a large message".to_string(),
        };
        let r = self.engine.wait_or_give_up(
            "a message",
            &describe,
            timeout,
            |e, st| e.take(st, token),
            |e, st| e.hopeless(st, token),
        );
        if let Err(Error::PeerFinished { .. }) = r {
            self.engine.lock().mailbox.cancel(token);
        }
        r
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
            e.poll_inputs();
            return Ok(e.lock().mailbox.probe(sel));
        }
        let describe = |_: &State| describe_select(sel);
        e.wait_or_give_up(
            "a message (probe)",
            &describe,
            timeout,
            |_, st| st.mailbox.probe(sel),
            |e, st| e.hopeless_sel(st, sel),
        )
        .map(Some)
    }

    fn claim(&self, status: &Status) -> Result<RecvToken> {
        let e = &*self.engine;
        let mut st = e.lock();
        let Some((token, need)) = st.mailbox.claim(status.id) else {
            return Err(Error::InvalidRequest(
                "the probed message was already received".into(),
            ));
        };
        e.issue_cts(&mut st, need);
        Ok(token)
    }

    fn finalize(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let e = &*self.engine;
        let result = (|| -> Result<()> {
            // 0. Tell every node we are done: a receive waiting for us fails instead of hanging.
            {
                let mut st = e.lock();
                let others: Vec<NodeId> = e.others().collect();
                for n in others {
                    let h = Header::control(Kind::Fin, e.me, n, 0, 0);
                    e.send_frame(&mut st, h, Parts::default(), None);
                }
            }
            // 1. Barrier by recursive doubling over the links: afterwards no node needs
            //    another to forward anything a program will receive.
            // Each exchange posts its receive before waiting for its send, so that a
            // barrier message that had to go by rendezvous still completes.
            let exchange = |peer: NodeId, send: bool, receive: bool| -> Result<()> {
                let t = if send {
                    Some(self.isend(peer, tags::FINALIZE, Parts::default())?)
                } else {
                    None
                };
                if receive {
                    let r = self.post_recv(Select::internal(Some(peer), tags::FINALIZE))?;
                    self.wait_recv(r, None)?;
                }
                t.map_or(Ok(()), |t| self.wait_send(t))
            };
            if e.me == HOST {
                // The host arrives at node 0 and is released by it.
                exchange(0, true, true)?;
            } else {
                if e.me == 0 && e.has_host {
                    exchange(HOST, false, true)?;
                }
                for k in 0..e.dim {
                    exchange(e.me ^ (1 << k), true, true)?;
                }
                if e.me == 0 && e.has_host {
                    exchange(HOST, true, false)?;
                }
            }
            // 2. Flush, say goodbye on every link, and wait for the neighbors' goodbyes.
            e.wait_for("output to drain", Some(Duration::from_secs(30)), |_, st| {
                st.out.iter().all(|o| o.queue.is_empty()).then_some(())
            })?;
            {
                let mut st = e.lock();
                st.closing = true;
                for k in 0..st.out.len() {
                    let peer = st.out[k].peer;
                    let h = Header::control(Kind::Close, e.me, peer, 0, 0);
                    e.push(&mut st, k, OutFrame::new(&h, Parts::default(), None));
                    st.out[k].closed = true;
                }
            }
            e.wait_for(
                "the neighbors' goodbyes",
                Some(Duration::from_secs(30)),
                |_, st| {
                    (st.peer_closed.iter().all(|c| *c) && st.out.iter().all(|o| o.queue.is_empty()))
                        .then_some(())
                },
            )?;
            Ok(())
        })();
        {
            let mut st = e.lock();
            st.closing = true;
            let left = st.mailbox.unreceived();
            let user: Vec<_> = left
                .iter()
                .filter(|s| s.msg_type.0 <= crate::message::MAX_USER_TYPE)
                .collect();
            if !user.is_empty() {
                tracing::warn!(
                    count = user.len(),
                    "messages arrived at node {} that the program never received: {:?}",
                    e.me,
                    user.iter()
                        .take(8)
                        .map(|s| (s.source, s.msg_type.0, s.len))
                        .collect::<Vec<_>>()
                );
            }
        }
        self.done_flag.store(true, Ordering::SeqCst);
        self.stop_progress();
        for o in &e.lock().out {
            let _ = o.stream.shutdown(std::net::Shutdown::Both);
        }
        if result.is_ok() {
            crate::job::finished();
        }
        result
    }

    fn peer_address(&self, node: NodeId) -> Option<SocketAddr> {
        self.engine.addrs.get(node as usize).copied().flatten()
    }
}

impl Drop for TcpTransport {
    fn drop(&mut self) {
        self.stop_progress();
    }
}
