//! GSENDW / GRECVW over all the links at once: Johnsson & Ho's edge-disjoint spanning
//! binomial trees ("Optimum broadcasting and personalized communication in hypercubes",
//! IEEE Trans. Computers 38(9), 1989, §IV; the trees: `collectives/esbt.rs`), for the
//! seed's broadcast (§2) where the links are slow.
//!
//! The seed's tree uses one link of the root and, pipelined in pieces (`pieces.rs`), still
//! moves the whole message over every tree edge one after the other: `t_w m` at best on
//! links of `t_w` a byte. Here the message is cut into `dim` parts, part t goes down tree t
//! in n pieces, and since the trees share no directed link every link of every node can be
//! busy at once: about `t_w m / dim` (the all-port broadcast of `collectives/broadcast/
//! allport.rs`). It runs where the job's automatic choice for a broadcast of the same
//! length on the same subcube is that all-port broadcast (slow links, long messages); the
//! seed's tree everywhere else.
//!
//! GRECVW does not know the root, and a node's parent differs from tree to tree. So the
//! first piece of every part starts with a header — the mode byte [`ESBT`], the message's
//! length, the number of pieces per part and the root — and a receiver learns from the
//! first message it gets, whichever tree it came down, where every other piece will come
//! from: its parent in tree t is `esbt::parent` of its position relative to the root, and
//! a message's source names its tree. Every first piece is checked against the first one;
//! a piece of another length than the header implies, a header that disagrees, or a part
//! from a node that is no parent is a protocol error of the sender, never a hang.

use std::ops::Range;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::base::parts::Parts;
use crate::collectives::esbt;
use crate::error::{Error, Result};
use crate::node::{Node, SendRequest};

/// The first byte of a GSENDW first piece sent down the spanning binomial trees.
pub(super) const ESBT: u8 = 1;

/// The header of a part's first piece: [`ESBT`], the message's length (u64), the pieces
/// per part (u64) and the root (u32), little-endian.
const HEADER: usize = 1 + 8 + 8 + 4;

/// The most pieces per part a header may announce: the runtime cuts at most
/// `select::pipeline::MAX_PIECES` (64). With the first piece's length checked against the
/// header, a message can announce at most this many times `dim` times what its first piece
/// carries, so a corrupt header cannot make a receiver allocate without bound.
const MOST_PIECES: u64 = 1 << 10;

impl Node {
    /// The root's side: `data` to every other member of this node's `dim`-subcube, part t
    /// down tree t, each part in `n` pieces (piece j of every part before piece j + 1 of
    /// any, so all the root's links start at once).
    pub(super) fn gsend_esbt(&self, tag: u32, data: Bytes, dim: u32, n: usize) -> Result<()> {
        let me = self.mynode();
        let n = n.max(1);
        let head = header(data.len(), n, me);
        let mut pending = Vec::with_capacity(n * dim as usize);
        for j in 0..n as u32 {
            for t in 0..dim {
                let bytes = data.slice(esbt::piece(data.len(), dim, n as u32, t, j));
                let parts = if j == 0 {
                    Parts::Many(vec![head.clone(), bytes])
                } else {
                    Parts::One(bytes)
                };
                pending.push(self.isend_internal(me ^ 1 << t, tag, parts)?);
            }
        }
        pending.into_iter().try_for_each(SendRequest::wait)
    }

    /// A receiver's side, after the first message `first` (a part's first piece, from the
    /// neighbour `from`): every other piece from this node's parent in its tree, each handed
    /// on to this node's children in that tree as it comes and put in place. Returns the
    /// message.
    pub(super) fn grecv_esbt(
        &self,
        tag: u32,
        dim: u32,
        from: NodeId,
        first: Bytes,
    ) -> Result<Bytes> {
        let me = self.mynode();
        let (total, n, root, data) = read_header(&first, from)?;
        let v = me ^ root;
        if v == 0 || u64::from(v) >> dim != 0 {
            return Err(bad(
                from,
                format!(
                    "a GRECVW header names root {root}, which is not another member of node \
                     {me}'s {dim}-subcube"
                ),
            ));
        }
        let t0 = esbt::tree_of(v, from ^ root, dim).ok_or_else(|| {
            bad(
                from,
                format!(
                    "a GRECVW part from node {from}, which is no parent of node {me} in any \
                     spanning tree of root {root}"
                ),
            )
        })?;
        // Where piece j of part t goes, checked against what came: for the first piece
        // before the header's length is trusted with memory (a header announcing more than
        // its pieces can carry is refused here, not allocated).
        let at = |t: u32, j: u32, got: usize, src: NodeId| {
            let at = esbt::piece(total, dim, n, t, j);
            if got == at.len() {
                return Ok(at);
            }
            let which = if j == 0 {
                "first piece".to_string()
            } else {
                format!("piece {j}")
            };
            Err(bad(
                src,
                format!(
                    "a GRECVW {which} of {got} bytes in part {t}, where a message of {total} \
                     bytes in {n} pieces per part has {}",
                    at.len()
                ),
            ))
        };
        let first_at = at(t0, 0, data.len(), from)?;
        let mut out = BytesMut::zeroed(total);
        let mut pending = Vec::new();
        let kids: Vec<Vec<u32>> = (0..dim).map(|t| esbt::children(v, t, dim)).collect();
        // A piece of part t as received (handed on as it is, header and all) and where its
        // data (from `skip` on) goes.
        let mut place = |t: u32, msg: Bytes, skip: usize, to: Range<usize>| -> Result<()> {
            for &kid in &kids[t as usize] {
                pending.push(self.isend_internal(kid ^ root, tag, msg.clone())?);
            }
            out[to].copy_from_slice(&msg[skip..]);
            Ok(())
        };
        place(t0, first, HEADER, first_at)?;
        for (t, j) in esbt::arrival_order(v, dim, n) {
            if (t, j) == (t0, 0) {
                continue;
            }
            let src = esbt::parent(v, t, dim) ^ root;
            let msg = self.recv_internal(Some(src), tag)?.into_data();
            let skip = if j == 0 {
                let (tot, pieces, r, _) = read_header(&msg, src)?;
                if (tot, pieces, r) != (total, n, root) {
                    return Err(bad(
                        src,
                        format!(
                            "a GRECVW header of {tot} bytes in {pieces} pieces from root {r}, \
                             where the first said {total} bytes in {n} pieces from root {root}"
                        ),
                    ));
                }
                HEADER
            } else {
                0
            };
            let to = at(t, j, msg.len() - skip, src)?;
            place(t, msg, skip, to)?;
        }
        pending.into_iter().try_for_each(SendRequest::wait)?;
        Ok(out.freeze())
    }
}

/// The header of a part's first piece ([`HEADER`] bytes).
fn header(total: usize, n: usize, root: NodeId) -> Bytes {
    let mut b = BytesMut::with_capacity(HEADER);
    b.put_u8(ESBT);
    b.put_u64_le(total as u64);
    b.put_u64_le(n as u64);
    b.put_u32_le(root);
    b.freeze()
}

/// A part's first piece from `from`: `(total, pieces per part, root, data)`.
fn read_header(b: &Bytes, from: NodeId) -> Result<(usize, u32, NodeId, Bytes)> {
    if b.len() < HEADER || b[0] != ESBT {
        return Err(bad(
            from,
            format!(
                "a GRECVW first piece of {} bytes without its {HEADER}-byte header",
                b.len()
            ),
        ));
    }
    let mut fields = &b[1..HEADER];
    let (total, n, root) = (
        fields.get_u64_le(),
        fields.get_u64_le(),
        fields.get_u32_le(),
    );
    let (Ok(total), true) = (usize::try_from(total), (1..=MOST_PIECES).contains(&n)) else {
        return Err(bad(
            from,
            format!("a GRECVW header announcing {total} bytes in {n} pieces per part"),
        ));
    };
    Ok((total, n as u32, root, b.slice(HEADER..)))
}

fn bad(peer: NodeId, detail: String) -> Error {
    Error::Protocol { peer, detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipsc::broadcast::How;
    use crate::local::run_local;

    #[test]
    fn a_header_reads_back_and_a_bad_one_is_refused() {
        let mut b = header(10, 3, 5).to_vec();
        b.extend_from_slice(b"abc");
        let (t, n, r, d) = read_header(&Bytes::from(b), 1).unwrap();
        assert_eq!((t, n, r, &d[..]), (10, 3, 5, &b"abc"[..]));
        let zero_pieces = header(10, 0, 5);
        let short = Bytes::from_static(&[ESBT, 1, 2]);
        let other_mode = Bytes::from(vec![0u8; HEADER]);
        for b in [zero_pieces, short, other_mode] {
            let e = read_header(&b, 4).unwrap_err();
            assert!(matches!(e, Error::Protocol { peer: 4, .. }), "{e}");
        }
    }

    /// A first piece whose header announces more than its piece can carry — here 2^60
    /// bytes in one piece per part, with 5 bytes — is a protocol error of its sender at
    /// the receiver, refused before anything is allocated for it.
    #[test]
    fn a_header_announcing_more_than_its_piece_carries_is_refused() {
        let out = run_local(2, |node| -> Result<()> {
            match node.mynode() {
                0 => {
                    // The tag node 1's GRECVW takes: its first call on the 2-cube.
                    let tag = node.collective_tag(2);
                    let mut forged = header(1 << 60, 1, 0).to_vec();
                    forged.extend_from_slice(b"hello");
                    node.send_internal(1, tag, Bytes::from(forged))?;
                }
                1 => {
                    let e = node.grecv(2).unwrap_err();
                    assert!(matches!(e, Error::Protocol { peer: 0, .. }), "{e}");
                    assert!(e.to_string().contains("first piece of 5 bytes"), "{e}");
                }
                _ => {}
            }
            Ok(())
        });
        for r in out {
            r.unwrap();
        }
    }

    /// The spanning trees where the job's automatic broadcast would be the all-port one —
    /// on wires, a long message — and the seed's tree elsewhere: a short message, a
    /// 1-cube, loopback.
    #[test]
    fn the_spanning_trees_only_where_the_broadcast_would_be_all_port() {
        use crate::collectives::select::{machine, Machine};
        let lo = Machine {
            link_tw: None,
            ..machine()
        };
        let wire = Machine {
            link_tw: Some(84e-9),
            ..lo
        };
        let esbt = |m: &Machine, len: usize, dim: u32| {
            matches!(How::Auto.resolve_on(m, len, dim), How::Esbt { .. })
        };
        assert!(esbt(&wire, 1 << 20, 3));
        assert!(!esbt(&wire, 8, 3));
        assert!(!esbt(&wire, 1 << 20, 1));
        assert!(!esbt(&lo, 1 << 20, 3));
    }

    /// GSENDW down the spanning trees, from every root of every subcube dimension, in one
    /// piece per part and in many: every member receives the message whole — also empty,
    /// one byte (parts of 0 bytes) and lengths that leave the parts uneven.
    #[test]
    fn a_broadcast_down_the_spanning_trees_arrives_whole_everywhere() {
        let hows = [1usize, 3, 8].map(|pieces| How::Esbt { pieces });
        crate::ipsc::broadcast::check_every_root(&[0, 1, 10, 4099], &hows);
    }

    /// On a subcube: the 2-subcubes of a 3-cube broadcast at once, each from its own root,
    /// alternately down the seed's tree and the spanning trees.
    #[test]
    fn subcubes_broadcast_down_the_spanning_trees_side_by_side() {
        let out = run_local(3, move |node| -> Result<()> {
            let me = node.mynode();
            for (k, how) in [How::Esbt { pieces: 4 }, How::Seed { piece: Some(7) }]
                .into_iter()
                .enumerate()
            {
                let root = (me & 4) | (k as u32 + 1);
                let want: Bytes = (0..1000).map(|i| (i + root as usize) as u8).collect();
                if me == root {
                    node.gsend_in(want, 2, how)?;
                } else {
                    assert_eq!(node.grecv(2)?, want, "node {me} root {root}");
                }
            }
            Ok(())
        });
        for r in out {
            r.unwrap();
        }
    }
}
