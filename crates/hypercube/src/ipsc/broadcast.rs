//! Global broadcast, GSENDW at the root and GRECVW everywhere else (seed §2 and the
//! GSENDW/GRECVW listings).
//!
//! The spanning tree is built by induction on the cube dimension: the root sends to its
//! neighbors across links 0, 1, ..., dim−1 in that order; a node that receives the message
//! across link `k` sends it on across links `k+1, ..., dim−1`. So a receiver does not need
//! to know the root, any node of the subcube may be the root, and every node receives the
//! message exactly once, after `hamming(root, node)` hops. Each call takes its own reserved
//! tag (see the module docs of [`crate::ipsc`]), so back-to-back broadcasts and user
//! messages never interfere. Where the links are slow a long message goes down all the
//! links at once, over the edge-disjoint spanning binomial trees (`gsend_esbt.rs`), where
//! the job's automatic choice for a broadcast of its length is the all-port one; else down
//! the seed's tree, in pieces each passed on as it arrives where the links are slow
//! (`pieces.rs`).
//!
//! A first message starts with a mode byte: [`SEED`] (then the 16-byte prefix of
//! `pieces.rs`) or [`ESBT`] (then `gsend_esbt.rs`'s header), so GRECVW, which does not know
//! the root, learns from it which trees the message comes down.

use bytes::Bytes;

use super::checks::check_dim;
use super::gsend_esbt::ESBT;
use super::pieces;
use crate::base::parts::{IntoPayload, Parts};
use crate::collectives::select::{choose_on, machine, Algorithm, Machine, Operation};
use crate::error::RecoveredData;
use crate::error::{Error, Result};
use crate::node::{Node, SendRequest};

/// The first byte of a GSENDW first piece sent down the seed's tree.
pub(super) const SEED: u8 = 0;

/// Which trees a GSENDW takes.
#[derive(Clone, Copy, Debug)]
pub(super) enum How {
    /// As the links and the length say: [`How::Esbt`] where the job's automatic choice for
    /// a broadcast of this length on this subcube is the all-port one, else the seed's tree
    /// in the pieces `pieces.rs` chooses.
    Auto,
    /// The seed's tree, in pieces of `piece` bytes (`None`: as `pieces.rs` chooses).
    Seed { piece: Option<usize> },
    /// The spanning binomial trees, each part in `pieces` pieces.
    Esbt { pieces: usize },
}

impl How {
    /// [`How::Auto`] made definite for `total` bytes on a `dim`-subcube of this job.
    fn resolve(self, total: usize, dim: u32) -> How {
        self.resolve_on(&machine(), total, dim)
    }

    /// [`How::resolve`] on machine `m`.
    pub(super) fn resolve_on(self, m: &Machine, total: usize, dim: u32) -> How {
        if !matches!(self, How::Auto) {
            return self;
        }
        // One link (dim 1) has one tree; fast links keep the seed's.
        let all_port = dim >= 2
            && m.links_bound(dim)
            && matches!(
                choose_on(Operation::Bcast, Algorithm::Auto, dim, total, true, m),
                Ok(Algorithm::AllPort)
            );
        if all_port {
            How::Esbt {
                pieces: m.pieces(total, dim),
            }
        } else {
            How::Seed { piece: None }
        }
    }
}

impl Node {
    /// Broadcast `data` from this node (the root) to every other node of its subcube of
    /// dimension `dim` (seed §2, GSENDW). The others call [`Node::grecv`] (or
    /// [`Node::grecv_into`]) with the same `dim`. `dim = 0` sends nothing.
    ///
    /// ```no_run
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?;
    /// let d = node.cubedim();
    /// if node.mynode() == 3 {
    ///     node.gsend(&b"hello"[..], d)?;
    /// } else {
    ///     assert_eq!(&node.grecv(d)?[..], b"hello");
    /// }
    /// # Ok(()) }
    /// ```
    #[doc(alias = "GSENDW")]
    pub fn gsend(&self, data: impl IntoPayload, dim: u32) -> Result<()> {
        self.gsend_in(data.into_payload(), dim, How::Auto)
    }

    /// [`Node::gsend`] down the trees `how` says.
    pub(super) fn gsend_in(&self, data: Bytes, dim: u32, how: How) -> Result<()> {
        check_dim(self, "GSENDW", dim)?;
        let tag = self.collective_tag(dim);
        let _call = crate::trace::Call::utility(
            "GSENDW",
            self.mynode(),
            dim,
            Some(self.mynode()),
            data.len(),
        );
        let piece = match how.resolve(data.len(), dim) {
            How::Esbt { pieces } if dim > 0 => return self.gsend_esbt(tag, data, dim, pieces),
            How::Seed { piece } => piece,
            How::Esbt { .. } | How::Auto => None,
        };
        // In pieces where the links are slow (`pieces.rs`), each passed on down the tree
        // as it arrives; the first starts with the mode byte, the message's length and the
        // pieces'.
        let piece = pieces::piece_len(data.len(), dim, 1, piece);
        let mut pending = Vec::new();
        for (k, (start, end)) in pieces::ranges(data.len(), piece).enumerate() {
            let bytes = data.slice(start..end);
            let parts = if k == 0 {
                let head = pieces::prefix(data.len(), piece);
                Parts::Many(vec![Bytes::from_static(&[SEED]), head, bytes])
            } else {
                Parts::One(bytes)
            };
            self.forward_broadcast(tag, parts, 1, dim, &mut pending)?;
        }
        pending.into_iter().try_for_each(SendRequest::wait)
    }

    /// Receive a broadcast started by [`Node::gsend`] on this node's subcube of dimension
    /// `dim`, and pass it on to this node's subtree (seed §2, GRECVW). The root need not be
    /// known. Returns the message.
    ///
    /// # Errors
    /// [`Error::IpscArgument`] for `dim = 0` (a subcube of one node has nobody to send to
    /// this node) or `dim` larger than the cube. Only members of the root's subcube may
    /// call it: like the seed's, a call on any other node never returns.
    #[doc(alias = "GRECVW")]
    pub fn grecv(&self, dim: u32) -> Result<Bytes> {
        check_dim(self, "GRECVW", dim)?;
        if dim == 0 {
            return Err(Error::IpscArgument {
                routine: "GRECVW",
                detail: "subcube dimension 0 holds only this node, so no root can send to it; \
                         call GSENDW on a node of dimension-0 subcubes instead, or pass a \
                         larger dimension"
                    .into(),
            });
        }
        let tag = self.collective_tag(dim);
        let _call = crate::trace::Call::utility("GRECVW", self.mynode(), dim, None, 0);
        let m = self.recv_internal(None, tag)?;
        let from = m.source();
        let link = self.mynode() ^ from;
        if !link.is_power_of_two() || link >= 1 << dim {
            return Err(Error::Protocol {
                peer: from,
                detail: format!(
                    "a GRECVW message came from node {from}, which is not a neighbor in the \
                     {dim}-subcube of node {}",
                    self.mynode()
                ),
            });
        }
        // The first piece's mode byte says which trees; down the seed's, it says how long
        // the message is and how it is cut (`pieces.rs`), and every piece goes on down the
        // tree as it is, prefix and all, before the next is waited for.
        let first = m.into_data();
        match first.first() {
            Some(&SEED) => {}
            Some(&ESBT) => return self.grecv_esbt(tag, dim, from, first),
            other => {
                let what = other.map_or("of 0 bytes".to_string(), |b| format!("with mode {b}"));
                return Err(Error::Protocol {
                    peer: from,
                    detail: format!(
                        "a GRECVW first piece {what}, where a mode byte was due: {SEED} (the \
                         seed's tree) or {ESBT} (the spanning trees)"
                    ),
                });
            }
        }
        let (total, piece, data) = pieces::split_prefix(&first.slice(1..), "GRECVW", from)?;
        let mut pending = Vec::new();
        self.forward_broadcast(tag, Parts::One(first), link << 1, dim, &mut pending)?;
        let whole =
            pieces::receive_rest(self, (from, tag), "GRECVW", (total, piece), data, |got| {
                self.forward_broadcast(tag, Parts::One(got), link << 1, dim, &mut pending)
            })?;
        pending.into_iter().try_for_each(SendRequest::wait)?;
        Ok(whole)
    }

    /// [`Node::grecv`] into a caller's buffer; returns the message length (the seed's CNT).
    ///
    /// # Errors
    /// [`Error::GrecvwTruncated`] (`GRECVW: MESSAGE TRUNCATED`) when the message is longer
    /// than `buf`: the whole message was still forwarded to this node's subtree and is
    /// returned inside the error; `buf` is left unchanged.
    #[doc(alias = "GRECVW")]
    pub fn grecv_into(&self, buf: &mut [u8], dim: u32) -> Result<usize> {
        let data = self.grecv(dim)?;
        if data.len() > buf.len() {
            return Err(Error::GrecvwTruncated {
                needed: data.len() as u64,
                capacity: buf.len() as u64,
                data: RecoveredData(data),
            });
        }
        buf[..data.len()].copy_from_slice(&data);
        Ok(data.len())
    }

    /// Start sending `data` across links `first_link`, `2·first_link`, ... below `2^dim`
    /// (one-bit masks); the sends join `pending`, to be waited for by the caller.
    fn forward_broadcast(
        &self,
        tag: u32,
        data: Parts,
        first_link: u32,
        dim: u32,
        pending: &mut Vec<SendRequest>,
    ) -> Result<()> {
        let me = self.mynode();
        let mut link = u64::from(first_link);
        while link < 1u64 << dim {
            pending.push(self.isend_internal(me ^ link as u32, tag, data.clone())?);
            link <<= 1;
        }
        Ok(())
    }
}

/// GSENDW of every length in `lens` from every root of every subcube dimension 1–3, once
/// down the trees of each of `hows`: every other member receives the message whole (the
/// tests of `pieces.rs` and `gsend_esbt.rs`).
#[cfg(test)]
pub(super) fn check_every_root(lens: &[usize], hows: &[How]) {
    for d in 1..=3u32 {
        let out = crate::local::run_local(d, move |node| -> Result<()> {
            for &len in lens {
                let want: Bytes = (0..len).map(|i| (i * 31 + len) as u8).collect();
                for root in 0..1u32 << d {
                    for &how in hows {
                        if node.mynode() == root {
                            node.gsend_in(want.clone(), d, how)?;
                        } else {
                            let got = node.grecv(d)?;
                            assert_eq!(got, want, "d {d} root {root} len {len} {how:?}");
                        }
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
