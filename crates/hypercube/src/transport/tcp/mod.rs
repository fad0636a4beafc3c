//! The TCP transport: one socket per hypercube dimension, e-cube forwarding, eager and
//! rendezvous messages with credits, and a progress thread that keeps forwarding while the
//! node program computes.
//!
//! Threads: the caller's thread writes frames itself and, while it waits, reads the sockets
//! itself for a short spin; then it parks and the progress thread (blocked in `poll`)
//! carries on. See `docs/architecture.md`.
//!
//! The rooms: this file is the [`Transport`] implementation and the transport's start-up;
//! `engine.rs` the shared state, routing and output queues; `protocol.rs` sending and
//! receiving (eager, rendezvous, credits); `dispatch.rs` what is done with arrived frames;
//! `sequence.rs` the end-to-end numbering of each pair's frames; `routes.rs` the link state
//! and the routes around dead links, `reroute.rs` what happens when a link dies,
//! `relink.rs` how a dead link comes back; `wait.rs`
//! how a caller waits; `progress.rs` the progress thread; `finalize.rs` leaving the job;
//! `link.rs` one socket's input, `link_out.rs` its output (and the frames kept until
//! acknowledged); `sockopt.rs` socket options; `tuning.rs` the knobs.

mod blocked;
mod claim;
mod describe;
mod dispatch;
mod engine;
mod finalize;
mod link;
mod link_out;
mod link_stats;
mod progress;
mod protocol;
mod relink;
mod reroute;
mod routes;
mod sequence;
mod sockopt;
#[cfg(test)]
pub(crate) mod test_job;
#[cfg(test)]
mod test_wires;
mod tuning;
mod wait;

pub(crate) use engine::Engine;
pub(crate) use relink::{Dialer, Gate, Relink};
pub use tuning::{Tuning, WireKnobs};

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use hypercube_topology::{NodeId, Route};

use engine::relock;

use crate::base::ids::HOST;
use crate::base::landing::Landing;
use crate::base::message::{Message, Select, Status};
use crate::base::parts::Parts;
use crate::error::{Error, Result};
use crate::transport::api::{SendToken, Transport};
use crate::transport::mailbox::RecvToken;

/// A node's TCP transport: the engine plus its background threads.
pub struct TcpTransport {
    engine: Arc<Engine>,
    progress: Mutex<Option<JoinHandle<()>>>,
    finalized: AtomicBool,
    /// Set when finalize is done (the control thread then ignores the launcher's EOF).
    pub(crate) done_flag: Arc<AtomicBool>,
}

/// Payload bytes per data frame on wires: a clear-to-send waits behind at most one such
/// frame of this node's own data (at 100 Mbit/s, 5 ms).
pub(crate) const WIRE_CHUNK: usize = 64 << 10;

/// Room left in the eager window below the wire eager limit, for a frame header's worth
/// of per-message overhead.
const EAGER_HEADROOM: usize = 4 << 10;

/// On wires ([`TcpTransport::links_are_wires`]), frames for other nodes from this many
/// payload bytes on are passed on as they arrive: on a 20 Mbit/s link a 64 KiB frame takes
/// 27 ms to arrive, which a node that waits for the whole of it adds at every hop. One of
/// the three changes that brought the planned many-to-many of Bhatt's Table 5.4 on the
/// emulated 6-cube from 1.21–1.27 to 1.01–1.11 of its busiest link's time ("What brought
/// the 6-cube to its bound" in docs/routing.md).
pub(crate) const WIRE_CUT_THROUGH: usize = 8 << 10;

/// On wires ([`TcpTransport::links_are_wires`]), the bytes of a link's data the kernel may
/// hold unsent (`TCP_NOTSENT_LOWAT`): 16 KiB, under 2 ms at 100 Mbit/s and 0.2 ms at
/// 1 Gbit/s. Measured on the emulated links, a 4 MiB exchange by rendezvous between two
/// nodes, ten calls (slower node, three runs each): 100 Mbit/s 392–495 ms with the kernel's
/// default, 364 ms with 128 KiB, 351–356 ms with 16 KiB; 1 Gbit/s 35–49 ms (five runs),
/// 35–52 ms with 122 KB, 35.1–35.4 ms with 16 KiB. Collectives that send eagerly did not
/// move (4-cube at 100 Mbit/s, all-to-all, allgather and broadcast of 256 KiB–1 MiB;
/// 4-cube at 1 Gbit/s, all-to-all of 64 KiB–1 MiB, where the cores are the limit: within
/// the runs' ±15 %), nor did the comparison with Open MPI (docs/perf/cubenet.md).
pub(crate) const WIRE_UNSENT: usize = 16 << 10;

/// On wires ([`TcpTransport::links_are_wires`]), the congestion control every link asks
/// for, the first the kernel accepts — also with more ranks than cores, where loopback
/// links keep the system's. The system's here is BBR, which on a shaped link cycles its
/// sending rate around its estimate and every few seconds drains the link to measure the
/// round trip: the e-cube all-to-all on the emulated 4-cube at 100 Mbit/s, whose every link
/// carries the same bytes, had links idle for 30–100 ms mid-call, and took 198–209 ms
/// (slowest rank 209–213) at 256 KiB and 794 ms (839–844) at 1 MiB under BBR, 172–173 ms
/// (175) and 706–710 ms (708–715) under CUBIC — the link bound is 176 and 703 ms. The
/// all-to-all broadcast and reduce-scatter at 256 KiB: 80 and 82–83 ms against 89–91 and
/// 87–89; the rooted operations, the all-reduce and everything at 1 Gbit/s (where the
/// cores are the limit) alike (docs/perf/cubenet.md, "CUBIC on wires").
pub(crate) const WIRE_CONGESTION: [&str; 2] = ["cubic", "reno"];

impl TcpTransport {
    /// The links are wires, slow next to the cores (the start-up probe says so: see
    /// `collectives::select::Machine::links_bound`). These changes, each unless its
    /// variable is set ([`Tuning::wire`]):
    ///
    /// - messages up to the eager window (`HYPERCUBE_EAGER_WINDOW`, 4 MiB) go eagerly
    ///   (`HYPERCUBE_EAGER_LIMIT`): a rendezvous costs a request and a clear-to-send, each
    ///   queued behind whatever the link's sender has in flight — in the kernel's socket
    ///   buffer and the link's queue — so that on a slow link every exchange of long
    ///   messages took up to twice its time (all-port allgather on the emulated 4-cube at
    ///   100 Mbit/s, 256 KiB: 120 ms with rendezvous, 79 ms eager — the link bound). The
    ///   credits still bound what a receiver may have to hold per sender (the window);
    /// - larger messages go as [`WIRE_CHUNK`]-byte data frames, between which the
    ///   flow-control frames that the peer's data waits for can go out
    ///   (`LinkOut::enqueue`), unless `HYPERCUBE_CHUNK` sets the size.
    ///
    /// - under cut-through, frames for other nodes are passed on as they arrive from
    ///   [`WIRE_CUT_THROUGH`] bytes on, not 64 KiB (`HYPERCUBE_CUT_THROUGH_MIN`): on a wire a
    ///   frame takes its length's time to arrive, and a node that waits for the whole of
    ///   it before passing it on adds that time at every hop;
    /// - the kernel holds at most [`WIRE_UNSENT`] bytes of a link's data unsent
    ///   (`TCP_NOTSENT_LOWAT`; `HYPERCUBE_TCP_NOTSENT_LOWAT` sets the bytes, 0 the kernel's
    ///   default): the rest waits in the link's queue, behind the flow-control frames. A
    ///   clear-to-send that a node writes after its own long message had started waited
    ///   behind all of it that the socket buffer held — an exchange of 4 MiB messages by
    ///   rendezvous between two nodes at 100 Mbit/s took 392–495 ms on the slower node,
    ///   351–356 ms with 16 KiB (the link bound 351 ms), 364 ms with 128 KiB;
    /// - after a long write ([`link_out::PUSH_FROM`]) every write of the link is pushed out
    ///   at once for a while (`sockopt::push`; `HYPERCUBE_TCP_PUSH=0` keeps the kernel's
    ///   autocorking): the tail of a frame just over 64 KiB waited a packet's
    ///   time behind the rest — an all-to-all of 64 KiB blocks on the emulated 3-cube at
    ///   1 Gbit/s took 4.2–4.6 ms with the kernel's autocorking and 2.4–2.7 ms without;
    /// - every link asks for CUBIC, else Reno ([`WIRE_CONGESTION`]; `HYPERCUBE_TCP_CONGESTION`
    ///   sets the names, `system` keeps the system's), also with more ranks than cores.
    ///
    /// On loopback the defaults (64 KiB eager, 16 MiB frames, 64 KiB cut-through) are
    /// cheaper.
    pub(crate) fn links_are_wires(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let wire = &self.engine.tuning.wire;
        if !wire.chunk_set {
            self.engine.wire_chunk.store(WIRE_CHUNK, Relaxed);
        }
        if !wire.eager_limit_set {
            let window = usize::try_from(self.engine.tuning.eager_window).unwrap_or(usize::MAX);
            let limit = self
                .engine
                .tuning
                .eager_limit
                .max(window - EAGER_HEADROOM.min(window));
            self.engine.wire_eager.store(limit, Relaxed);
        }
        if !wire.cut_through_min_set {
            for input in &self.engine.inputs {
                relock(input.lock()).set_cut_through_min(WIRE_CUT_THROUGH);
            }
        }
        let push = wire.push.unwrap_or(true);
        let unsent = wire.notsent_lowat.unwrap_or(WIRE_UNSENT);
        for out in &mut self.engine.lock().out {
            out.push = push;
            out.limit_unsent(unsent);
            if !wire.congestion_set {
                out.use_congestion(&WIRE_CONGESTION);
            }
        }
    }

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

    /// A receive's named source, if any, is a node of the job ([`TcpTransport::check_dest`]).
    fn check_source(&self, sel: &Select) -> Result<()> {
        sel.source.map_or(Ok(()), |s| self.check_dest(s))
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
        self.engine.send(dest, tag, data, Route::ECUBE)
    }

    fn isend_routed(&self, dest: NodeId, tag: u32, data: Parts, route: Route) -> Result<SendToken> {
        self.check_dest(dest)?;
        if dest == HOST || self.engine.me == HOST {
            return self.engine.send(dest, tag, data, Route::ECUBE);
        }
        if let Some(k) = route.dims().find(|&k| k >= self.engine.dim) {
            return Err(Error::InvalidArgument(format!(
                "a route crosses dimension {k} of a {}-cube",
                self.engine.dim
            )));
        }
        self.engine.send(dest, tag, data, route)
    }

    fn test_send(&self, token: SendToken) -> Result<bool> {
        self.engine.test_send(token)
    }

    fn wait_send(&self, token: SendToken) -> Result<()> {
        self.engine.wait_send(token)
    }

    fn post_recv(&self, sel: Select) -> Result<RecvToken> {
        self.check_source(&sel)?;
        Ok(self.engine.post(sel))
    }

    unsafe fn post_recv_landing(
        &self,
        sel: Select,
        head: (*mut u8, usize),
        tail: (*mut u8, usize),
    ) -> Result<RecvToken> {
        self.check_source(&sel)?;
        // SAFETY: the caller keeps the memory valid and untouched until the receive is
        // taken or abandoned (this trait method's contract), as `Landing::split` requires.
        let landing = unsafe { Landing::split(head, tail) };
        Ok(self.engine.post_landing(sel, landing))
    }

    unsafe fn post_recv_landing_pieces(
        &self,
        sel: Select,
        pieces: &[(*mut u8, usize)],
    ) -> Result<RecvToken> {
        self.check_source(&sel)?;
        // SAFETY: the caller keeps the pieces and their table valid and untouched until
        // the receive is taken or abandoned (this trait method's contract), as
        // `Landing::scattered` requires.
        let landing = unsafe { Landing::scattered(pieces) };
        Ok(self.engine.post_landing(sel, landing))
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
        self.engine.abandon(token);
    }

    fn discard(&self, tags: &[u32]) {
        self.engine.discard(tags);
    }

    fn close(&self, call: u32) {
        self.engine.close(call);
    }

    fn keep(&self, tags: &[u32]) {
        self.engine.lock().mailbox.keep(tags);
    }

    fn release_lent(&self) {
        self.engine.release_lent();
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
            e.after_poll(t0, found.is_some(), || describe::describe_select(sel));
            return Ok(found);
        }
        e.wait_probe(sel, timeout).map(Some)
    }

    fn claim(&self, status: &Status) -> Result<RecvToken> {
        self.engine.claim(status)
    }

    unsafe fn claim_landing(
        &self,
        status: &Status,
        dest: *mut u8,
        len: usize,
    ) -> Result<RecvToken> {
        // SAFETY: as in `post_recv_landing`.
        let landing = unsafe { Landing::from_raw(dest, len) };
        self.engine.claim_landing(status, landing)
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
