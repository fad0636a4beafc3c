//! All-to-all reduction on the hypercube — Grama Alg. 4.8 (recursive halving: at each step
//! keep the half of the blocks on this node's side, send the other half, combine what
//! arrives). The dimensions are taken in the order 0, 1, …, d-1 (the book goes d-1 down to
//! 0; the cost is the same) so that each partial result covers a contiguous rank range and
//! a non-commutative ⊕ combines in rank order. Model time (the all-to-all broadcast
//! expression, eq. 4.4, with m/p per block): `T = t_s log p + t_w (m/p)(p-1)`.

//!
//! Copies: the first step encodes the outgoing half straight from the caller's vector and
//! writes `mine ⊕ received` for the kept half into a new, compact accumulator (no copy of
//! the whole input first); later steps encode from and combine into that accumulator.

use crate::collectives::ctx::{bounds, Ctx};
use bytes::Bytes;

use crate::collectives::element::{check_len, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
pub(crate) fn reduce_scatter<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    let n = data.len();
    let p = c.p();
    if c.k == 0 {
        return Ok(data.to_vec());
    }
    // The accumulator holds the kept blocks of the first step, in rank order, from
    // offset `at[j]` for block j (only blocks this node still holds are looked up).
    let mut acc: Vec<T> = Vec::new();
    let mut at = vec![0usize; p as usize];
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
        let send_len: usize = send_ids.iter().map(|&j| bounds(n, p, j).len()).sum();
        let mut out = Vec::with_capacity(send_len * T::WIRE_SIZE);
        for &j in &send_ids {
            let r = bounds(n, p, j);
            if i == 0 {
                T::extend_wire(&data[r], &mut out);
            } else {
                T::extend_wire(&acc[at[j as usize]..at[j as usize] + r.len()], &mut out);
            }
        }
        let expected: usize = keep_ids.iter().map(|&j| bounds(n, p, j).len()).sum();
        let got = c.sendrecv(partner, Bytes::from(out), partner)?;
        check_len::<T>(&got, expected, "reduce_scatter")?;
        if i == 0 {
            acc.reserve_exact(expected);
        }
        let mut off = 0;
        for j in keep_ids {
            let len = bounds(n, p, j).len();
            let bytes = &got[off * T::WIRE_SIZE..(off + len) * T::WIRE_SIZE];
            if i == 0 {
                at[j as usize] = acc.len();
                op.combine_into(&mut acc, &data[bounds(n, p, j)], bytes, partner > c.me);
            } else {
                let a = at[j as usize];
                op.combine_bytes(&mut acc[a..a + len], bytes, partner > c.me);
            }
            off += len;
        }
    }
    // The one block left: move it to the front of the accumulator (no new buffer).
    let a = at[c.me as usize];
    acc.truncate(a + bounds(n, p, c.me).len());
    acc.drain(..a);
    Ok(acc)
}
