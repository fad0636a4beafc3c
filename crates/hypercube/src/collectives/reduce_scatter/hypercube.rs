//! All-to-all reduction on the hypercube — Grama Alg. 4.8 (recursive halving: at each step
//! keep the half of the blocks on this node's side, send the other half, combine what
//! arrives). The dimensions are taken in the order 0, 1, …, d-1 (the book goes d-1 down to
//! 0; the cost is the same) so that each partial result covers a contiguous rank range and
//! a non-commutative ⊕ combines in rank order. Model time (the all-to-all broadcast
//! expression, eq. 4.4, with m/p per block): `T = t_s log p + t_w (m/p)(p-1)`.
//!
//! Copies: the first step sends the outgoing half straight from the caller's vector,
//! lent to the transport ([`Ctx::lend`]: the call returns only when every copy of those bytes
//! is dropped — over TCP, when the kernel has them; a copy only where memory is not the
//! wire encoding, or for blocks shorter than `lend::LEND_MIN`), and writes
//! `mine ⊕ received` for each kept block into a vector of its own (no copy of the whole
//! input first). Later steps send the blocks they pass on as those vectors themselves,
//! without encoding them again
//! ([`encode_vec`]: the vector's memory is the message), and combine into the kept ones.
//!
//! Pieces: a step whose message is longer than [`PIECE`] bytes goes as messages of at most
//! that many, all posted at once, and each piece is combined as it arrives — while its bytes
//! are still in the cache the kernel just wrote them through, and while the next pieces are
//! on their way. In one message of up to half the vector, the combine read megabytes the
//! cache no longer held: at p = 8 and a 1 MiB result (an 8 MiB vector) it took 24 % of the
//! job's CPU, three times Open MPI's reduction (`docs/perf/analysis.md`).

use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use bytes::Bytes;

use crate::base::parts::Parts;
use crate::collectives::element::{check_len, encode_vec, length_error, Op};
use crate::collectives::lend::Lender;
use crate::collectives::pod::Pod;
use crate::collectives::values::read_u64;
use crate::error::{Error, Result};

/// A step's message longer than this many bytes goes in pieces of at most this many (see
/// the module documentation). Measured at p = 8, 1 MiB result on loopback: pieces of 512 KiB
/// and 1 MiB 16.0–17.1 ms a call against 17.5–19.6 in whole messages; 256 KiB 18.2–19.3.
const PIECE: usize = 512 << 10;

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
pub(crate) fn reduce_scatter<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    c.lend(|lender| halving(c, data, op, lender))
}

/// Alg. 4.8 with the first step's outgoing blocks lent from `data`.
fn halving<'a, T: Pod>(
    c: &Ctx<'_>,
    data: &'a [T],
    op: Op<'_, T>,
    lender: &Lender<'a>,
) -> Result<Vec<T>> {
    let n = data.len();
    let p = c.p();
    if c.k == 0 {
        return Ok(data.to_vec());
    }
    // The partial sums of the blocks this node still holds, each in a vector of its own
    // (filled at the first step), so a block passed on is sent as it is.
    let mut acc: Vec<Option<Vec<T>>> = (0..p).map(|_| None).collect();
    for i in 0..c.k {
        let bit = 1u32 << i;
        let low = bit - 1;
        let partner = c.me ^ bit;
        let mine = |j: &u32| j & low == c.me & low;
        let send_ids: Vec<u32> = (0..p)
            .filter(|j| mine(j) && j & bit != c.me & bit)
            .collect();
        let keep_ids: Vec<u32> = (0..p)
            .filter(|j| mine(j) && j & bit == c.me & bit)
            .collect();
        let (sends_n, expected) = (elements(n, p, &send_ids), elements(n, p, &keep_ids));
        if T::MEMORY_IS_WIRE && expected.max(sends_n) * T::WIRE_SIZE > PIECE {
            let step = Step {
                i,
                partner,
                send_ids: &send_ids,
                keep_ids: &keep_ids,
                sends_n,
                expected,
            };
            in_pieces(c, data, op, lender, &mut acc, step)?;
            continue;
        }
        let out: Parts = if i == 0 {
            let lent: Vec<Bytes> = send_ids
                .iter()
                .map(|&j| lender.lend_elems(&data[bounds(n, p, j)]))
                .collect();
            lent.into()
        } else {
            let mut parts = Vec::with_capacity(send_ids.len());
            for &j in &send_ids {
                let block = acc[j as usize].take().ok_or_else(|| lost(j))?;
                parts.push(encode_vec(block).0);
            }
            parts.into()
        };
        // A failure notice in place of the partner's message (the first step's too: a
        // member whose length made it choose another algorithm may never send it) ends
        // the call here; a lent message of ours that the partner does not take is dropped
        // when it leaves the call (`collectives/ctx.rs`).
        let got = c.sendrecv(partner, out, partner)?;
        check_len::<T>(&got, expected, "reduce_scatter")?;
        let mut off = 0;
        for j in keep_ids {
            let r = bounds(n, p, j);
            let len = r.len();
            let bytes = &got[off * T::WIRE_SIZE..(off + len) * T::WIRE_SIZE];
            if i == 0 {
                let mut block = Vec::with_capacity(len);
                op.combine_into(&mut block, &data[r], bytes, partner > c.me);
                acc[j as usize] = Some(block);
            } else {
                let block = acc[j as usize].as_mut().ok_or_else(|| lost(j))?;
                op.combine_bytes(block, bytes, partner > c.me);
            }
            off += len;
        }
    }
    acc[c.me as usize].take().ok_or_else(|| lost(c.me))
}

/// The elements of blocks `ids` of a vector of `n` split `p` ways.
fn elements(n: usize, p: u32, ids: &[u32]) -> usize {
    ids.iter().map(|&j| bounds(n, p, j).len()).sum()
}

/// One step of the halving: its number, its partner, the blocks it sends and keeps, and
/// their elements.
struct Step<'s> {
    i: u32,
    partner: u32,
    send_ids: &'s [u32],
    keep_ids: &'s [u32],
    sends_n: usize,
    expected: usize,
}

/// The pieces of blocks `ids` (of a vector of `n` split `p` ways), in order: (block,
/// element offset in it, elements), each at most `per` elements; one empty piece for an
/// empty block.
fn pieces(n: usize, p: u32, ids: &[u32], per: usize) -> Vec<(u32, usize, usize)> {
    let mut v = Vec::new();
    for &j in ids {
        let len = bounds(n, p, j).len();
        v.push((j, 0, per.min(len)));
        v.extend(
            (per..len)
                .step_by(per)
                .map(|off| (j, off, per.min(len - off))),
        );
    }
    v
}

/// A step of [`halving`] in pieces of at most [`PIECE`] bytes (for `T::MEMORY_IS_WIRE`):
/// every receive posted, then every send, then each piece combined as it arrives. Both
/// ends cut the same blocks the same way, and the pieces of one pair arrive in order.
///
/// First the two ends exchange a head: how many elements each sends and expects. Members
/// that passed vectors of other lengths (a caller's error) then fail here, before any
/// piece goes: with pieces cut from lengths that differ, a lent piece could be left
/// without its receive, and its sender would wait for it forever. A partner that sent its
/// step whole (its lengths were short of a piece) finds this head in place of its message
/// and fails as well, and its message, taken here as the head, is let go of.
fn in_pieces<'a, T: Pod>(
    c: &Ctx<'_>,
    data: &'a [T],
    op: Op<'_, T>,
    lender: &Lender<'a>,
    acc: &mut [Option<Vec<T>>],
    step: Step<'_>,
) -> Result<()> {
    let (n, p, partner) = (data.len(), c.p(), step.partner);
    let (sends_n, expected) = (step.sends_n, step.expected);
    let irecv = || c.irecv(partner);
    let r = irecv()?;
    let s = c.isend(partner, Bytes::from(head(sends_n, expected)))?;
    let got = r.wait()?.into_data();
    s.wait()?;
    // (bytes the partner sends, elements expected of it) where the two ends disagree.
    let disagree = match read_head(&got) {
        Some((theirs, _)) if theirs != expected => Some((theirs * T::WIRE_SIZE, expected)),
        Some((_, wants)) if wants != sends_n => Some((sends_n * T::WIRE_SIZE, wants)),
        Some(_) => None,
        None => Some((got.len(), expected)),
    };
    if let Some((got, want)) = disagree {
        return Err(length_error::<T>("reduce_scatter", got, Some(want)));
    }
    let per = (PIECE / T::WIRE_SIZE).max(1);
    let incoming = pieces(n, p, step.keep_ids, per);
    let recvs = incoming
        .iter()
        .map(|_| irecv())
        .collect::<Result<Vec<_>>>()?;
    let mut sends = Vec::new();
    for &j in step.send_ids {
        let r = bounds(n, p, j);
        let whole = if step.i == 0 {
            None
        } else {
            let block = acc[j as usize].take().ok_or_else(|| lost(j))?;
            Some(encode_vec(block).0)
        };
        for (_, off, len) in pieces(n, p, &[j], per) {
            let piece = match &whole {
                None => lender.lend_elems(&data[r.start + off..r.start + off + len]),
                Some(b) => b.slice(off * T::WIRE_SIZE..(off + len) * T::WIRE_SIZE),
            };
            sends.push(c.isend(partner, piece)?);
        }
    }
    let higher = partner > c.me;
    for (r, (j, off, len)) in recvs.into_iter().zip(incoming) {
        let got = r.wait()?.into_data();
        check_len::<T>(&got, len, "reduce_scatter")?;
        if step.i == 0 {
            let range = bounds(n, p, j);
            let block = acc[j as usize].get_or_insert_with(|| Vec::with_capacity(range.len()));
            let mine = &data[range.start + off..range.start + off + len];
            op.combine_into(block, mine, &got, higher);
        } else {
            let block = acc[j as usize].as_mut().ok_or_else(|| lost(j))?;
            op.combine_bytes(&mut block[off..off + len], &got, higher);
        }
    }
    for s in sends {
        s.wait()?;
    }
    Ok(())
}

/// Marks a step's head (`in_pieces`), so that a partner's data is not read as one.
const HEAD_MAGIC: u64 = 0x6863_7273_7069_6563; // "hcrspiec"

/// The head of a step in pieces: the magic, the elements this end sends, those it expects.
fn head(sends: usize, expects: usize) -> Vec<u8> {
    [HEAD_MAGIC, sends as u64, expects as u64]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

/// (sends, expects) of a partner's head, or `None` if `b` is not one.
fn read_head(b: &[u8]) -> Option<(usize, usize)> {
    if b.len() != 24 || read_u64(b) != HEAD_MAGIC {
        return None;
    }
    let word = |k: usize| usize::try_from(read_u64(&b[8 * k..])).ok();
    Some((word(1)?, word(2)?))
}

/// A block the recursive halving should hold but does not (a bug, reported, not a panic).
pub(crate) fn lost(j: u32) -> Error {
    Error::InvalidArgument(format!(
        "reduce_scatter: block {j} is missing from the accumulator (an internal error)"
    ))
}

#[cfg(test)]
mod tests {
    use hypercube_topology::NodeId;

    use super::{head, pieces, read_head, PIECE};
    use crate::collectives::{Algorithm, Op};
    use crate::local::run_local;
    use crate::node::Node;
    use crate::transport::tcp::test_job::tcp_job;
    use crate::transport::tcp::TcpTransport;

    /// Blocks cut into pieces of at most `per` elements, in order; an empty block is one
    /// empty piece.
    #[test]
    fn pieces_cover_each_block_in_order() {
        // 10 elements over 2 blocks (5 + 5), 3 per piece.
        assert_eq!(
            pieces(10, 2, &[0, 1], 3),
            [(0, 0, 3), (0, 3, 2), (1, 0, 3), (1, 3, 2)]
        );
        assert_eq!(pieces(1, 2, &[0], 3), [(0, 0, 0)]);
    }

    /// A step's head reads back; anything else (a partner's data of any length, a head
    /// without its magic) is not one.
    #[test]
    fn a_head_reads_back_and_data_is_not_one() {
        assert_eq!(read_head(&head(7, 9)), Some((7, 9)));
        assert_eq!(read_head(&[0u8; 24]), None);
        assert_eq!(read_head(&head(7, 9)[..16]), None);
        let mut long = head(7, 9);
        long.push(0);
        assert_eq!(read_head(&long), None);
    }

    /// `x ↦ a x + b` as `a << 32 | b`, composed left then right (mod 2^32): associative,
    /// not commutative.
    fn affine(l: u64, r: u64) -> u64 {
        let (a1, b1) = (l >> 32, l & 0xFFFF_FFFF);
        let (a2, b2) = (r >> 32, r & 0xFFFF_FFFF);
        ((a1.wrapping_mul(a2) & 0xFFFF_FFFF) << 32)
            | (a2.wrapping_mul(b1).wrapping_add(b2) & 0xFFFF_FFFF)
    }

    /// Elements per block in the tests below: 1.3 pieces and a few (so the first step on
    /// 4 nodes sends 2.6 pieces' worth, in 4 messages).
    const PER_BLOCK: usize = PIECE / 8 * 13 / 10 + 3;

    /// Element `i` of node `rank`'s vector.
    fn value(rank: usize, i: usize) -> u64 {
        ((rank as u64 + 2) << 32) | (i as u64 * 7 + rank as u64)
    }

    /// One node's part: the sum and a non-commutative composition of vectors whose steps go
    /// in pieces (`in_pieces`), checked against the reference in rank order.
    fn reduce_in_pieces(node: &Node) -> Result<(), String> {
        let (me, p) = (node.mynode() as usize, node.numnodes() as usize);
        let v: Vec<u64> = (0..PER_BLOCK * p).map(|i| value(me, i)).collect();
        let cube = node.cube().with(Algorithm::Hypercube);
        let sum = cube
            .reduce_scatter(&v, Op::Sum)
            .map_err(|e| e.to_string())?;
        let comp = cube
            .reduce_scatter(&v, Op::Fn(&affine))
            .map_err(|e| e.to_string())?;
        let range = me * PER_BLOCK..(me + 1) * PER_BLOCK;
        let want_sum: Vec<u64> = range
            .clone()
            .map(|i| (0..p).map(|r| value(r, i)).fold(0u64, u64::wrapping_add))
            .collect();
        let want_comp: Vec<u64> = range
            .map(|i| (1..p).fold(value(0, i), |acc, r| affine(acc, value(r, i))))
            .collect();
        if sum != want_sum {
            return Err(format!("node {me}: the sum differs"));
        }
        if comp != want_comp {
            return Err(format!("node {me}: the composition differs (order?)"));
        }
        Ok(())
    }

    /// Steps in pieces reduce as one message would, on threads.
    #[test]
    fn a_step_in_pieces_reduces_as_one_message_would() {
        for r in run_local(2, |node| reduce_in_pieces(&node)) {
            r.unwrap();
        }
    }

    /// The same over TCP (real sockets between threads).
    #[test]
    fn steps_in_pieces_reduce_right_over_tcp() {
        fn program(
            _: NodeId,
            node: &Node,
            _: &TcpTransport,
        ) -> Result<(), Box<dyn std::error::Error>> {
            Ok(reduce_in_pieces(node)?)
        }
        tcp_job(2, program);
    }
}
