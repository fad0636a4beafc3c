//! Global concatenation, GCAT (seed §4 and the GCAT listing).
//!
//! Each member of the root's subcube contributes a byte string of any length (zero
//! included). With `diff = me XOR root`, a node's parent is `me XOR lowbit(diff)` and its
//! children are `me XOR b` for every link `b` below `lowbit(diff)` (all links at the root).
//! A node appends its children's partial results to its own contribution in ascending
//! link order and passes the result to its parent. So the root receives the contributions
//! ordered by `node XOR root`: in ascending node order when the root is 0, and "the
//! exclusive-or of the ascending order with the root" otherwise — position `k` holds the
//! contribution of node `k XOR root`. Every other node ends with the partial result of its
//! subtree (the seed's output semantics).
//!
//! The listing needs the types TYPE, TYPE+1, ..., TYPE+DIM−1 to keep the children apart;
//! here each child's message is received by its source, under one reserved tag per call.
//!
//! **In pieces where the links are slow.** The seed's node passes its partial result on only
//! once it has all of it, so the root's last child, whose subtree holds half the cube, sends
//! `2^(dim−1)` contributions only after its own last child has sent `2^(dim−2)`, and so on:
//! `(2^dim − 1) · t_w m` for contributions of m bytes, against `2^(dim−1) · t_w m` for the
//! root's busiest link. Where the links are slow (`pieces.rs`: the contribution is cut in
//! several pieces), a node instead *streams* its partial result: its own contribution in
//! pieces, then each child's pieces in ascending link order, each passed on as soon as it is
//! in — the same order, the same partial result on every node, about `2^(dim−1) · t_w m`.
//! Every message is one **frame**: a flag byte ([`MORE`] or [`LAST`]) and a part of the
//! sender's partial result; a node's partial result is its frames' data in order, ended by
//! the one flagged [`LAST`]. A node that does not stream sends one frame, flagged [`LAST`]
//! (the seed's one message); a parent takes either, so the choice is each node's own.

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::checks::{check_dim, check_node};
use super::pieces;
use crate::base::parts::{IntoPayload, Parts};
use crate::error::RecoveredData;
use crate::error::{Error, Result};
use crate::node::{Node, SendRequest};

/// A frame's flag: more of the sender's partial result follows.
const MORE: u8 = 0;
/// A frame's flag: the last frame of the sender's partial result.
const LAST: u8 = 1;

impl Node {
    /// Concatenate the contributions of every member of the root's subcube of dimension
    /// `dim` (seed §4, GCAT). Returns the concatenation at `root`, and this node's subtree's
    /// partial result elsewhere. Contributions may differ in length.
    ///
    /// The order at the root is by `node XOR root`: ascending node numbers when the root is 0.
    ///
    /// ```no_run
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?;
    /// let all = node.gcat(vec![node.mynode() as u8], 0, node.cubedim())?;
    /// if node.mynode() == 0 {
    ///     assert_eq!(all.len(), node.numnodes() as usize);
    ///     assert!(all.iter().enumerate().all(|(k, &b)| b as usize == k));
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::GcatNonParticipant`] (`GCAT: CALLED BY NON PARTICIPANT`) when this node is
    /// not in the `dim`-subcube of `root` (nothing was sent); [`Error::IpscArgument`] /
    /// [`Error::InvalidNode`] for a `dim` or `root` outside the cube.
    #[doc(alias = "GCAT")]
    pub fn gcat(&self, data: impl IntoPayload, root: NodeId, dim: u32) -> Result<Bytes> {
        self.gcat_in(data.into_payload(), root, dim, None)
    }

    /// [`Node::gcat`] with this node's contribution cut in pieces of `piece` bytes (`None`:
    /// as `pieces.rs` chooses for the links); streamed to the parent when it is cut.
    pub(super) fn gcat_in(
        &self,
        own: Bytes,
        root: NodeId,
        dim: u32,
        piece: Option<usize>,
    ) -> Result<Bytes> {
        check_dim(self, "GCAT", dim)?;
        check_node(self, "GCAT root", root)?;
        let me = self.mynode();
        let diff = me ^ root;
        if u64::from(diff) >> dim != 0 {
            return Err(Error::GcatNonParticipant { me, root, dim });
        }
        let tag = self.collective_tag(dim);
        let _call = crate::trace::Call::utility("GCAT", me, dim, Some(root), own.len());
        // Children: links below lowbit(diff), ascending (all links at the root); each one's
        // first frame is posted for at once.
        let low = diff & diff.wrapping_neg();
        let end = if diff == 0 {
            1u64 << dim
        } else {
            u64::from(low)
        };
        let mut children = Vec::new();
        let mut link = 1u64;
        while link < end {
            let child = me ^ link as u32;
            children.push((child, self.irecv_internal(Some(child), tag)?));
            link <<= 1;
        }
        let parent = (diff != 0).then_some(me ^ low);
        let piece = pieces::piece_len(own.len(), dim, 1, piece);
        // Stream to the parent only where the contribution is cut (slow links, long
        // contributions); otherwise one frame at the end, as the seed's one message.
        let stream = parent.filter(|_| piece < own.len());
        let mut pending: Vec<SendRequest> = Vec::new();
        let mut pass_on = |data: &Bytes, last: bool| -> Result<()> {
            if let Some(p) = stream {
                pending.push(self.isend_internal(p, tag, framed(data.clone(), last))?);
            }
            Ok(())
        };
        let mut result = Vec::with_capacity(1 + children.len());
        let own_pieces = pieces::ranges(own.len(), piece).count();
        for (k, (start, end)) in pieces::ranges(own.len(), piece).enumerate() {
            pass_on(
                &own.slice(start..end),
                children.is_empty() && k + 1 == own_pieces,
            )?;
        }
        result.push(own);
        let n_children = children.len();
        for (i, (child, first)) in children.into_iter().enumerate() {
            let mut next = Some(first);
            while let Some(r) = next.take() {
                let (last, data) = unframe(r.wait()?.into_data(), child)?;
                if !last {
                    next = Some(self.irecv_internal(Some(child), tag)?);
                }
                pass_on(&data, last && i + 1 == n_children)?;
                result.push(data);
            }
        }
        let result = concat(result);
        if let Some(p) = parent {
            if stream.is_none() {
                self.send_internal(p, tag, framed(result.clone(), true))?;
            }
        }
        pending.into_iter().try_for_each(SendRequest::wait)?;
        Ok(result)
    }

    /// [`Node::gcat`] in the seed's buffer form: this node's contribution is
    /// `buf[..msglen]`; the result replaces it in `buf` and its length (the seed's CNT) is
    /// returned.
    ///
    /// # Errors
    /// As [`Node::gcat`], and [`Error::GcatBufferExceeded`] (`GCAT: BUFFER LENGTH
    /// EXCEEDED`) when the result is longer than `buf`: the partial result was still passed
    /// on (the other nodes are not affected) and the whole result is returned inside the
    /// error; `buf` is left unchanged. `msglen > buf.len()` is [`Error::IpscArgument`].
    #[doc(alias = "GCAT")]
    pub fn gcat_into(
        &self,
        buf: &mut [u8],
        msglen: usize,
        root: NodeId,
        dim: u32,
    ) -> Result<usize> {
        if msglen > buf.len() {
            return Err(Error::IpscArgument {
                routine: "GCAT",
                detail: format!(
                    "the contribution length {msglen} exceeds the buffer length {}; pass \
                     msglen <= buf.len()",
                    buf.len()
                ),
            });
        }
        let result = self.gcat(&buf[..msglen], root, dim)?;
        if result.len() > buf.len() {
            return Err(Error::GcatBufferExceeded {
                needed: result.len() as u64,
                capacity: buf.len() as u64,
                data: RecoveredData(result),
            });
        }
        buf[..result.len()].copy_from_slice(&result);
        Ok(result.len())
    }
}

/// `data` as one frame: its flag byte, [`LAST`] if `last`, else [`MORE`], then the data.
fn framed(data: Bytes, last: bool) -> Parts {
    let flag = Bytes::from_static(if last { &[LAST] } else { &[MORE] });
    Parts::Many(vec![flag, data])
}

/// A frame received from `from`: whether it is the last of its sender's partial result,
/// and its data. A frame without a flag byte, or with another flag, is a protocol error of
/// the sender.
fn unframe(b: Bytes, from: NodeId) -> Result<(bool, Bytes)> {
    match b.first() {
        Some(&f @ (MORE | LAST)) => Ok((f == LAST, b.slice(1..))),
        other => Err(Error::Protocol {
            peer: from,
            detail: format!(
                "a GCAT frame {} where a flag byte ({MORE}: more follows, {LAST}: the last) \
                 was due",
                match other {
                    Some(f) => format!("flagged {f}"),
                    None => "of 0 bytes".into(),
                }
            ),
        }),
    }
}

/// The parts in one buffer: the only non-empty part itself, not copied, when there is one
/// (`Parts::push` drops empty parts, `Parts::into_bytes` joins the rest).
fn concat(parts: Vec<Bytes>) -> Bytes {
    let mut all = Parts::default();
    for p in parts {
        all.push(p);
    }
    all.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::local::run_local;

    #[test]
    fn a_frame_reads_back_and_a_bad_one_is_refused() {
        for last in [false, true] {
            let Parts::Many(v) = framed(Bytes::from_static(b"abc"), last) else {
                panic!("one frame is a flag and the data");
            };
            let b: Bytes = v.concat().into();
            let (l, d) = unframe(b, 3).unwrap();
            assert_eq!((l, &d[..]), (last, &b"abc"[..]));
        }
        for bad in [&b""[..], &b"\x02abc"[..]] {
            let e = unframe(Bytes::from_static(bad), 6).unwrap_err();
            assert!(matches!(e, Error::Protocol { peer: 6, .. }), "{e}");
            assert!(e.to_string().contains("GCAT frame"), "{e}");
        }
        assert_eq!(&concat(vec![]).slice(..)[..], b"");
        assert_eq!(
            &concat(vec![Bytes::new(), "ab".into(), Bytes::new()])[..],
            b"ab"
        );
        assert_eq!(
            &concat(vec!["ab".into(), Bytes::new(), "c".into()])[..],
            b"abc"
        );
    }

    /// GCAT in pieces of every size gives every node of every subcube, from every root,
    /// exactly what GCAT in one message gives — the root's concatenation and the partial
    /// results elsewhere — with contributions of different lengths, empty ones included.
    #[test]
    fn gcat_in_pieces_equals_gcat_in_one_message() {
        for d in 1..=3u32 {
            let out = run_local(d, move |node| -> Result<()> {
                let me = node.mynode();
                for len in [0usize, 1, 100, 1000] {
                    // Node k contributes len + 3k bytes (none for len 0 at node 0).
                    let n = len + 3 * me as usize * usize::from(len > 0);
                    let own: Bytes = (0..n).map(|i| (i * 7 + me as usize) as u8).collect();
                    for root in 0..1u32 << d {
                        let whole = node.gcat_in(own.clone(), root, d, Some(usize::MAX))?;
                        // The last: odd nodes stream, even ones send one frame.
                        let mixed = if me % 2 == 1 { 7 } else { usize::MAX };
                        for piece in [1usize, 64, 512, mixed] {
                            let got = node.gcat_in(own.clone(), root, d, Some(piece))?;
                            assert_eq!(got, whole, "node {me} root {root} len {len} piece {piece}");
                        }
                        if me == root {
                            // Position k holds node k XOR root's contribution.
                            let mut at = 0;
                            for k in 0..1u32 << d {
                                let from = k ^ root;
                                let m = len + 3 * from as usize * usize::from(len > 0);
                                let want: Vec<u8> =
                                    (0..m).map(|i| (i * 7 + from as usize) as u8).collect();
                                assert_eq!(&whole[at..at + m], &want[..], "root {root} k {k}");
                                at += m;
                            }
                            assert_eq!(at, whole.len());
                        }
                    }
                }
                Ok(())
            });
            for r in out {
                r.unwrap();
            }
        }
    }
}
