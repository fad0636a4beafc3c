//! Long GSENDW, GOP and SPGSNW messages (and GCAT contributions: `gcat.rs`) in pieces where
//! the links are slow.
//!
//! The seed's broadcast (§2) and GOP (§3) move the whole message one tree level at a time:
//! a node passes it on only once it has all of it, so a message of m bytes takes
//! `dim · t_w m` on links of `t_w` seconds a byte. Cut into n pieces, each passed on as
//! soon as it is in (and, for GOP, combined as soon as every child's piece is in), it takes
//! about `(n + dim − 1) · t_w m / n` — the same trees, the same combining order, the same
//! result on every node. This pays where the links, not the cores, limit a transfer
//! (`Machine::links_bound`: the start-up probe found the links slow); on loopback or a
//! fast network every message stays in one piece, as in the seed. The number of pieces is
//! the pipelined broadcast's (`select::machine::pieces`).
//!
//! A sender's first piece starts with a [`PREFIX`]: the length of its whole message and of
//! its pieces (its last one may be shorter). So a receiver learns both from the message
//! itself — GRECVW does not know the length in advance — and a GOP whose members pass
//! vectors of different lengths still receives every piece each child sends: the seed's
//! LONG / SHORT MESSAGE errors, never a hang.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::base::parts::Parts;
use crate::collectives::select::{machine, pieces_for, Machine};
use crate::error::{Error, Result};
use crate::node::Node;

/// Bytes before the first piece's data: the whole message's length and the pieces'
/// length, little-endian `u64` each.
pub(super) const PREFIX: usize = 16;

/// The most a receiver sets aside before the pieces come; beyond, the buffer grows with
/// them (a corrupt length then costs an error, not an allocation of that length).
const PREALLOCATE_AT_MOST: usize = 64 << 20;

/// The length of the pieces a message of `total` bytes is sent in on a subcube of
/// dimension `dim` of this job's machine ([`piece_len_on`]); `asked`: that length instead,
/// as the tests cut messages on loopback.
pub(super) fn piece_len(total: usize, dim: u32, unit: usize, asked: Option<usize>) -> usize {
    piece_len_on(&machine(), total, dim, unit, asked)
}

/// [`piece_len`] on `m`: `total` itself (one piece) unless the links are slow, else about
/// `total / n` for the pipelined broadcast's n — or `asked` — a multiple of `unit` (an
/// element's size), never 0.
fn piece_len_on(m: &Machine, total: usize, dim: u32, unit: usize, asked: Option<usize>) -> usize {
    let unit = unit.max(1);
    if let Some(p) = asked {
        return p.max(1).div_ceil(unit).saturating_mul(unit);
    }
    let n = if dim > 0 && m.links_bound(dim) {
        // The seed's trees carry the whole message over every link: its pieces are cut
        // as the pipelined trees' parts would be, whatever the links' burst (not
        // measured there).
        pieces_for(total, dim, m.model, 0)
    } else {
        1
    };
    let elems = total.div_ceil(unit).div_ceil(n.max(1));
    (elems * unit).max(unit)
}

/// Piece `k` of a message of `total` bytes in pieces of `piece`, its bytes `data`, as
/// sent: the first after its [`prefix`].
pub(super) fn frame(k: usize, (total, piece): (usize, usize), data: Bytes) -> Parts {
    if k == 0 {
        Parts::Many(vec![prefix(total, piece), data])
    } else {
        Parts::One(data)
    }
}

/// The prefix of a first piece.
pub(super) fn prefix(total: usize, piece: usize) -> Bytes {
    let mut b = BytesMut::with_capacity(PREFIX);
    b.put_u64_le(total as u64);
    b.put_u64_le(piece as u64);
    b.freeze()
}

/// A first piece's prefix and data: `(total, piece, data)`. A message too short for the
/// prefix, one announcing pieces of 0 bytes for a message that has some, or a first piece
/// of another length than announced is a protocol error of the sender.
pub(super) fn split_prefix(
    b: &Bytes,
    routine: &str,
    from: NodeId,
) -> Result<(usize, usize, Bytes)> {
    let bad = |detail: String| Error::Protocol { peer: from, detail };
    if b.len() < PREFIX {
        return Err(bad(format!(
            "a {routine} message of {} bytes, shorter than its {PREFIX}-byte prefix",
            b.len()
        )));
    }
    let mut words = &b[..PREFIX];
    let (total, piece) = (words.get_u64_le(), words.get_u64_le());
    let (Ok(total), Ok(piece)) = (usize::try_from(total), usize::try_from(piece)) else {
        return Err(bad(format!(
            "a {routine} message announcing {total} bytes in pieces of {piece}"
        )));
    };
    let data = b.slice(PREFIX..);
    if (piece == 0 && total > 0) || data.len() != total.min(piece) {
        return Err(bad(format!(
            "a {routine} message announcing {total} bytes in pieces of {piece} came with a \
             first piece of {} bytes",
            data.len()
        )));
    }
    Ok((total, piece, data))
}

/// After the first piece `data` of a message of `total` bytes in pieces of `piece`,
/// received from `from` on `tag` (and passed on by the caller): receive the others in turn,
/// the next one's receive posted before the last is handled, hand each to `pass_on` as it
/// comes, and return the whole message — `data` itself, not copied, when it is all.
pub(super) fn receive_rest(
    node: &Node,
    (from, tag): (NodeId, u32),
    routine: &str,
    (total, piece): (usize, usize),
    data: Bytes,
    mut pass_on: impl FnMut(Bytes) -> Result<()>,
) -> Result<Bytes> {
    let n = total.div_ceil(piece.max(1)).max(1);
    if n <= 1 {
        return Ok(data);
    }
    // Memory for what has come, grown as the pieces come: `total` is the sender's word.
    let mut out = BytesMut::with_capacity(total.min(PREALLOCATE_AT_MOST));
    out.extend_from_slice(&data);
    let mut next = Some(node.irecv_internal(Some(from), tag)?);
    for (k, (start, end)) in ranges(total, piece).enumerate().skip(1) {
        let Some(r) = next.take() else { break };
        let got = r.wait()?.into_data();
        if k + 1 < n {
            next = Some(node.irecv_internal(Some(from), tag)?);
        }
        if got.len() != end - start {
            return Err(Error::Protocol {
                peer: from,
                detail: format!(
                    "a {routine} piece of {} bytes where bytes {start}..{end} of {total} were due",
                    got.len()
                ),
            });
        }
        out.extend_from_slice(&got);
        pass_on(got)?;
    }
    Ok(out.freeze())
}

/// The `(start, end)` byte ranges of a message of `total` bytes in pieces of `piece`: one
/// (empty) piece for an empty message.
pub(super) fn ranges(total: usize, piece: usize) -> impl Iterator<Item = (usize, usize)> {
    let piece = piece.max(1);
    let n = total.div_ceil(piece).max(1);
    (0..n).map(move |i| (i * piece, (i + 1).saturating_mul(piece).min(total)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipsc::broadcast::How;
    use crate::local::run_local;

    #[test]
    fn ranges_cover_the_message_once() {
        assert_eq!(ranges(0, 4).collect::<Vec<_>>(), [(0, 0)]);
        assert_eq!(ranges(10, 4).collect::<Vec<_>>(), [(0, 4), (4, 8), (8, 10)]);
        assert_eq!(ranges(8, 4).collect::<Vec<_>>(), [(0, 4), (4, 8)]);
        assert_eq!(ranges(3, 100).collect::<Vec<_>>(), [(0, 3)]);
    }

    #[test]
    fn a_prefix_reads_back_and_a_bad_one_is_refused() {
        let mut b = prefix(10, 4).to_vec();
        b.extend_from_slice(b"abcd");
        let (total, piece, data) = split_prefix(&Bytes::from(b), "GOP", 3).unwrap();
        assert_eq!((total, piece, &data[..]), (10, 4, &b"abcd"[..]));
        // Empty message, one empty piece.
        let (t, _, d) = split_prefix(&prefix(0, 8), "GOP", 3).unwrap();
        assert_eq!((t, d.len()), (0, 0));
        // Too short, pieces of 0, a first piece longer than announced.
        assert!(split_prefix(&Bytes::from_static(b"short"), "GRECVW", 1).is_err());
        assert!(split_prefix(&prefix(10, 0), "GOP", 1).is_err());
        let mut long = prefix(10, 4).to_vec();
        long.extend_from_slice(b"abcdef");
        let e = split_prefix(&Bytes::from(long), "GRECVW", 5).unwrap_err();
        assert!(matches!(e, Error::Protocol { peer: 5, .. }), "{e}");
        let mut short = prefix(10, 4).to_vec();
        short.extend_from_slice(b"abc");
        assert!(split_prefix(&Bytes::from(short), "GRECVW", 5).is_err());
    }

    /// GSENDW in pieces of every size, from every root of every subcube dimension: every
    /// member receives the message; empty and one-byte messages too.
    #[test]
    fn a_broadcast_in_pieces_arrives_whole_everywhere() {
        let hows = [1usize, 7, 512, 1 << 20].map(|p| How::Seed { piece: Some(p) });
        crate::ipsc::broadcast::check_every_root(&[0, 1, 10, 1000, 4099], &hows);
    }

    /// A GSENDW first piece announcing 2^60 bytes in pieces of 5 neither makes its receiver
    /// set 2^60 bytes aside nor count 2^58 pieces: the receiver waits for the second piece,
    /// which never comes, and the in-process transport reports that wait as a deadlock — an
    /// error, not an abort.
    #[test]
    fn a_first_piece_announcing_far_more_than_comes_costs_an_error_not_its_memory() {
        let out = run_local(1, |node| -> Result<()> {
            if node.mynode() == 0 {
                // The tag node 1's GRECVW takes: its first call on the 1-cube.
                let tag = node.collective_tag(1);
                let mut forged = vec![crate::ipsc::broadcast::SEED];
                forged.extend_from_slice(&prefix(1 << 60, 5));
                forged.extend_from_slice(b"hello");
                node.send_internal(1, tag, Bytes::from(forged))?;
                Ok(())
            } else {
                match node.grecv(1) {
                    Err(_) => Ok(()),
                    Ok(b) => panic!("a message of {} bytes from a forged prefix", b.len()),
                }
            }
        });
        for r in out {
            r.unwrap();
        }
    }

    /// SPGSNW in pieces: every target receives the message whole, the list forwarded with
    /// the first piece; the other nodes take no part.
    #[test]
    fn a_sparse_send_in_pieces_reaches_every_target() {
        let out = run_local(3, move |node| -> Result<()> {
            let ty = crate::MsgType(12);
            for (len, piece) in [(0usize, 4usize), (1, 1), (1000, 7), (5000, 1 << 20)] {
                let want: Bytes = (0..len).map(|i| (i * 13 + 1) as u8).collect();
                let targets = [3u32, 5, 6, 7, 1];
                if node.mynode() == 0 {
                    node.spgsend_in(ty, want.clone(), &targets, Some(piece))?;
                } else if targets.contains(&node.mynode()) {
                    assert_eq!(node.spgrecv(ty)?, want, "len {len} piece {piece}");
                }
                node.cube().barrier()?;
            }
            Ok(())
        });
        for r in out {
            r.unwrap();
        }
    }

    /// GOP in pieces gives every node exactly what the one-message GOP gives (the same
    /// partial results at the non-roots, bit for bit: the combining order is the seed's),
    /// whatever the pieces; and members with vectors of other lengths get LONG / SHORT
    /// MESSAGE, never a hang.
    #[test]
    fn gop_in_pieces_equals_gop_in_one_message() {
        let d = 3u32;
        let out = run_local(d, move |node| -> Result<()> {
            let me = node.mynode();
            for root in [0u32, 5] {
                for n in [0usize, 1, 13, 300] {
                    let x0: Vec<f32> = (0..n)
                        .map(|i| 1.0 / (1 + i + me as usize * 7) as f32)
                        .collect();
                    let mut whole = x0.clone();
                    node.gop_in(&mut whole, |a, b| a + b, root, d, Some(usize::MAX))?;
                    for piece in [4usize, 12, 100] {
                        let mut x = x0.clone();
                        node.gop_in(&mut x, |a, b| a + b, root, d, Some(piece))?;
                        assert_eq!(x, whole, "node {me} root {root} n {n} piece {piece}");
                    }
                }
            }
            // Root 0: node 6's parent is 2, node 7's is 3 (me XOR the high bit of me).
            // Node 6 passes a longer vector (2 is told LONG), node 7 a shorter one (3 is
            // told SHORT); everybody finishes.
            let n = if me == 6 {
                40
            } else if me == 7 {
                3
            } else {
                20
            };
            let mut x = vec![1u32; n];
            let r = node.gop_in(&mut x, |a, b| a + b, 0, d, Some(8));
            match me {
                2 => assert!(
                    matches!(
                        r,
                        Err(Error::GopLongMessage {
                            from: 6,
                            expected: 20,
                            received: 40
                        })
                    ),
                    "{r:?}"
                ),
                3 => assert!(
                    matches!(
                        r,
                        Err(Error::GopShortMessage {
                            from: 7,
                            expected: 20,
                            received: 3
                        })
                    ),
                    "{r:?}"
                ),
                _ => r?,
            }
            if me == 3 {
                // Its own 1, node 7's first 3 elements, nothing beyond them.
                assert_eq!(&x[..4], [2, 2, 2, 1]);
            }
            Ok(())
        });
        for r in out {
            r.unwrap();
        }
    }

    #[test]
    fn one_piece_where_the_links_are_not_slow() {
        // Loopback (no wires): every message stays whole.
        let lo = Machine {
            link_tw: None,
            ..machine()
        };
        assert_eq!(piece_len_on(&lo, 1 << 20, 3, 4, None), 1 << 20);
        assert_eq!(piece_len_on(&lo, 10, 3, 4, None), 12);
        assert_eq!(piece_len_on(&lo, 0, 3, 8, None), 8);
    }

    /// On wires (a probe's `t_w` ten times the model's or more: 100 Mbit/s) a long message
    /// goes in several pieces of whole elements, a short one, or one on a 0-cube, whole;
    /// a length asked for is rounded up to whole elements.
    #[test]
    fn several_pieces_on_slow_links() {
        let lo = Machine {
            link_tw: None,
            ..machine()
        };
        let wire = Machine {
            link_tw: Some(84e-9),
            ..lo
        };
        assert!(wire.links_bound(3));
        let p = piece_len_on(&wire, 1 << 20, 3, 4, None);
        assert!(p < 1 << 19 && p % 4 == 0, "{p}");
        assert_eq!(piece_len_on(&wire, 1 << 20, 0, 4, None), 1 << 20);
        assert_eq!(piece_len_on(&wire, 100, 3, 4, None), 100);
        assert_eq!(piece_len_on(&lo, 1 << 20, 3, 8, Some(10)), 16);
        assert_eq!(piece_len_on(&lo, 1 << 20, 3, 1, Some(0)), 1);
    }
}
