//! Sparse global send, SPGSNW / SPGRCW (seed §7 and the SPGSNW/SPGRCW/SPLIT listings).
//!
//! The root sends one message to an arbitrary list of targets through a fan-out tree: SPLIT
//! ([`crate::topology::split_in_place`]) picks a target with no other target between the
//! root and it, sends it the message with its *descendants* (the targets it lies on a
//! shortest path to) appended, and repeats with the rest
//! ([`crate::topology::sparse_send_plan`]). Each target receives with SPGRCW and does the
//! same with the list that came with the message. Targets need not know the list or the
//! root; the caller's list is not modified (the seed destroys it).
//!
//! ## Who forwards
//!
//! Non-targets do not call SPGRCW, so no user code runs on the nodes between a sender and
//! the child it chose. As in the seed, the message goes straight to the child, and the
//! runtime's own forwarding carries it there hop by hop along the e-cube route (a shortest
//! path), in the background of whatever the intermediate nodes are doing. Since a child lies
//! on a shortest path from its sender to each of its descendants, every target is reached
//! along a shortest path from the root. ([`crate::topology::sparse_fanout`] builds the same
//! tree over single links only, with relays; it needs every node on the way to take part,
//! which the seed's contract — only targets call SPGRCW — does not give.)
//!
//! ## Wire format and types
//!
//! `[count: u32 LE][count target numbers: u32 LE][the message's length, its pieces' length:
//! u64 LE each][the first piece]`, then the other pieces as they are (one piece but where
//! the links are slow: `pieces.rs`, as GSENDW's; a piece is passed on as it arrives),
//! under a reserved tag keyed by TYPE (see [`crate::ipsc`]). The message is not copied to
//! be sent: the list goes before it in the same write. Unlike the seed, the receive buffer need not hold the
//! appended list, and lengths need not be multiples of the integer size: CNT is exact.
//! As in the seed, a target cannot tell two sparse sends of one TYPE apart, so sends of one
//! TYPE that may be in flight together should go to disjoint target sets (or use distinct
//! types); user messages of that type are never consumed.

use bytes::{BufMut, Bytes, BytesMut};
use hypercube_topology::{sparse_send_plan, NodeId};

use super::checks::{check_node, keyed_tag};
use super::pieces;
use crate::base::message::MsgType;
use crate::base::parts::{IntoPayload, Parts};
use crate::base::tags::Keyed;
use crate::error::RecoveredData;
use crate::error::{Error, Result};
use crate::node::{Node, SendRequest};

impl Node {
    /// Send `data` from this node to every node in `targets` through SPLIT's fan-out tree
    /// (seed §7, SPGSNW). Each target calls [`Node::spgrecv`] (or [`Node::spgrecv_into`])
    /// with the same type; other nodes call nothing. Duplicates and this node itself in
    /// `targets` are ignored; an empty list sends nothing.
    ///
    /// ```no_run
    /// use hypercube::MsgType;
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?; // a 3-cube
    /// let targets = [7, 3, 4, 1, 6];
    /// if node.mynode() == 0 {
    ///     node.spgsend(MsgType(9), &b"to some"[..], &targets)?;
    /// } else if targets.contains(&node.mynode()) {
    ///     assert_eq!(&node.spgrecv(MsgType(9))?[..], b"to some");
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidNode`] for a target outside the cube (nothing was sent);
    /// [`Error::IpscArgument`] for a type above [`super::MAX_RESERVED_USER_TYPE`].
    #[doc(alias = "SPGSNW")]
    pub fn spgsend(&self, ty: MsgType, data: impl IntoPayload, targets: &[NodeId]) -> Result<()> {
        self.spgsend_in(ty, data.into_payload(), targets, None)
    }

    /// [`Node::spgsend`] in pieces of `piece` bytes (`None`: as `pieces.rs` chooses for the
    /// links).
    pub(super) fn spgsend_in(
        &self,
        ty: MsgType,
        data: Bytes,
        targets: &[NodeId],
        piece: Option<usize>,
    ) -> Result<()> {
        let tag = keyed_tag("SPGSNW", Keyed::Sparse, ty.0)?;
        for &t in targets {
            check_node(self, "SPGSNW target", t)?;
        }
        let me = self.mynode();
        let mut list: Vec<NodeId> = Vec::with_capacity(targets.len());
        for &t in targets {
            if t != me && !list.contains(&t) {
                list.push(t);
            }
        }
        // In pieces where the links are slow (`pieces.rs`), as GSENDW's.
        let piece = pieces::piece_len(data.len(), self.cubedim(), 1, piece);
        let plan = sparse_send_plan(me, &list);
        let mut sends = Vec::new();
        for (k, (start, end)) in pieces::ranges(data.len(), piece).enumerate() {
            let lengths = (k == 0).then(|| (data.len(), piece));
            self.sparse_forward(tag, data.slice(start..end), lengths, &plan, &mut sends)?;
        }
        sends.into_iter().try_for_each(SendRequest::wait)
    }

    /// Receive a sparse global send of type `ty` and forward it to the targets that came
    /// with it (seed §7, SPGRCW). Returns the message.
    ///
    /// Only targets may call it: a call on another node waits for a message that never
    /// comes (as in the seed).
    #[doc(alias = "SPGRCW")]
    pub fn spgrecv(&self, ty: MsgType) -> Result<Bytes> {
        let tag = keyed_tag("SPGRCW", Keyed::Sparse, ty.0)?;
        let m = self.recv_internal(None, tag)?;
        let from = m.source();
        let bad = |why: String| Error::Protocol {
            peer: from,
            detail: format!(
                "malformed SPGRCW message from node {from} (type {}): {why}",
                ty.0
            ),
        };
        let raw = m.into_data();
        let word = |i: usize| -> Option<u32> {
            let b = raw.get(4 * i..4 * i + 4)?;
            Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let count =
            word(0).ok_or_else(|| bad("shorter than its 4-byte list count".into()))? as usize;
        let mut list = Vec::with_capacity(count.min(raw.len() / 4));
        for i in 0..count {
            let t = word(1 + i).ok_or_else(|| bad(format!("list of {count} targets cut short")))?;
            if t >= self.numnodes() || t == self.mynode() {
                return Err(bad(format!("target {t} is not another node of the cube")));
            }
            list.push(t);
        }
        let (total, piece, data) =
            pieces::split_prefix(&raw.slice(4 * (1 + count)..), "SPGRCW", from)?;
        // Each piece goes on to this node's children as it arrives, before the next is
        // waited for; the first with the lengths, as it came.
        let plan = sparse_send_plan(self.mynode(), &list);
        let mut sends = Vec::new();
        self.sparse_forward(tag, data.clone(), Some((total, piece)), &plan, &mut sends)?;
        let whole =
            pieces::receive_rest(self, (from, tag), "SPGRCW", (total, piece), data, |got| {
                self.sparse_forward(tag, got, None, &plan, &mut sends)
            })?;
        sends.into_iter().try_for_each(SendRequest::wait)?;
        Ok(whole)
    }

    /// [`Node::spgrecv`] into a caller's buffer; returns the message length (the seed's
    /// CNT).
    ///
    /// # Errors
    /// [`Error::SpgrcwTruncated`] (`SPGRCW: TRUNCATED MESSAGE`) when the message is longer
    /// than `buf`: it was still forwarded to the remaining targets, and is returned whole
    /// inside the error; `buf` is left unchanged.
    #[doc(alias = "SPGRCW")]
    pub fn spgrecv_into(&self, ty: MsgType, buf: &mut [u8]) -> Result<usize> {
        let data = self.spgrecv(ty)?;
        if data.len() > buf.len() {
            return Err(Error::SpgrcwTruncated {
                needed: data.len() as u64,
                capacity: buf.len() as u64,
                data: RecoveredData(data),
            });
        }
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }

    /// SPGSNW's step: start sending each child of `plan` (SPLIT of the list relative to
    /// this node) a piece of the message — the first (`lengths`: the message's and the
    /// pieces' lengths) after the child's descendants and the lengths; the sends join
    /// `sends`.
    fn sparse_forward(
        &self,
        tag: u32,
        piece: Bytes,
        lengths: Option<(usize, usize)>,
        plan: &[(NodeId, Vec<NodeId>)],
        sends: &mut Vec<SendRequest>,
    ) -> Result<()> {
        let lengths = lengths.map(|(total, size)| pieces::prefix(total, size));
        for (child, descendants) in plan {
            let parts = match &lengths {
                Some(lengths) => {
                    let mut head = BytesMut::with_capacity(4 * (1 + descendants.len()));
                    head.put_u32_le(descendants.len() as u32);
                    for d in descendants {
                        head.put_u32_le(*d);
                    }
                    Parts::Many(vec![head.freeze(), lengths.clone(), piece.clone()])
                }
                None => Parts::One(piece.clone()),
            };
            sends.push(self.isend_internal(*child, tag, parts)?);
        }
        Ok(())
    }
}
