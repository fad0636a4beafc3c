//! The output side of a link: a queue of frames written with gather `sendmsg` calls, and
//! the frames written but not yet acknowledged by the neighbor, kept for a resend on
//! another path should the link die (`docs/reliability.md`, "Rerouting"). It lives in the
//! engine's state.
//!
//! Cut-through: a frame passed on while its bytes still arrive is *open* ([`OutFrame::open`]),
//! written as far as its bytes have come, with the frames queued behind it waiting
//! (`docs/architecture.md`, "Forwarding").

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use bytes::Bytes;
use hypercube_topology::NodeId;
use smallvec::SmallVec;

use crate::base::parts::Parts;
use crate::wire::frame::{Header, Kind, HEADER_LEN};

/// A frame waiting to be written.
pub(crate) struct OutFrame {
    /// The header as it goes out on this link.
    pub head: Header,
    pub header: [u8; HEADER_LEN],
    /// The payload bytes at hand (all of them unless the frame is open).
    pub payload: Parts,
    /// Header + payload bytes, as the header declares them.
    len: usize,
    /// Bytes of header + payload already written.
    pub written: usize,
    /// When this frame is written, the send with this id is complete.
    pub completes: Option<u64>,
    /// Cut-through: the input link whose bytes this frame still waits for (`None`: the
    /// payload is complete).
    pub open: Option<usize>,
    /// A flow-control frame (clear-to-send, credit, acknowledgement, link state): it goes
    /// ahead of every frame not yet begun ([`LinkOut::enqueue`]).
    pub urgent: bool,
    /// Links still to cross, this one included (set by the engine when it queues the
    /// frame): frames with further to go are written first ([`LinkOut::enqueue`]).
    pub(crate) hops: u32,
    /// Bytes of frames queued after this one that went ahead of it (at most
    /// [`OVERTAKE_MAX`]; 0 for a new frame and a resent one).
    overtaken: usize,
    /// Open: this node ends the frame with its trailer byte (the frame it passes on has
    /// none of its own).
    adds_trailer: bool,
}

impl OutFrame {
    /// The payload with whatever of it points into lent memory whose lender is returning
    /// copied (`base::lent::unlent`).
    fn unlend(&mut self) {
        self.payload = crate::base::lent::unlent(std::mem::take(&mut self.payload));
    }

    pub fn new(h: &Header, payload: Parts, completes: Option<u64>) -> OutFrame {
        let h = &Header {
            ack_now: h.ack_now || crate::base::lent::any_lent(&payload),
            ..*h
        };
        OutFrame {
            head: *h,
            header: h.encode(),
            len: HEADER_LEN + payload.len(),
            payload,
            written: 0,
            completes,
            open: None,
            urgent: matches!(h.kind, Kind::Cts | Kind::Credit | Kind::Ack | Kind::Link),
            hops: 0,
            overtaken: 0,
            adds_trailer: false,
        }
    }

    /// A frame passed on while its body still arrives on input link `from`: `first` is
    /// what came so far; [`OutFrame::extend`] adds the rest. It always goes out with a
    /// trailer (`wire/frame.rs`): its own, or one this node adds.
    pub fn open(h: &Header, first: Bytes, from: usize) -> OutFrame {
        let head = Header {
            trailer: true,
            ..*h
        };
        OutFrame {
            head,
            header: head.encode(),
            len: HEADER_LEN + head.body_len(),
            payload: Parts::One(first),
            written: 0,
            completes: None,
            open: Some(from),
            urgent: false,
            hops: 0,
            overtaken: 0,
            adds_trailer: !h.trailer,
        }
    }

    /// More bytes of an open frame; `last`: its body is now complete.
    pub fn extend(&mut self, more: Bytes, last: bool) {
        self.payload.push(more);
        if last {
            if self.adds_trailer {
                self.payload.push(Bytes::from_static(&[1]));
            }
            self.open = None;
        }
    }

    /// The link feeding this open frame died: pad its payload with zeros and end it with
    /// the void trailer, so that whoever reads it whole drops it. `owed`: the bytes of its
    /// body (its own trailer included, if it has one) that will never come.
    pub fn void(&mut self, owed: usize) {
        let pad = owed - usize::from(!self.adds_trailer && owed > 0);
        if pad > 0 {
            self.payload.push(Bytes::from(vec![0u8; pad]));
        }
        self.payload.push(Bytes::from_static(&[0]));
        self.open = None;
    }

    /// The frame to send again from the start, on another link, with header `h` (a kept
    /// frame's send completed when it was first written; a queued one's completes when
    /// this is).
    pub fn resend(self, h: &Header) -> OutFrame {
        OutFrame {
            head: *h,
            header: h.encode(),
            written: 0,
            // A new entry in a queue: nothing has passed it there yet.
            overtaken: 0,
            ..self
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    /// Header and payload bytes at hand (less than [`OutFrame::len`] while open).
    fn available(&self) -> usize {
        HEADER_LEN + self.payload.len()
    }

    /// Append what is left to write of this frame to `slices`, stopping at `max` slices.
    fn unwritten<'a>(&'a self, slices: &mut Slices<'a>, max: usize) {
        let mut skip = self.written;
        if skip < HEADER_LEN {
            slices.push(IoSlice::new(&self.header[skip..]));
            skip = 0;
        } else {
            skip -= HEADER_LEN;
        }
        for part in self.payload.iter() {
            if slices.len() >= max {
                return;
            }
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            slices.push(IoSlice::new(&part[skip..]));
            skip = 0;
        }
    }
}

/// On wires ([`LinkOut::push`]) a flush that writes this many bytes, or ends a frame this
/// long, opens a [`PUSH_WINDOW`] in which every flush of the link is pushed: the link's
/// packets may then wait in a queue of the host, and autocorking would hold back every
/// short write behind them — the tail of a long frame (the socket may take a long frame in
/// several writes), and the short frames that follow it (a barrier's, an acknowledgement).
/// Links that carry only short frames are not pushed: the extra system call per message
/// cost 5–10 % on 8 B and 1 KiB collectives on the emulated 3-cube at 1 Gbit/s (slowest
/// rank, five alternations: scan 8 B 236 against 225 µs, gather 8 B 238 against 216,
/// allgather 1 KiB 216 against 198), where pushing every write took the 64 KiB all-to-all
/// from 4.2–6.0 to 2.3–2.9 ms.
pub(crate) const PUSH_FROM: usize = 32 << 10;

/// How long after a long write a link's writes are pushed ([`PUSH_FROM`]): longer than a
/// 64 KiB packet takes on the slowest link worth pushing for (5 ms at 100 Mbit/s).
pub(crate) const PUSH_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);

/// The buffers of one gather write: a short message's header and payload, or a few
/// frames', fit on the stack (a heap allocation per write was ~7 % of the instructions a
/// small message costs its sender, `docs/perf/analysis.md`).
type Slices<'a> = SmallVec<[IoSlice<'a>; 8]>;

/// The output side of a link.
pub(crate) struct LinkOut {
    pub peer: NodeId,
    pub stream: TcpStream,
    pub queue: VecDeque<OutFrame>,
    /// We sent Close: nothing more goes out.
    pub closed: bool,
    /// Frames written whole on this link so far, link-local ones (`Kind::link_local`) not
    /// counted: the next one's link number.
    pub sent: u64,
    /// Frames written whole and not yet acknowledged (`Kind::Ack`), with their link
    /// numbers, oldest first; link-local frames are not kept.
    pub kept: VecDeque<(u64, OutFrame)>,
    /// Push what the kernel holds back (`sockopt::push`) after each flush within
    /// [`PUSH_WINDOW`] of a long write ([`PUSH_FROM`]): on wires
    /// (`TcpTransport::links_are_wires`), where autocorking delays a short write by a
    /// packet's time on the link.
    pub push: bool,
    /// Until when this link's flushes are pushed ([`LinkOut::push`]).
    push_until: Option<std::time::Instant>,
    /// The unsent bytes the kernel may hold of this link (`sockopt::set_notsent_lowat`;
    /// 0: the kernel's default), set again on a new connection.
    notsent_lowat: usize,
    /// The congestion controls asked for on wires (`TcpTransport::links_are_wires`; empty:
    /// the link's configuration stands), asked again on a new connection.
    congestion: &'static [&'static str],
    /// Flushes pushed so far (counted for the tests).
    pub pushes: u64,
    /// The frames written whole, by kind, and the writes (`link_stats.rs`).
    pub(crate) stats: super::link_stats::FrameCounts,
}

/// The most bytes of frames that may go ahead of a queued frame ([`LinkOut::enqueue`]):
/// 8 MiB, the blocks a link carries in a 4-cube's all-to-all of 1 MiB blocks.
pub(crate) const OVERTAKE_MAX: usize = 8 << 20;

/// Result of a flush attempt.
pub(crate) enum Flush {
    /// Everything queued was written.
    Empty,
    /// The socket is full; wait for POLLOUT.
    Blocked,
}

impl LinkOut {
    /// The output side of a fresh link to `peer`.
    pub fn new(peer: NodeId, stream: TcpStream) -> LinkOut {
        LinkOut {
            peer,
            stream,
            queue: VecDeque::new(),
            closed: false,
            sent: 0,
            kept: VecDeque::new(),
            push: false,
            push_until: None,
            notsent_lowat: 0,
            congestion: &[],
            pushes: 0,
            stats: Default::default(),
        }
    }

    /// Let the kernel hold at most `bytes` of this link's data unsent
    /// (`sockopt::set_notsent_lowat`; on wires, `TcpTransport::links_are_wires`), now and
    /// on the connections that replace this one.
    pub fn limit_unsent(&mut self, bytes: usize) {
        self.notsent_lowat = bytes;
        self.apply_unsent_limit();
    }

    /// Ask for the first of `names` the kernel accepts as this link's congestion control
    /// (`sockopt::set_congestion`), now and on the connections that replace this one.
    pub(crate) fn use_congestion(&mut self, names: &'static [&'static str]) {
        self.congestion = names;
        super::sockopt::set_congestion(&self.stream, names);
    }

    fn apply_unsent_limit(&self) {
        if let Err(e) = super::sockopt::set_notsent_lowat(&self.stream, self.notsent_lowat) {
            tracing::debug!(
                "link to node {}: TCP_NOTSENT_LOWAT not set ({e})",
                self.peer
            );
        }
    }

    /// The link came back on a new connection (`relink.rs`): write on `stream`, counting
    /// frames from 0 again (the dead link's kept and queued frames went elsewhere).
    pub fn reset(&mut self, stream: TcpStream) {
        self.stream = stream;
        self.apply_unsent_limit();
        super::sockopt::set_congestion(&self.stream, self.congestion);
        self.queue.clear();
        self.closed = false;
        self.sent = 0;
        self.kept.clear();
    }

    /// The bytes of kept frames that point into lent memory whose lender is returning
    /// (copied by [`LinkOut::unlend_kept`] unless acknowledged first).
    pub fn kept_returning(&self) -> usize {
        self.kept
            .iter()
            .map(|(_, f)| crate::base::lent::returning_bytes(&f.payload))
            .sum()
    }

    /// Copy what the kept frames hold of lent memory whose lender is returning
    /// (`base::lent`, `Transport::release_lent`).
    pub fn unlend_kept(&mut self) {
        for (_, f) in self.kept.iter_mut() {
            f.unlend();
        }
    }

    /// The neighbor has received the first `n` frames of this link whole: forget the kept
    /// ones among them. An error if it claims frames never sent.
    pub fn acked(&mut self, n: u64) -> Result<(), String> {
        if n > self.sent {
            return Err(format!(
                "acknowledgement of {n} frames on a link that carried {}",
                self.sent
            ));
        }
        while self.kept.front().is_some_and(|(s, _)| *s < n) {
            self.kept.pop_front();
        }
        Ok(())
    }

    /// The link died: every frame it may not have delivered, oldest first — the kept ones
    /// (written, unacknowledged), then the queue (a frame half written included).
    pub fn unacknowledged(&mut self) -> Vec<OutFrame> {
        let mut out: Vec<OutFrame> = self.kept.drain(..).map(|(_, f)| f).collect();
        out.extend(self.queue.drain(..));
        out
    }

    /// Queue a frame. A flow-control frame ([`OutFrame::urgent`]: a clear-to-send, a
    /// credit) goes ahead of every frame not yet begun, behind the urgent ones already
    /// waiting: on a slow link the peer's data waits for it, and behind a megabyte of this
    /// node's own data it would make every exchange of long messages take twice its time
    /// (docs/perf/cubenet-model.md).
    ///
    /// Other frames queue by the links they still have to cross ([`OutFrame::hops`]),
    /// furthest first, in arrival order among equals: a frame with three hops to go feeds
    /// links downstream that would idle without it, one whose last hop this is feeds none.
    /// On an all-port all-to-all a node's own blocks for far nodes and the blocks it
    /// passes on so leave before its blocks for neighbours, and every link stays busy to
    /// the end instead of waiting for blocks queued behind a node's own megabytes
    /// (`docs/perf/cubenet.md`, "Frames by distance"). A frame is passed by at most
    /// [`OVERTAKE_MAX`] bytes, so none waits without bound behind a stream of frames
    /// going further. Frames of one (source, destination) pair have the same distance on
    /// a link, so they keep their order (the destination restores it anyway,
    /// `sequence.rs`).
    pub fn enqueue(&mut self, frame: OutFrame) {
        let len = frame.len();
        let at = if frame.urgent {
            self.queue
                .iter()
                .position(|f| f.written == 0 && !f.urgent)
                .unwrap_or(self.queue.len())
        } else {
            self.queue
                .iter()
                .rposition(|f| {
                    f.written > 0
                        || f.urgent
                        || f.hops >= frame.hops
                        || f.overtaken + len > OVERTAKE_MAX
                })
                .map_or(0, |i| i + 1)
        };
        for f in self.queue.range_mut(at..) {
            f.overtaken += len;
        }
        self.queue.insert(at, frame);
    }

    /// Is there anything the socket could take now? Not when the queue is empty, nor when
    /// its head is an open frame written as far as its bytes have come (the frames behind
    /// it must wait for it).
    pub fn has_writable(&self) -> bool {
        self.queue
            .front()
            .is_some_and(|f| f.open.is_none() || f.written < f.available())
    }

    /// The open frame fed by input link `from`, if it is still queued.
    pub fn open_frame(&mut self, from: usize) -> Option<&mut OutFrame> {
        self.queue.iter_mut().rev().find(|f| f.open == Some(from))
    }

    /// Write as much of the queue as the socket takes. Completed send ids are appended
    /// to `done`.
    pub fn flush(&mut self, done: &mut Vec<u64>) -> io::Result<Flush> {
        // At most this many buffers per gather write (the kernel's limit is 1024).
        const MAX_SLICES: usize = 256;
        let (mut wrote, mut ended_long) = (0, false);
        let r = self.write_queue(done, MAX_SLICES, &mut wrote, &mut ended_long);
        if self.push && wrote > 0 {
            let now = std::time::Instant::now();
            if wrote >= PUSH_FROM || ended_long {
                self.push_until = Some(now + PUSH_WINDOW);
            }
            if self.push_until.is_some_and(|t| now < t) {
                super::sockopt::push(&self.stream);
                self.pushes += 1;
            }
        }
        r
    }

    /// [`LinkOut::flush`]'s writes: `wrote` counts the bytes the socket took,
    /// `ended_long` says whether one of them ended a frame of [`PUSH_FROM`] bytes or more.
    fn write_queue(
        &mut self,
        done: &mut Vec<u64>,
        max_slices: usize,
        wrote: &mut usize,
        ended_long: &mut bool,
    ) -> io::Result<Flush> {
        while self.has_writable() {
            let mut slices = Slices::new();
            for f in &self.queue {
                if slices.len() >= max_slices {
                    break;
                }
                f.unwritten(&mut slices, max_slices);
                if f.open.is_some() {
                    // Nothing behind an open frame may go before it is complete.
                    break;
                }
            }
            let n = match send_vectored(&self.stream, &slices) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
                Ok(n) => {
                    self.stats.calls += 1;
                    n
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flush::Blocked),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            drop(slices);
            *wrote += n;
            let mut left = n;
            while left > 0 {
                let Some(f) = self.queue.front_mut() else {
                    break;
                };
                let rest = f.len() - f.written;
                if left >= rest {
                    left -= rest;
                    *ended_long |= f.len() >= PUSH_FROM;
                    if let Some(id) = f.completes.take() {
                        done.push(id);
                    }
                    if let Some(mut f) = self.queue.pop_front() {
                        self.stats.frame(f.head.kind, f.len());
                        if !f.head.kind.link_local() {
                            f.unlend();
                            self.kept.push_back((self.sent, f));
                            self.sent += 1;
                        }
                    }
                } else {
                    f.written += left;
                    left = 0;
                }
            }
        }
        Ok(Flush::Empty)
    }
}

/// `writev(2)` as `sendmsg(2)`: the same gather write with a shorter path through the kernel
/// than the VFS's, and `MSG_NOSIGNAL` (a closed peer is an error, never a signal).
fn send_vectored(stream: &TcpStream, slices: &[IoSlice<'_>]) -> io::Result<usize> {
    // SAFETY: an all-zero msghdr is valid (no address, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // IoSlice is ABI-compatible with iovec on Unix (documented by std); sendmsg only
    // reads the buffers.
    msg.msg_iov = slices.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = slices.len() as _;
    // SAFETY: `msg` points at `slices`, which outlive the call.
    let r = unsafe { libc::sendmsg(stream.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r as usize)
}

#[cfg(test)]
mod tests;
