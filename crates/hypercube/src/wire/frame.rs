//! The link frame: a fixed 48-byte little-endian header, then `frame_len` payload bytes,
//! then — only when the header's trailer flag is set — one trailer byte.
//!
//! ```text
//! offset size field
//!  0     1    kind        1 Eager, 2 Rts, 3 Cts, 4 Data, 5 Credit, 6 Close, 7 Fin,
//!                         8 Ack, 9 Link, 10 Left
//!  1     1    hops        the route's listed hops, 0..=8 (0: e-cube order)
//!  2     1    flags       bit 0: a trailer byte follows the payload (1 whole, 0 void);
//!                         bit 1: acknowledge at once (the payload is lent memory);
//!                         other bits 0
//!  3     1    reserved    0
//!  4     4    src         origin node of the message (not the previous hop)
//!  8     4    dest        final destination node
//! 12     4    tag         message type (user types < 2^31, reserved types above)
//! 16     8    msg_id      sender-assigned id, unique per (src) — pairs Rts/Cts/Data,
//!                         names every message (Eager too) in a trace
//! 24     8    total_len   the whole message's length (Rts, Data, Eager); credits (Credit)
//! 32     4    frame_len   payload bytes that follow this header
//! 36     4    route       the dimensions of the next `hops` hops, 4 bits each, the next
//!                         hop in the lowest bits; 0 beyond them
//! 40     8    seq         the frame's number from `src` to `dest` (bit 63: the control
//!                         stream, Cts and Credit; else the message stream); 0 on frames
//!                         that only cross one link (Close, Ack, Link, Left)
//! ```
//!
//! The trailer: a node that passes a frame on while its payload still arrives
//! (cut-through) cannot take back the header it already sent if the link the rest should
//! come on dies; so it sets the flag, and ends the frame with 1 when the payload came
//! whole, or pads it with zeros and 0 when it did not — the frame is *void*, and whoever
//! reads it whole drops it (its sender resends it on another path, `docs/reliability.md`,
//! "Rerouting").
//!
//! A frame with `hops = 0` follows its e-cube route. A routed frame (a planned many-to-many,
//! `hypercube_topology::Plan`) crosses the listed dimensions first, in order, and then
//! (if it is not there yet) follows e-cube order: every node that passes it on takes the
//! first hop off the list, so the header always lists the hops still to take from the node
//! that receives it. A route names any dimensions of the cube (hops `< d`) and at most 8,
//! so a frame's path is finite whatever a peer sends.

use hypercube_topology::{NodeId, Route};

use crate::base::ids::HOST;

/// Header size in bytes.
pub(crate) const HEADER_LEN: usize = 48;

/// The header flag: a trailer byte follows the payload.
const FLAG_TRAILER: u8 = 1;
/// The header flag: the receiver acknowledges the frame as soon as it has read it (its
/// sender lent the memory of the payload and waits to have it back, `collectives/lend.rs`).
const FLAG_ACK_NOW: u8 = 2;

/// The bit of [`Header::seq`] that puts a frame in the control stream of its pair.
pub(crate) const CONTROL_STREAM: u64 = 1 << 63;

/// Largest payload one frame may carry. Longer messages are sent as several Data frames.
pub(crate) const MAX_FRAME_LEN: u32 = 1 << 24;

/// What a frame is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A whole small message.
    Eager = 1,
    /// Request to send: the envelope of a large message, no payload.
    Rts = 2,
    /// Clear to send: the receiver bound a receive to an Rts (src = receiver).
    Cts = 3,
    /// A chunk of a large message's payload, in order.
    Data = 4,
    /// The receiver consumed eager bytes; `total_len` more may be sent eagerly.
    Credit = 5,
    /// Clean close of the link: nothing more will be sent on it.
    Close = 6,
    /// The source node has finished (entered finalize): it will send no more messages.
    /// Routed like a message, so it arrives after everything the source sent before.
    Fin = 7,
    /// Link-local: `total_len` = the frames the sender has received whole on this link so
    /// far (cumulative; link-local frames not counted); the receiver may forget the frames
    /// it kept for a resend up to there.
    Ack = 8,
    /// Link state, flooded: node `src`'s link in dimension `tag` is down (`total_len` 0) or
    /// up (1), as of `src`'s report number `msg_id` about it; `dest` is the neighbor this copy
    /// is for.
    Link = 9,
    /// Flooded in finalize: node `src` has passed the finalize barrier (so no node needs
    /// another to forward anything once it has heard this from every node).
    Left = 10,
}

impl Kind {
    /// Frames that cross one link only: never sequenced, forwarded or kept for a resend.
    pub fn link_local(self) -> bool {
        matches!(self, Kind::Close | Kind::Ack | Kind::Link | Kind::Left)
    }

    fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Eager,
            2 => Kind::Rts,
            3 => Kind::Cts,
            4 => Kind::Data,
            5 => Kind::Credit,
            6 => Kind::Close,
            7 => Kind::Fin,
            8 => Kind::Ack,
            9 => Kind::Link,
            10 => Kind::Left,
            _ => return None,
        })
    }
}

/// A decoded frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub kind: Kind,
    pub src: NodeId,
    pub dest: NodeId,
    pub tag: u32,
    pub msg_id: u64,
    pub total_len: u64,
    pub frame_len: u32,
    /// The hops still to take after the link this header travels on.
    pub route: Route,
    /// The frame's number in its (src, dest) pair's stream ([`CONTROL_STREAM`] set: the
    /// control stream); 0 for link-local kinds.
    pub seq: u64,
    /// A trailer byte follows the payload (set by a node passing the frame on cut-through).
    pub trailer: bool,
    /// Acknowledge this frame as soon as it is read (`Eager` and `Data` frames whose payload
    /// its sender lent: [`FLAG_ACK_NOW`]).
    pub ack_now: bool,
}

impl Header {
    /// A header with no payload.
    pub fn control(kind: Kind, src: NodeId, dest: NodeId, msg_id: u64, total_len: u64) -> Self {
        Header {
            kind,
            src,
            dest,
            tag: 0,
            msg_id,
            total_len,
            frame_len: 0,
            route: Route::ECUBE,
            seq: 0,
            trailer: false,
            ack_now: false,
        }
    }

    /// Bytes of this frame on the wire after its header: payload and trailer.
    pub fn body_len(&self) -> usize {
        self.frame_len as usize + usize::from(self.trailer)
    }

    /// Encode into the 48-byte layout.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = self.kind as u8;
        let (hops, route) = self.route.packed();
        b[1] = hops;
        b[2] = if self.trailer { FLAG_TRAILER } else { 0 }
            | if self.ack_now { FLAG_ACK_NOW } else { 0 };
        b[40..48].copy_from_slice(&self.seq.to_le_bytes());
        b[36..40].copy_from_slice(&route.to_le_bytes());
        b[4..8].copy_from_slice(&self.src.to_le_bytes());
        b[8..12].copy_from_slice(&self.dest.to_le_bytes());
        b[12..16].copy_from_slice(&self.tag.to_le_bytes());
        b[16..24].copy_from_slice(&self.msg_id.to_le_bytes());
        b[24..32].copy_from_slice(&self.total_len.to_le_bytes());
        b[32..36].copy_from_slice(&self.frame_len.to_le_bytes());
        b
    }

    /// Decode and validate against the cube size (and whether the job has a host, whose
    /// number is [`crate::HOST`]). Never panics on any input.
    pub fn decode(b: &[u8; HEADER_LEN], num_nodes: u32, host: bool) -> Result<Header, String> {
        let u32_at = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
        let u64_at = |o: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(x)
        };
        let kind = Kind::from_u8(b[0]).ok_or_else(|| format!("unknown frame kind {}", b[0]))?;
        if b[2] & !(FLAG_TRAILER | FLAG_ACK_NOW) != 0 || b[3] != 0 {
            return Err("reserved header bytes are not zero".into());
        }
        let dim = num_nodes.trailing_zeros();
        let route = Route::from_packed(b[1], u32_at(36), dim).ok_or_else(|| {
            format!(
                "route of {} hops {:#010x} is not one in a {dim}-cube (at most 8 hops, each \
                 a dimension below {dim}, nothing beyond the last)",
                b[1],
                u32_at(36)
            )
        })?;
        let h = Header {
            kind,
            src: u32_at(4),
            dest: u32_at(8),
            tag: u32_at(12),
            msg_id: u64_at(16),
            total_len: u64_at(24),
            frame_len: u32_at(32),
            route,
            seq: u64_at(40),
            trailer: b[2] & FLAG_TRAILER != 0,
            ack_now: b[2] & FLAG_ACK_NOW != 0,
        };
        let valid = |n: NodeId| n < num_nodes || (host && n == HOST);
        if !valid(h.src) || !valid(h.dest) {
            return Err(format!(
                "frame from node {} to node {} in a cube of {} nodes",
                h.src, h.dest, num_nodes
            ));
        }
        if h.frame_len > MAX_FRAME_LEN {
            return Err(format!(
                "frame of {} bytes exceeds the limit of {MAX_FRAME_LEN}",
                h.frame_len
            ));
        }
        let payload_ok = match h.kind {
            Kind::Eager => h.total_len == h.frame_len as u64,
            Kind::Data => h.frame_len as u64 <= h.total_len,
            _ => h.frame_len == 0,
        };
        if h.trailer && !matches!(h.kind, Kind::Eager | Kind::Data) {
            return Err(format!("{:?} frame with a trailer", h.kind));
        }
        if h.ack_now && !matches!(h.kind, Kind::Eager | Kind::Data) {
            return Err(format!(
                "{:?} frame asking to be acknowledged at once",
                h.kind
            ));
        }
        if !payload_ok {
            return Err(format!(
                "{:?} frame with {} payload bytes for a message of {}",
                h.kind, h.frame_len, h.total_len
            ));
        }
        Ok(h)
    }
}

/// Proptest strategies for valid headers (the link reader's tests use them too).
#[cfg(test)]
pub(crate) mod strategy {
    use proptest::prelude::*;

    use super::*;

    /// Any kind.
    pub(crate) fn kind() -> impl Strategy<Value = Kind> {
        (1u8..=10).prop_map(|b| Kind::from_u8(b).expect("kinds 1..=10 exist"))
    }

    /// A node valid in a cube of `num_nodes` (the host too when `host`).
    pub(crate) fn node(num_nodes: u32, host: bool) -> BoxedStrategy<NodeId> {
        if host {
            prop_oneof![0..num_nodes, Just(crate::HOST)].boxed()
        } else {
            (0..num_nodes).boxed()
        }
    }

    /// A route valid in a cube of dimension `dim`: none (e-cube) or up to 8 hops.
    pub(crate) fn route(dim: u32) -> BoxedStrategy<Route> {
        if dim == 0 {
            return Just(Route::ECUBE).boxed();
        }
        prop_oneof![
            Just(Route::ECUBE),
            prop::collection::vec(0..dim, 1..=8)
                .prop_map(|dims| Route::from_dims(&dims).expect("at most 8 hops below 16")),
        ]
        .boxed()
    }

    /// A payload length, the limits weighted up.
    pub(crate) fn frame_len(max: u32) -> impl Strategy<Value = u32> {
        prop_oneof![Just(0), Just(max), 0..=max]
    }

    /// Any header [`Header::decode`] accepts in a cube of `num_nodes`, with payloads of at
    /// most `max_payload` bytes.
    pub(crate) fn header(
        num_nodes: u32,
        host: bool,
        max_payload: u32,
    ) -> impl Strategy<Value = Header> {
        (
            kind(),
            node(num_nodes, host),
            node(num_nodes, host),
            any::<u32>(),
            any::<u64>(),
            prop_oneof![Just(u64::MAX), any::<u64>()],
            frame_len(max_payload),
            route(num_nodes.trailing_zeros()),
            any::<u64>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(kind, src, dest, tag, msg_id, total_len, frame_len, route, seq, trailer, now)| {
                    let (total_len, frame_len) = match kind {
                        Kind::Eager => (frame_len as u64, frame_len),
                        Kind::Data => (total_len.max(frame_len as u64), frame_len),
                        _ => (total_len, 0),
                    };
                    Header {
                        kind,
                        src,
                        dest,
                        tag,
                        msg_id,
                        total_len,
                        frame_len,
                        route,
                        seq,
                        trailer: trailer && matches!(kind, Kind::Eager | Kind::Data),
                        ack_now: now && matches!(kind, Kind::Eager | Kind::Data),
                    }
                },
            )
    }

    /// A cube size (1 to 2^16 nodes) and whether the job has a host.
    pub(crate) fn cube() -> impl Strategy<Value = (u32, bool)> {
        (0u32..=16, any::<bool>()).prop_map(|(d, host)| (1 << d, host))
    }
}

#[cfg(test)]
#[path = "frame_tests.rs"]
mod tests;
