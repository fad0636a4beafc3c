//! One hypercube link: a TCP socket to the neighbor across one dimension. The output side
//! (`link_out.rs`) lives in the engine's state; the input side here (a read buffer and the
//! frame parser) has its own lock so whichever thread holds it — the progress thread or a
//! caller that is waiting — reads the socket.
//!
//! Cut-through: a long frame that only passes through this node is handed on in pieces as
//! its bytes arrive ([`Item::Start`], then [`Item::More`]); its `OutFrame` stays *open*
//! on the outgoing link, written as far as its bytes have come, with the frames queued
//! behind it waiting (`docs/architecture.md`, "Forwarding").
//!
//! Landing: a long `Data` frame for this node whose receive named the memory it goes to
//! (`base/landing.rs`) is read from the socket straight into that memory, in its turn
//! (`sequence.rs`: no earlier frame of its stream is still to come, so the receive's
//! fill mark is where it belongs) — the copy out of a read buffer saved ([`Item::Landed`]).

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

use bytes::{Buf, Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::wire::frame::{Header, HEADER_LEN};
use landing::Direct;
pub(crate) use landing::LandingAt;

pub(crate) use super::link_out::{Flush, LinkOut, OutFrame};

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
    /// Body bytes (payload and trailer) of the frame being passed on that have not
    /// arrived yet.
    transit_left: usize,
    /// Frames read whole from this link so far, link-local ones not counted (a frame passed
    /// on counts when its last byte came): what this node acknowledges (`Kind::Ack`), so an
    /// acknowledgement is never acknowledged.
    pub frames_in: u64,
    /// Whether frames for other nodes may be passed on as they arrive now (the engine
    /// turns it off while it routes around a dead link: then every frame is read whole,
    /// and none straight into a landing).
    pub pass_on: bool,
    /// Read a frame's header alone when the buffer is empty at a frame's start (set by the
    /// engine while a receive may wait with a landing: `Engine::landing_hint`).
    pub(crate) header_first: bool,
    /// The frame being read into a landing, if one is (see the module documentation).
    landing: Option<Direct>,
    /// Frames read into a landing so far ([`Item::Landed`]).
    pub landed: u64,
    /// The frames read (counted when their header is acted on), by kind, and the reads
    /// (`link_stats.rs`).
    pub(crate) stats: super::link_stats::FrameCounts,
}

/// One thing a read produced.
pub(crate) enum Item {
    /// A whole frame: its header and body (the trailer byte too, if it has one).
    Frame(Header, Bytes),
    /// The beginning of a frame for another node, passed on before its payload is complete
    /// (cut-through): the header and the payload bytes so far.
    Start(Header, Bytes),
    /// More payload of the frame last started; `true` when it is complete.
    More(Bytes, bool),
    /// A `Data` frame for this node whose payload was read into its landing (see the module
    /// documentation): its header and its trailer byte (1 for a frame without one).
    Landed(Header, u8),
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

/// A whole frame's payload up to this long is copied out of the read buffer; a longer one
/// is a view into it. A view keeps the whole buffer (64 KiB or more) alive for as long as
/// its message waits to be received or is kept by the program, and a buffer still in use
/// cannot be read into again: the next read allocates a new one. Copying the small ones
/// (the copy costs about what the allocation it saves does) lets the buffer be reused in
/// place and keeps a queue of small messages from holding 64 KiB each: with a view for
/// every size, a soak of random sizes grew each rank's resident memory by 10–23 % in ten
/// minutes (`docs/reliability.md`, "The soak"). Measured on loopback: the 4 KiB ping-pong
/// unchanged, the 4 KiB all-to-all on 8 ranks 0.88× the time; at 8 KiB the copy showed
/// (ping-pong 1.05×), so the limit is 4 KiB.
const COPY_BELOW: usize = 4 << 10;

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
            frames_in: 0,
            pass_on: true,
            header_first: false,
            landing: None,
            landed: 0,
            stats: Default::default(),
        }
    }

    /// The link died: forget the bytes of an unfinished frame. Returns the body bytes a
    /// frame being passed on still awaited (0: none was), which the open frame they fed
    /// gets as padding and a void trailer (`OutFrame::void`).
    pub fn abandon(&mut self) -> usize {
        self.buf.clear();
        self.landing = None;
        self.eof = true;
        std::mem::take(&mut self.transit_left)
    }

    /// The link came back on a new connection (`relink.rs`): read from `stream`, from a
    /// clean start (the old one's input was abandoned when it died).
    pub fn reset(&mut self, stream: TcpStream) {
        self.stream = stream;
        self.buf.clear();
        self.eof = false;
        self.bytes_read = 0;
        self.transit_left = 0;
        self.frames_in = 0;
        self.landing = None;
    }

    /// Read what the socket has (non-blocking) and split it into frames.
    #[cfg(test)]
    pub fn read(&mut self, num_nodes: u32, host: bool) -> Result<ReadOutcome, ReadError> {
        self.read_into(num_nodes, host, &mut |_| None)
    }

    /// Read what the socket has (non-blocking) and split it into frames; a long `Data`
    /// frame for this node goes straight into the memory `land` names for it, if any.
    pub fn read_into(
        &mut self,
        num_nodes: u32,
        host: bool,
        land: LandingAt<'_>,
    ) -> Result<ReadOutcome, ReadError> {
        let mut frames = Vec::new();
        if self.eof {
            return Ok(ReadOutcome::Eof(frames));
        }
        // Bytes of frames in transit read in this pass.
        let mut passing = 0;
        for _ in 0..64 {
            if self.landing.is_some() {
                match self.land_more()? {
                    None => break,
                    // Acted on before the next frame is looked at: a frame of the same
                    // message behind it lands where this one ends.
                    Some(Some(item)) => {
                        frames.push(item);
                        break;
                    }
                    Some(None) => continue,
                }
            }
            // Size the next read: at least 64 KiB, or the rest of a large frame — of a
            // frame in transit, a piece of it.
            let mut want = self.next_need(num_nodes, host)?.max(64 << 10);
            if self.transit_left > 0 {
                want = want.min((TRANSIT_READ - passing).max(4096));
            } else if self.header_first && self.buf.is_empty() {
                // A frame's start while a receive may wait with a landing: its header
                // alone, so that a frame for that receive is read into it whole.
                want = HEADER_LEN;
            }
            self.buf.reserve(want);
            let start = self.buf.len();
            let spare = self.buf.spare_capacity_mut();
            let cap = spare.len().min(want);
            // SAFETY: `spare` is writable memory of at least `cap` bytes owned by `buf`.
            let n = match unsafe { recv_some(&self.stream, spare.as_mut_ptr().cast(), cap) } {
                Ok(Some(n)) => n,
                Ok(None) => break,
                Err(e) => return Err(ReadError::Io(e)),
            };
            self.bytes_read += n as u64;
            self.stats.calls += 1;
            if n == 0 {
                self.eof = true;
                self.parse(num_nodes, host, &mut frames, land)?;
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
                if self.landing.is_some() {
                    return Err(ReadError::Protocol(
                        "connection closed in the middle of a frame".into(),
                    ));
                }
                return Ok(ReadOutcome::Eof(frames));
            }
            // SAFETY: recv(2) initialized exactly `n <= cap` bytes after `start`.
            unsafe { self.buf.set_len(start + n) };
            let before = frames.len();
            self.parse(num_nodes, host, &mut frames, land)?;
            passing += frames[before..]
                .iter()
                .map(|i| match i {
                    Item::Start(_, b) | Item::More(b, _) => b.len(),
                    Item::Frame(..) | Item::Landed(..) => 0,
                })
                .sum::<usize>();
            if self.landing.is_some() {
                if let Some(item) = self.landed_whole() {
                    frames.push(item);
                    break;
                }
                continue;
            }
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
        Ok((HEADER_LEN + h.body_len()).saturating_sub(self.buf.len()))
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
        self.pass_on
            && self
                .cut_through
                .is_some_and(|min| h.frame_len as usize >= min.max(1))
            && h.dest != self.me
            && matches!(h.kind, Kind::Eager | Kind::Data)
    }

    fn parse(
        &mut self,
        num_nodes: u32,
        host: bool,
        out: &mut Vec<Item>,
        land: LandingAt<'_>,
    ) -> Result<(), ReadError> {
        loop {
            if self.landing.is_some() {
                break;
            }
            if self.transit_left > 0 {
                let n = self.buf.len().min(self.transit_left);
                if n == 0 {
                    break;
                }
                self.transit_left -= n;
                if self.transit_left == 0 {
                    self.frames_in += 1;
                }
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
            let total = HEADER_LEN + h.body_len();
            if self.buf.len() >= total {
                let payload = if h.body_len() <= COPY_BELOW {
                    let p = Bytes::copy_from_slice(&self.buf[HEADER_LEN..total]);
                    self.buf.advance(total);
                    p
                } else {
                    self.buf.split_to(total).split_off(HEADER_LEN).freeze()
                };
                if !h.kind.link_local() {
                    self.frames_in += 1;
                }
                self.stats.frame(h.kind, total);
                out.push(Item::Frame(h, payload));
            } else if self.start_landing(&h, land) {
                self.stats.frame(h.kind, total);
                break;
            } else if self.passes_through(&h) {
                self.stats.frame(h.kind, total);
                let _ = self.buf.split_to(HEADER_LEN);
                let first = self.buf.split().freeze();
                self.transit_left = h.body_len() - first.len();
                out.push(Item::Start(h, first));
            } else {
                break;
            }
        }
        Ok(())
    }
}

/// Receive what the socket has, up to `cap` bytes, into `ptr`: `Ok(None)` when nothing is
/// there now (an interrupted call is retried); `Ok(Some(0))` when the peer closed.
/// recv(2) rather than read(2): the same effect on a socket with a shorter path through the
/// kernel (no VFS layer), which shows in an 8 B ping-pong.
///
/// # Safety
/// `ptr .. ptr + cap` must be writable memory.
unsafe fn recv_some(stream: &TcpStream, ptr: *mut u8, cap: usize) -> io::Result<Option<usize>> {
    loop {
        // SAFETY: recv(2) writes at most `cap` bytes at `ptr` (writable: the contract).
        let r = unsafe { libc::recv(stream.as_raw_fd(), ptr.cast::<libc::c_void>(), cap, 0) };
        if r >= 0 {
            return Ok(Some(r as usize));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => return Ok(None),
            io::ErrorKind::Interrupted => continue,
            _ => return Err(e),
        }
    }
}

/// Why reading a link failed.
pub(crate) enum ReadError {
    /// The bytes do not follow the protocol.
    Protocol(String),
    /// The socket failed.
    Io(io::Error),
}

#[path = "link_landing.rs"]
mod landing;

#[cfg(test)]
#[path = "link_fuzz.rs"]
mod fuzz;
