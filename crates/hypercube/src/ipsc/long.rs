//! Long messages, LSENDW / LRECVW (seed §6 and the LSENDW/LRECVW listings).
//!
//! The seed's SEND and RECV carried at most 16 KiB, so LSENDW cut a message into 16 KiB
//! chunks ended by a shorter (possibly empty) one, and LRECVW glued them back — losing the
//! rest of the message when the buffer was too small. Here a message of any length (`u64`)
//! goes as:
//!
//! 1. a 16-byte header `[total length: u64 LE][chunk size: u32 LE][0: u32]` under the
//!    reserved tag of (header, TYPE);
//! 2. `ceil(total / chunk)` chunks (all full but the last; no empty terminator) under the
//!    reserved tag of (data, TYPE).
//!
//! The sender starts up to [`PIPELINE_DEPTH`] chunk sends before waiting for the oldest,
//! and the receiver keeps as many receives posted ahead, so chunks stream back to back.
//! Because the length comes first, LRECVW can refuse a message that does not fit before
//! receiving any of it: the header is kept aside (per node) and the chunks stay queued, and
//! the next long receive that matches takes the same message again — nothing is lost.
//!
//! Both tags are reserved (see [`crate::ipsc`]): a user's message of the same type is never
//! mistaken for a long message or consumed by one, and two long messages from one source
//! with one type are received in the order they were sent. Types must be at most
//! [`super::MAX_RESERVED_USER_TYPE`].

use std::collections::VecDeque;

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::checks::{check_node, keyed_tag};
use crate::base::message::{Message, MsgType, Select, Status};
use crate::base::parts::IntoPayload;
use crate::base::tags::Keyed;
use crate::error::{Error, Result};
use crate::node::{Node, RecvRequest, SendRequest};

/// The seed's chunk size, MAXLEN = 16384 bytes: the default of [`Node::lsend`].
pub const SEED_CHUNK_BYTES: usize = 16384;

/// How many chunk sends (and receives) are in flight at once.
pub const PIPELINE_DEPTH: usize = 16;

const HEADER_BYTES: usize = 16;

#[derive(Clone, Copy)]
struct Header {
    source: NodeId,
    ty: u32,
    total: u64,
    chunk: u32,
}

fn decode_header(source: NodeId, ty: u32, b: &[u8]) -> Result<Header> {
    let bad = |why: &str| Error::Protocol {
        peer: source,
        detail: format!("malformed LSENDW header from node {source} (type {ty}): {why}"),
    };
    if b.len() != HEADER_BYTES {
        return Err(bad(&format!("{} bytes instead of {HEADER_BYTES}", b.len())));
    }
    let mut t = [0u8; 8];
    t.copy_from_slice(&b[..8]);
    let mut c = [0u8; 4];
    c.copy_from_slice(&b[8..12]);
    let chunk = u32::from_le_bytes(c);
    if chunk == 0 {
        return Err(bad("chunk size 0"));
    }
    Ok(Header {
        source,
        ty,
        total: u64::from_le_bytes(t),
        chunk,
    })
}

impl Node {
    /// Send a message of any length to `dest` in the seed's 16 KiB chunks, pipelined (seed
    /// §6, LSENDW). `dest` receives it with [`Node::lrecv`] or [`Node::lrecv_into`] and the
    /// same type.
    ///
    /// ```no_run
    /// use hypercube::MsgType;
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?;
    /// if node.mynode() == 0 && node.numnodes() > 1 {
    ///     node.lsend(1, MsgType(7), vec![42u8; 10 << 20])?;
    /// } else if node.mynode() == 1 {
    ///     let m = node.lrecv(Some(0), MsgType(7))?;
    ///     assert_eq!(m.len(), 10 << 20);
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidNode`] for a `dest` outside the cube; [`Error::IpscArgument`] for a
    /// type above [`super::MAX_RESERVED_USER_TYPE`].
    #[doc(alias = "LSENDW")]
    pub fn lsend(&self, dest: NodeId, ty: MsgType, data: impl IntoPayload) -> Result<()> {
        self.lsend_chunked(dest, ty, data, SEED_CHUNK_BYTES)
    }

    /// [`Node::lsend`] with another chunk size (1 byte ..= 4 GiB − 1); the receiver learns
    /// it from the header.
    #[doc(alias = "LSENDW")]
    pub fn lsend_chunked(
        &self,
        dest: NodeId,
        ty: MsgType,
        data: impl IntoPayload,
        chunk_bytes: usize,
    ) -> Result<()> {
        let header_tag = keyed_tag("LSENDW", Keyed::LongHeader, ty.0)?;
        let data_tag = keyed_tag("LSENDW", Keyed::LongData, ty.0)?;
        check_node(self, "LSENDW destination", dest)?;
        let chunk = match u32::try_from(chunk_bytes) {
            Ok(c) if c > 0 => c,
            _ => {
                return Err(Error::IpscArgument {
                    routine: "LSENDW",
                    detail: format!(
                        "chunk size {chunk_bytes} is not in 1..={}; pass a chunk size in that \
                         range (the seed's is {SEED_CHUNK_BYTES})",
                        u32::MAX
                    ),
                })
            }
        };
        let data: Bytes = data.into_payload();
        let mut header = Vec::with_capacity(HEADER_BYTES);
        header.extend_from_slice(&(data.len() as u64).to_le_bytes());
        header.extend_from_slice(&chunk.to_le_bytes());
        header.extend_from_slice(&0u32.to_le_bytes());
        let mut in_flight: VecDeque<SendRequest> = VecDeque::new();
        in_flight.push_back(self.isend_internal(dest, header_tag, Bytes::from(header))?);
        let mut offset = 0usize;
        while offset < data.len() {
            let end = data.len().min(offset.saturating_add(chunk as usize));
            if in_flight.len() >= PIPELINE_DEPTH {
                if let Some(oldest) = in_flight.pop_front() {
                    oldest.wait()?;
                }
            }
            in_flight.push_back(self.isend_internal(dest, data_tag, data.slice(offset..end))?);
            offset = end;
        }
        in_flight.into_iter().try_for_each(SendRequest::wait)
    }

    /// Receive a long message of type `ty`, from `source` or from any node, into a new
    /// buffer (seed §6, LRECVW). Its source is [`Message::source`].
    ///
    /// # Errors
    /// [`Error::IpscArgument`] for a type above [`super::MAX_RESERVED_USER_TYPE`] or a
    /// message too large to allocate (then it stays pending, as for
    /// [`Error::LrecvwTruncated`]).
    #[doc(alias = "LRECVW")]
    pub fn lrecv(&self, source: Option<NodeId>, ty: MsgType) -> Result<Message> {
        let (h, header) = self.take_long_header(source, ty)?;
        let mut buf = Vec::new();
        let fits = usize::try_from(h.total)
            .ok()
            .filter(|&n| buf.try_reserve_exact(n).is_ok());
        let Some(n) = fits else {
            self.hold(header);
            return Err(Error::IpscArgument {
                routine: "LRECVW",
                detail: format!(
                    "cannot allocate {} bytes for the long message from node {} (type {}); it \
                     is still pending — receive it with lrecv_into into a buffer you provide",
                    h.total, h.source, h.ty
                ),
            });
        };
        buf.resize(n, 0);
        self.recv_long_chunks(h, &mut buf)?;
        Ok(Message {
            source: h.source,
            tag: h.ty,
            data: Bytes::from(buf),
        })
    }

    /// [`Node::lrecv`] into a caller's buffer; returns the message's status (source, type,
    /// length — the seed's NODE and CNT4).
    ///
    /// # Errors
    /// [`Error::LrecvwTruncated`] (`LRECVW: TRUNCATED MESSAGE`) when the message is longer
    /// than `buf`: nothing is received and the message stays pending for the next matching
    /// long receive. Unlike the seed, a message of exactly a multiple of the chunk size
    /// needs no extra byte of room.
    #[doc(alias = "LRECVW")]
    pub fn lrecv_into(
        &self,
        source: Option<NodeId>,
        ty: MsgType,
        buf: &mut [u8],
    ) -> Result<Status> {
        let (h, header) = self.take_long_header(source, ty)?;
        if h.total > buf.len() as u64 {
            self.hold(header);
            return Err(Error::LrecvwTruncated {
                needed: h.total,
                capacity: buf.len() as u64,
                source_node: h.source,
                msg_type: h.ty,
            });
        }
        let n = h.total as usize;
        self.recv_long_chunks(h, &mut buf[..n])?;
        Ok(Status {
            source: h.source,
            msg_type: ty,
            len: h.total,
            id: 0,
        })
    }

    /// The oldest matching header, decoded, and the message that carried it (held back
    /// with [`Node::hold`] when the message does not fit): one held back by an earlier
    /// truncated receive, else the next one to arrive.
    fn take_long_header(&self, source: Option<NodeId>, ty: MsgType) -> Result<(Header, Message)> {
        let header_tag = keyed_tag("LRECVW", Keyed::LongHeader, ty.0)?;
        keyed_tag("LRECVW", Keyed::LongData, ty.0)?;
        if let Some(src) = source {
            check_node(self, "LRECVW source", src)?;
        }
        let m = match self.take_held(&Select::internal(source, header_tag)) {
            Some(m) => m,
            None => self.recv_internal(source, header_tag)?,
        };
        let h = decode_header(m.source(), ty.0, m.data())?;
        Ok((h, m))
    }

    /// Receive the chunks of `h` into `out` (exactly `h.total` bytes), pipelined.
    fn recv_long_chunks(&self, h: Header, out: &mut [u8]) -> Result<()> {
        let data_tag = keyed_tag("LRECVW", Keyed::LongData, h.ty)?;
        let chunk = h.chunk as usize;
        let total = out.len();
        let mut posted: VecDeque<RecvRequest> = VecDeque::new();
        let mut next_post = 0usize; // offset of the next chunk to post a receive for
        let mut offset = 0usize;
        while offset < total {
            while next_post < total && posted.len() < PIPELINE_DEPTH {
                posted.push_back(self.irecv_internal(Some(h.source), data_tag)?);
                next_post = next_post.saturating_add(chunk);
            }
            let Some(req) = posted.pop_front() else { break };
            let m = req.wait()?;
            let want = chunk.min(total - offset);
            if m.len() != want {
                return Err(Error::Protocol {
                    peer: h.source,
                    detail: format!(
                        "LRECVW chunk at offset {offset} of the {total}-byte message from node \
                         {} (type {}) is {} bytes, expected {want}",
                        h.source,
                        h.ty,
                        m.len()
                    ),
                });
            }
            out[offset..offset + want].copy_from_slice(m.data());
            offset += want;
        }
        Ok(())
    }
}
