//! All-to-all reduction on the hypercube — Grama Alg. 4.8 (recursive halving: at each step
//! keep the half of the blocks on this node's side, send the other half, combine what
//! arrives). The dimensions are taken in the order 0, 1, …, d-1 (the book goes d-1 down to
//! 0; the cost is the same) so that each partial result covers a contiguous rank range and
//! a non-commutative ⊕ combines in rank order. Model time (the all-to-all broadcast
//! expression, eq. 4.4, with m/p per block): `T = t_s log p + t_w (m/p)(p-1)`.
//!
//! Copies: the first step sends the outgoing half straight from the caller's vector,
//! lent to the transport ([`lend`]: the call returns only when every copy of those bytes
//! is dropped — over TCP, when the kernel has them; a copy only where memory is not the
//! wire encoding, or for blocks shorter than `lend::LEND_MIN`), and writes
//! `mine ⊕ received` for each kept block into a vector of its own (no copy of the whole
//! input first). Later steps send the blocks they pass on as those vectors themselves,
//! without encoding them again
//! ([`encode_vec`]: the vector's memory is the message), and combine into the kept ones.

use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use bytes::Bytes;

use crate::base::parts::Parts;
use crate::collectives::element::{check_len, encode_vec, Op};
use crate::collectives::lend::{lend, Lender};
use crate::collectives::pod::as_bytes;
use crate::collectives::pod::Pod;
use crate::error::{Error, Result};

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
pub(crate) fn reduce_scatter<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    lend(&|| c.release_lent(), |lender| halving(c, data, op, lender))
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
        let out: Parts = if i == 0 && T::MEMORY_IS_WIRE {
            let lent: Vec<Bytes> = send_ids
                .iter()
                .map(|&j| lender.lend(as_bytes(&data[bounds(n, p, j)])))
                .collect();
            lent.into()
        } else if i == 0 {
            let send_len: usize = send_ids.iter().map(|&j| bounds(n, p, j).len()).sum();
            let mut out = Vec::with_capacity(send_len * T::WIRE_SIZE);
            for &j in &send_ids {
                T::extend_wire(&data[bounds(n, p, j)], &mut out);
            }
            Bytes::from(out).into()
        } else {
            let mut parts = Vec::with_capacity(send_ids.len());
            for &j in &send_ids {
                let block = acc[j as usize].take().ok_or_else(|| lost(j))?;
                parts.push(encode_vec(block).0);
            }
            parts.into()
        };
        let expected: usize = keep_ids.iter().map(|&j| bounds(n, p, j).len()).sum();
        // The first step's message may be lent memory: taken whatever else arrives
        // (every member sends it before it can fail; `Ctx::sendrecv_first`).
        let got = if i == 0 {
            c.sendrecv_first(partner, out, partner)?
        } else {
            c.sendrecv(partner, out, partner)?
        };
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

/// A block the recursive halving should hold but does not (a bug, reported, not a panic).
pub(crate) fn lost(j: u32) -> Error {
    Error::InvalidArgument(format!(
        "reduce_scatter: block {j} is missing from the accumulator (an internal error)"
    ))
}
