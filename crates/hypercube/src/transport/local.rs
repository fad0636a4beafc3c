//! In-process transport: one thread per node, shared mailboxes, optional virtual clock.
//!
//! [`run_local`](crate::local::run_local) runs an SPMD closure on 2^d threads, each with its own [`Node`](crate::Node); every
//! utility and collective runs on it unchanged. [`run_local_timed`](crate::local::run_local_timed) adds the textbook's cost
//! model (Grama §4 intro, §2.5.1; [`CostModel`](crate::collectives::select::CostModel)) as a **virtual clock** per node:
//!
//! - a send occupies the sender's single port for the message's whole time over its
//!   e-cube route, `CostModel::message_over(m, l)`, where **m is the payload length in
//!   bytes** and l the hamming distance between sender and receiver: `t_s + t_w m` to a
//!   neighbour, plus for every link beyond the first `t_h` under cut-through (eq. 2.3) or
//!   `t_h + t_w m` under store-and-forward (eq. 2.2) — the regime and `t_h` of the
//!   [`CostModel`](crate::collectives::select::CostModel) (the first link's header time is part of `t_s`, so neighbour messages
//!   cost chapter 4's `t_s + t_w m` in both regimes). The message is stamped with the
//!   sender's clock after the send;
//! - a receive sets `clock = max(clock, stamp)`; receiving does not occupy the port (the
//!   book's node "can receive a message while sending another");
//! - no congestion: the e-cube routes of the book's algorithms are congestion-free
//!   (§4.5.3, Problem 4.22), and the clock does not model links shared by messages, nor
//!   the intermediate nodes' ports (a forwarded message does not delay what the node
//!   itself sends).
//!
//! With `t_h = 0` under cut-through the cost does not depend on the distance: chapter 4's
//! assumption, and [`CostModel::new`](crate::collectives::select::CostModel::new)'s default.
//!
//! [`run_local_timed_all_port`](crate::local::run_local_timed_all_port) models **all-port**
//! nodes instead (Grama §4.1's closing remarks; the iPSC; the emulated cube of
//! docs/cubenet.md): a node has one port per dimension, and a send occupies the port of
//! the first link of its e-cube route (the lowest differing bit) for `message_over(m, l) −
//! t_s`, starting when both the node and that port are free, while the start-up `t_s`
//! stays the node's own, serial work (the clock advances by `t_s` per send). The message
//! is stamped with its port's finish time, and waiting for a send sets the clock to at
//! least that time. Sends on different ports overlap; sends on one port queue.
//!
//! [`run_local_timed_links`](crate::local::run_local_timed_links) can also shape every
//! directed link with a **token bucket** (`Links::burst`), as `tc tbf` shapes the emulated
//! cube: the bytes of a message that the first link of its route holds tokens for cost
//! nothing, the rest `t_w` each, and the bucket refills at one byte per `t_w` of virtual
//! time up to the burst — so a message after idle time is cheaper than one right behind
//! another (docs/perf/cubenet-model.md compares it with the emulated cube).
//!
//! For a deterministic algorithm the final clock is the algorithm's model time, which is how
//! the tests hold each collective to its equation. [`now`](crate::local::now) reads the calling node's clock.
//!
//! Blocking calls never hang forever: if a node thread panics, every waiting call returns
//! [`Error::PeerGone`]; if every live node waits for a message that nobody can send any more
//! (a deadlock, or a node that returned early), the waits fail with [`Error::PeerGone`] too.
//! The check sees nodes, not threads: a node thread that computes for more than ~100 ms
//! while every node's waits see nothing (a background receiver beside a computation) is
//! taken for a deadlock here, where the TCP transport looks at its process's CPU time.
//!
//! This file is the transport: the `Cube` of shared mailboxes and one [`LocalTransport`]
//! per node; the clock's arithmetic (ports, sends, buckets) is `local_clock.rs`. The
//! driver that starts the threads and gives each one a `Node` lives above `node.rs`, in
//! `crate::local`; the cost model lives beside the algorithm selection that
//! uses it, in [`crate::collectives::select`]. Both keep their old paths here.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::base::message::{Message, Select, Status};
use crate::base::parts::Parts;
use crate::error::{Error, Result};
use crate::transport::api::{SendToken, Transport};
use crate::transport::local_clock::{ClockModel, NodeClock};
use crate::transport::mailbox::RecvToken;
use crate::transport::mailbox::{Body, Mailbox, Stray};

/// How often a blocked call re-checks for failed peers and deadlock.
const POLL: Duration = Duration::from_millis(50);

struct Slot {
    state: Mutex<State>,
    cv: Condvar,
}

#[derive(Default)]
struct State {
    mailbox: Mailbox,
    /// Counted in `Cube::blocked`: waiting, and nothing was delivered since it began.
    waiting: bool,
}

/// The shared state of one in-process cube: every node's mailbox, and what the waits
/// need to see a failed node or a deadlock.
pub(crate) struct Cube {
    dim: u32,
    slots: Vec<Slot>,
    /// The virtual clock's rules (timed cubes only).
    clock: Option<ClockModel>,
    /// Set when a node thread panicked: every wait then fails.
    failed: AtomicBool,
    /// The first node that panicked (u64::MAX: none).
    first_failed: AtomicU64,
    /// Nodes that have not finished yet.
    live: AtomicUsize,
    /// Nodes waiting with nothing delivered to them since they began waiting.
    blocked: AtomicUsize,
    /// Count of sends and finishes: "progress" for the deadlock check.
    progress: AtomicU64,
}

impl Cube {
    /// A cube of `2^dim` nodes, none finished; with a virtual clock if `clock` is given.
    pub(crate) fn new(dim: u32, clock: Option<ClockModel>) -> Arc<Cube> {
        let p = 1usize << dim;
        Arc::new(Cube {
            dim,
            slots: (0..p)
                .map(|_| Slot {
                    state: Mutex::new(State::default()),
                    cv: Condvar::new(),
                })
                .collect(),
            clock,
            failed: AtomicBool::new(false),
            first_failed: AtomicU64::new(u64::MAX),
            live: AtomicUsize::new(p),
            blocked: AtomicUsize::new(0),
            progress: AtomicU64::new(0),
        })
    }

    /// Node `rank`'s end of the cube; `clock` is its virtual clock (read by the driver).
    pub(crate) fn transport(
        self: &Arc<Self>,
        rank: NodeId,
        clock: Arc<Mutex<f64>>,
    ) -> LocalTransport {
        LocalTransport {
            node_clock: NodeClock::new(self.dim, self.clock.as_ref()),
            rank,
            cube: self.clone(),
            clock,
            finished: AtomicBool::new(false),
        }
    }

    /// Node `rank`'s thread is unwinding: every wait of every node now fails.
    pub(crate) fn node_panicked(&self, rank: NodeId) {
        let _ = self.first_failed.compare_exchange(
            u64::MAX,
            rank as u64,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        self.failed.store(true, Ordering::SeqCst);
        self.wake_all();
    }

    /// The first node whose thread panicked, if any.
    pub(crate) fn first_failed(&self) -> Option<NodeId> {
        match self.first_failed.load(Ordering::SeqCst) {
            u64::MAX => None,
            r => Some(r as NodeId),
        }
    }

    fn lock(&self, rank: NodeId) -> MutexGuard<'_, State> {
        self.slots[rank as usize]
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Deliver a message from `from` into `dest`'s mailbox (a timed cube's stamp behind
    /// its `len` bytes) and wake `dest`; the strays its mailbox dropped
    /// (`Mailbox::close`).
    fn put(&self, from: NodeId, dest: NodeId, tag: u32, len: u64, body: Bytes) -> Vec<Stray> {
        let mut st = self.lock(dest);
        // The mailbox records the user-visible length; the stamp rides behind it.
        let _ = st.mailbox.arrive(from, tag, len, Body::Ready(body));
        // No eager credit here: a dropped message (of a discarded tag) owes nothing.
        st.mailbox.take_dropped();
        if st.waiting {
            st.waiting = false;
            self.blocked.fetch_sub(1, Ordering::SeqCst);
        }
        self.progress.fetch_add(1, Ordering::SeqCst);
        self.slots[dest as usize].cv.notify_all();
        st.mailbox.take_strays()
    }

    /// Node `at` dropped `strays` (messages of calls whose part there had ended): send
    /// each call's other members a failure notice from `at` (`base/notice.rs`), with a
    /// zero clock stamp on a timed cube (a notice takes no model time).
    fn tell_strays(&self, at: NodeId, strays: Vec<Stray>) {
        for s in strays {
            let (tag, members, notice) = crate::base::notice::stray(at, s.source, s.call);
            let len = notice.len() as u64;
            let body = match self.clock {
                Some(_) => [&notice[..], &0f64.to_le_bytes()].concat().into(),
                None => notice,
            };
            for m in members {
                // A notice is never a stray: a closed call's notices are dropped quietly.
                let _ = self.put(at, m, tag, len, body.clone());
            }
        }
    }

    fn wake_all(&self) {
        for s in &self.slots {
            let _g = s.state.lock().unwrap_or_else(|p| p.into_inner());
            s.cv.notify_all();
        }
    }
}

/// One node's end of the in-process cube.
pub struct LocalTransport {
    /// Its ports, sends and links under the virtual clock (`local_clock.rs`).
    node_clock: NodeClock,
    rank: NodeId,
    cube: Arc<Cube>,
    clock: Arc<Mutex<f64>>,
    finished: AtomicBool,
}

impl LocalTransport {
    fn timed(&self) -> Option<&ClockModel> {
        self.cube.clock.as_ref()
    }

    fn gone(&self, what: &str) -> Error {
        let peer = self.cube.first_failed.load(Ordering::SeqCst);
        Error::PeerGone {
            peer: if peer == u64::MAX {
                self.rank
            } else {
                peer as NodeId
            },
            detail: what.to_string(),
        }
    }

    /// Unpack a message: strip the clock stamp (timed cubes) and advance the clock.
    fn deliver(&self, mut m: Message) -> Message {
        if self.timed().is_some() {
            let n = m.data.len();
            let mut stamp = [0u8; 8];
            stamp.copy_from_slice(&m.data[n - 8..]);
            m.data.truncate(n - 8);
            let stamp = f64::from_le_bytes(stamp);
            let mut c = self.clock.lock().unwrap_or_else(|p| p.into_inner());
            *c = c.max(stamp);
        }
        m
    }

    /// Block on our own mailbox until `ready` yields a value, a peer fails, the deadline
    /// passes or every live node waits with nothing delivered to it (deadlock).
    fn wait_for<R>(
        &self,
        timeout: Option<Duration>,
        what: &str,
        mut ready: impl FnMut(&mut Mailbox) -> Result<Option<R>>,
    ) -> Result<R> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let slot = &self.cube.slots[self.rank as usize];
        let mut st = self.cube.lock(self.rank);
        let mut seen = u64::MAX;
        let mut strikes = 0;
        let result = loop {
            match ready(&mut st.mailbox) {
                Ok(None) => {}
                other => break other,
            }
            if self.cube.failed.load(Ordering::SeqCst) {
                break Err(self.gone(&format!(
                    "a node thread panicked while this node waited for {what}"
                )));
            }
            if !st.waiting {
                st.waiting = true;
                self.cube.blocked.fetch_add(1, Ordering::SeqCst);
            }
            let progress = self.cube.progress.load(Ordering::SeqCst);
            let live = self.cube.live.load(Ordering::SeqCst);
            let blocked = self.cube.blocked.load(Ordering::SeqCst);
            // Every live node waits, and none has had a message delivered since it looked
            // at its mailbox (twice in a row, with no send in between): nobody can ever
            // send what they wait for.
            if blocked >= live && progress == seen {
                strikes += 1;
                if strikes >= 2 {
                    break Err(self.gone(&format!(
                        "deadlock: every live node waits and none can send ({what})"
                    )));
                }
            } else {
                strikes = 0;
            }
            seen = progress;
            let mut wait = POLL;
            if let Some(d) = deadline {
                let now = Instant::now();
                if now >= d {
                    break Err(Error::Timeout {
                        what: what.to_string(),
                        timeout_ms: timeout.map_or(0, |t| t.as_millis() as u64),
                    });
                }
                wait = wait.min(d - now);
            }
            st = slot
                .cv
                .wait_timeout(st, wait)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        };
        if st.waiting {
            st.waiting = false;
            self.cube.blocked.fetch_sub(1, Ordering::SeqCst);
        }
        result.and_then(|r| r.ok_or_else(|| Error::InvalidRequest("nothing to wait for".into())))
    }

    fn finish(&self) {
        if !self.finished.swap(true, Ordering::SeqCst) {
            self.cube.live.fetch_sub(1, Ordering::SeqCst);
            self.cube.progress.fetch_add(1, Ordering::SeqCst);
            self.cube.wake_all();
        }
    }
}

impl Transport for LocalTransport {
    fn rank(&self) -> NodeId {
        self.rank
    }

    fn dim(&self) -> u32 {
        self.cube.dim
    }

    fn isend(&self, dest: NodeId, tag: u32, data: Parts) -> Result<SendToken> {
        let data = data.into_bytes();
        let p = self.cube.slots.len() as u32;
        if dest >= p {
            return Err(Error::InvalidNode {
                node: dest as i64,
                what: format!("cube of dimension {}", self.cube.dim),
                first: 0,
                last: p - 1,
            });
        }
        let len = data.len() as u64;
        let mut token = 0;
        let body = match self.timed() {
            Some(model) => {
                let (stamp, t) =
                    self.node_clock
                        .send(model, &self.clock, (self.rank, dest), data.len());
                token = t;
                let mut b = BytesMut::with_capacity(data.len() + 8);
                b.extend_from_slice(&data);
                b.extend_from_slice(&stamp.to_le_bytes());
                b.freeze()
            }
            None => data,
        };
        let strays = self.cube.put(self.rank, dest, tag, len, body);
        self.cube.tell_strays(dest, strays);
        Ok(token)
    }

    fn test_send(&self, _token: SendToken) -> Result<bool> {
        Ok(true)
    }

    fn wait_send(&self, token: SendToken) -> Result<()> {
        self.node_clock.wait_send(&self.clock, token);
        Ok(())
    }

    fn post_recv(&self, sel: Select) -> Result<RecvToken> {
        Ok(self.cube.lock(self.rank).mailbox.post(sel).0)
    }

    fn test_recv(&self, token: RecvToken) -> Result<Option<Message>> {
        let taken = {
            let mut st = self.cube.lock(self.rank);
            if !st.mailbox.knows(token) {
                return Err(Error::InvalidRequest(format!("unknown receive {token}")));
            }
            st.mailbox.take(token)
        };
        Ok(taken.map(|t| self.deliver(t.message)))
    }

    fn wait_recv(&self, token: RecvToken, timeout: Option<Duration>) -> Result<Message> {
        let m = self.wait_for(timeout, "a message", |mb| {
            if !mb.knows(token) {
                return Err(Error::InvalidRequest(format!("unknown receive {token}")));
            }
            Ok(mb.take(token).map(|t| t.message))
        })?;
        Ok(self.deliver(m))
    }

    fn cancel_recv(&self, token: RecvToken) -> bool {
        self.cube.lock(self.rank).mailbox.cancel(token)
    }

    fn abandon_recv(&self, token: RecvToken) {
        let mut st = self.cube.lock(self.rank);
        st.mailbox.abandon(token);
        st.mailbox.take_dropped();
        drop(st);
        // Its message may have gone to another posted receive, waited for on another
        // thread.
        self.cube.slots[self.rank as usize].cv.notify_all();
    }

    fn discard(&self, tags: &[u32]) {
        // Every message here is complete: nothing to ask for, nothing to credit. Dropping
        // them lets go of lent memory (`collectives/lend.rs`) they point at.
        let mut st = self.cube.lock(self.rank);
        let _ = st.mailbox.discard(tags);
        st.mailbox.take_dropped();
    }

    fn close(&self, call: u32) {
        // Every message here is complete: no clear-to-send to issue.
        let strays = {
            let mut st = self.cube.lock(self.rank);
            let _ = st.mailbox.close(call);
            st.mailbox.take_dropped();
            st.mailbox.take_strays()
        };
        self.cube.tell_strays(self.rank, strays);
    }

    fn keep(&self, tags: &[u32]) {
        self.cube.lock(self.rank).mailbox.keep(tags);
    }

    fn probe(
        &self,
        sel: &Select,
        block: bool,
        timeout: Option<Duration>,
    ) -> Result<Option<Status>> {
        if !block {
            return Ok(self.cube.lock(self.rank).mailbox.probe(sel));
        }
        self.wait_for(timeout, "a message to probe", |mb| {
            Ok(mb.probe(sel).map(Some))
        })
    }

    fn claim(&self, status: &Status) -> Result<RecvToken> {
        self.cube
            .lock(self.rank)
            .mailbox
            .claim(status.id)
            .map(|(t, _)| t)
            .ok_or_else(|| Error::InvalidRequest("the probed message was already taken".into()))
    }

    fn finalize(&self) -> Result<()> {
        self.finish();
        Ok(())
    }
}

impl Drop for LocalTransport {
    fn drop(&mut self) {
        self.finish();
    }
}
