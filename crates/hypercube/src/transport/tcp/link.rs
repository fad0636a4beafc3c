//! One hypercube link: a TCP socket to the neighbor across one dimension. The output side
//! (a queue of frames written with gather `sendmsg` calls) lives in the engine's state; the
//! input side (a read buffer and the frame parser) has its own lock so whichever thread
//! holds it — the progress thread or a caller that is waiting — reads the socket.
//!
//! Cut-through: a long frame that only passes through this node is handed on in pieces as
//! its bytes arrive ([`Item::Start`], then [`Item::More`]); its [`OutFrame`] stays *open*
//! on the outgoing link, written as far as its bytes have come, with the frames queued
//! behind it waiting (`docs/architecture.md`, "Forwarding").

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use bytes::{Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::base::parts::Parts;
use crate::wire::frame::{Header, Kind, HEADER_LEN};

/// A frame waiting to be written.
pub(crate) struct OutFrame {
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
    /// A flow-control frame (clear-to-send, credit): it goes ahead of every frame not yet
    /// begun ([`LinkOut::enqueue`]).
    pub urgent: bool,
}

impl OutFrame {
    pub fn new(h: &Header, payload: Parts, completes: Option<u64>) -> OutFrame {
        OutFrame {
            header: h.encode(),
            len: HEADER_LEN + payload.len(),
            payload,
            written: 0,
            completes,
            open: None,
            urgent: matches!(h.kind, Kind::Cts | Kind::Credit),
        }
    }

    /// A frame passed on while its payload still arrives on input link `from`: `first` is
    /// what came so far; [`OutFrame::extend`] adds the rest.
    pub fn open(h: &Header, first: Bytes, from: usize) -> OutFrame {
        OutFrame {
            header: h.encode(),
            len: HEADER_LEN + h.frame_len as usize,
            payload: Parts::One(first),
            written: 0,
            completes: None,
            open: Some(from),
            urgent: false,
        }
    }

    /// More bytes of an open frame; `last`: its payload is now complete.
    pub fn extend(&mut self, more: Bytes, last: bool) {
        self.payload.push(more);
        if last {
            self.open = None;
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
    fn unwritten<'a>(&'a self, slices: &mut Vec<IoSlice<'a>>, max: usize) {
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

/// The output side of a link.
pub(crate) struct LinkOut {
    pub peer: NodeId,
    pub stream: TcpStream,
    pub queue: VecDeque<OutFrame>,
    /// We sent Close: nothing more goes out.
    pub closed: bool,
}

/// Result of a flush attempt.
pub(crate) enum Flush {
    /// Everything queued was written.
    Empty,
    /// The socket is full; wait for POLLOUT.
    Blocked,
}

impl LinkOut {
    /// Queue a frame. A flow-control frame ([`OutFrame::urgent`]: a clear-to-send, a
    /// credit) goes ahead of every frame not yet begun, behind the urgent ones already
    /// waiting: on a slow link the peer's data waits for it, and behind a megabyte of this
    /// node's own data it would make every exchange of long messages take twice its time
    /// (docs/perf/cubenet-model.md). No message frame overtakes another, so the order of
    /// messages between two nodes stays as sent.
    pub fn enqueue(&mut self, frame: OutFrame) {
        if frame.urgent {
            let at = self
                .queue
                .iter()
                .position(|f| f.written == 0 && !f.urgent)
                .unwrap_or(self.queue.len());
            self.queue.insert(at, frame);
        } else {
            self.queue.push_back(frame);
        }
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
        while self.has_writable() {
            let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(16);
            for f in &self.queue {
                if slices.len() >= MAX_SLICES {
                    break;
                }
                f.unwritten(&mut slices, MAX_SLICES);
                if f.open.is_some() {
                    // Nothing behind an open frame may go before it is complete.
                    break;
                }
            }
            let n = match send_vectored(&self.stream, &slices) {
                Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed")),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Flush::Blocked),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            drop(slices);
            let mut left = n;
            while left > 0 {
                let Some(f) = self.queue.front_mut() else {
                    break;
                };
                let rest = f.len() - f.written;
                if left >= rest {
                    left -= rest;
                    if let Some(id) = f.completes {
                        done.push(id);
                    }
                    self.queue.pop_front();
                } else {
                    f.written += left;
                    left = 0;
                }
            }
        }
        Ok(Flush::Empty)
    }
}

/// The input side of a link.
pub(crate) struct LinkIn {
    pub peer: NodeId,
    pub stream: TcpStream,
    buf: BytesMut,
    /// The peer closed its side (EOF seen).
    pub eof: bool,
    /// Bytes read from the socket so far (tells a waiter that data is flowing).
    pub bytes_read: u64,
    /// This node (frames for others may pass through).
    me: NodeId,
    /// Frames for others with at least this many payload bytes are passed on as they
    /// arrive (cut-through); `None`: each frame is received whole first.
    cut_through: Option<usize>,
    /// Payload bytes of the frame being passed on that have not arrived yet.
    transit_left: usize,
}

/// One thing a read produced.
pub(crate) enum Item {
    /// A whole frame.
    Frame(Header, Bytes),
    /// The beginning of a frame for another node, passed on before its payload is complete
    /// (cut-through): the header and the payload bytes so far.
    Start(Header, Bytes),
    /// More payload of the frame last started; `true` when it is complete.
    More(Bytes, bool),
}

/// What one read pass produced.
pub(crate) enum ReadOutcome {
    /// Items parsed (possibly none); the socket has no more data right now, or a piece of
    /// a frame in transit is ready to be passed on.
    Frames(Vec<Item>),
    /// Items parsed, then the peer closed the connection.
    Eof(Vec<Item>),
}

/// Cut-through reads about this much of a frame in transit (or what the socket has, if
/// less) before handing it on, so the next hop starts sending while the rest arrives.
const TRANSIT_READ: usize = 256 << 10;

impl LinkIn {
    /// The input side of the link to `peer`, at node `me`; `cut_through` as the field.
    pub fn new(peer: NodeId, stream: TcpStream, me: NodeId, cut_through: Option<usize>) -> LinkIn {
        LinkIn {
            peer,
            stream,
            buf: BytesMut::with_capacity(256 << 10),
            eof: false,
            bytes_read: 0,
            me,
            cut_through,
            transit_left: 0,
        }
    }

    /// Read what the socket has (non-blocking) and split it into frames.
    pub fn read(&mut self, num_nodes: u32, host: bool) -> Result<ReadOutcome, ReadError> {
        let mut frames = Vec::new();
        if self.eof {
            return Ok(ReadOutcome::Eof(frames));
        }
        // Bytes of frames in transit read in this pass.
        let mut passing = 0;
        for _ in 0..64 {
            // Size the next read: at least 64 KiB, or the rest of a large frame — of a
            // frame in transit, a piece of it.
            let mut want = self.next_need(num_nodes, host)?.max(64 << 10);
            if self.transit_left > 0 {
                want = want.min((TRANSIT_READ - passing).max(4096));
            }
            self.buf.reserve(want);
            let start = self.buf.len();
            let spare = self.buf.spare_capacity_mut();
            let cap = spare.len().min(want);
            // SAFETY: `spare` is writable memory of at least `cap` bytes owned by `buf`;
            // recv(2) writes at most `cap` bytes into it and reports how many.
            // recv(2) rather than read(2): the same effect on a socket with a shorter path
            // through the kernel (no VFS layer), which shows in an 8 B ping-pong.
            let r = unsafe {
                libc::recv(
                    self.stream.as_raw_fd(),
                    spare.as_mut_ptr().cast::<libc::c_void>(),
                    cap,
                    0,
                )
            };
            if r < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => break,
                    io::ErrorKind::Interrupted => continue,
                    _ => return Err(ReadError::Io(e)),
                }
            }
            let n = r as usize;
            self.bytes_read += n as u64;
            if n == 0 {
                self.eof = true;
                self.parse(num_nodes, host, &mut frames)?;
                if !self.buf.is_empty() {
                    return Err(ReadError::Protocol(format!(
                        "connection closed in the middle of a frame ({} bytes left over)",
                        self.buf.len()
                    )));
                }
                if self.transit_left > 0 {
                    return Err(ReadError::Protocol(format!(
                        "connection closed in the middle of a frame passing through \
                         ({} bytes of it never came)",
                        self.transit_left
                    )));
                }
                return Ok(ReadOutcome::Eof(frames));
            }
            // SAFETY: recv(2) initialized exactly `n <= cap` bytes after `start`.
            unsafe { self.buf.set_len(start + n) };
            let before = frames.len();
            self.parse(num_nodes, host, &mut frames)?;
            passing += frames[before..]
                .iter()
                .map(|i| match i {
                    Item::Start(_, b) | Item::More(b, _) => b.len(),
                    Item::Frame(..) => 0,
                })
                .sum::<usize>();
            if n < cap || passing >= TRANSIT_READ {
                // Drained — or enough of a frame in transit to hand on first.
                break;
            }
        }
        Ok(ReadOutcome::Frames(frames))
    }

    /// Bytes still needed to complete the frame at the head of the buffer.
    fn next_need(&self, num_nodes: u32, host: bool) -> Result<usize, ReadError> {
        if self.transit_left > 0 {
            return Ok(self.transit_left);
        }
        if self.buf.len() < HEADER_LEN {
            return Ok(HEADER_LEN - self.buf.len());
        }
        let h = self.header(num_nodes, host)?;
        Ok((HEADER_LEN + h.frame_len as usize).saturating_sub(self.buf.len()))
    }

    fn header(&self, num_nodes: u32, host: bool) -> Result<Header, ReadError> {
        let mut hb = [0u8; HEADER_LEN];
        hb.copy_from_slice(&self.buf[..HEADER_LEN]);
        Header::decode(&hb, num_nodes, host).map_err(ReadError::Protocol)
    }

    /// Pass frames for others on as they arrive from `min` payload bytes on, where frames
    /// are passed on at all (the cut-through regime); frames already begun are unchanged.
    pub fn set_cut_through_min(&mut self, min: usize) {
        if let Some(m) = self.cut_through.as_mut() {
            *m = min;
        }
    }

    /// Is `h` a frame to pass on as it arrives (see [`LinkIn::cut_through`])?
    fn passes_through(&self, h: &Header) -> bool {
        use crate::wire::frame::Kind;
        self.cut_through
            .is_some_and(|min| h.frame_len as usize >= min.max(1))
            && h.dest != self.me
            && matches!(h.kind, Kind::Eager | Kind::Data)
    }

    fn parse(&mut self, num_nodes: u32, host: bool, out: &mut Vec<Item>) -> Result<(), ReadError> {
        loop {
            if self.transit_left > 0 {
                let n = self.buf.len().min(self.transit_left);
                if n == 0 {
                    break;
                }
                self.transit_left -= n;
                out.push(Item::More(
                    self.buf.split_to(n).freeze(),
                    self.transit_left == 0,
                ));
                continue;
            }
            if self.buf.len() < HEADER_LEN {
                break;
            }
            let h = self.header(num_nodes, host)?;
            let total = HEADER_LEN + h.frame_len as usize;
            if self.buf.len() >= total {
                let mut frame = self.buf.split_to(total);
                let payload = frame.split_off(HEADER_LEN).freeze();
                out.push(Item::Frame(h, payload));
            } else if self.passes_through(&h) {
                let _ = self.buf.split_to(HEADER_LEN);
                let first = self.buf.split().freeze();
                self.transit_left = h.frame_len as usize - first.len();
                out.push(Item::Start(h, first));
            } else {
                break;
            }
        }
        Ok(())
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

/// Why reading a link failed.
pub(crate) enum ReadError {
    /// The bytes do not follow the protocol.
    Protocol(String),
    /// The socket failed.
    Io(io::Error),
}

#[cfg(test)]
#[path = "link_fuzz.rs"]
mod fuzz;
