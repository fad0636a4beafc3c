//! All-to-all reduction on the hypercube — Grama Alg. 4.8 (recursive halving: at each step
//! keep the half of the blocks on this node's side, send the other half, combine what
//! arrives). The dimensions are taken in the order 0, 1, …, d-1 (the book goes d-1 down to
//! 0; the cost is the same) so that each partial result covers a contiguous rank range and
//! a non-commutative ⊕ combines in rank order. Model time (the all-to-all broadcast
//! expression, eq. 4.4, with m/p per block): `T = t_s log p + t_w (m/p)(p-1)`.

use crate::collectives::ctx::{bounds, Ctx};
use bytes::Bytes;

use crate::collectives::element::{check_len, encode_into, Element, Op};
use crate::error::Result;

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
pub(crate) fn reduce_scatter<T: Element>(
    c: &Ctx<'_>,
    data: Vec<T>,
    op: Op<'_, T>,
) -> Result<Vec<T>> {
    let n = data.len();
    let p = c.p();
    let mut acc = data;
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
        // Encode the outgoing blocks straight from `acc`, and combine the incoming ones
        // straight from the received bytes: no intermediate vectors.
        let send_len: usize = send_ids.iter().map(|&j| bounds(n, p, j).len()).sum();
        let mut out = Vec::with_capacity(send_len * T::SIZE);
        for &j in &send_ids {
            encode_into(&acc[bounds(n, p, j)], &mut out);
        }
        let expected = keep_ids.iter().map(|&j| bounds(n, p, j).len()).sum();
        let got = c.sendrecv(partner, Bytes::from(out), partner)?;
        check_len::<T>(&got, expected, "reduce_scatter")?;
        let mut off = 0;
        for j in keep_ids {
            let r = bounds(n, p, j);
            let len = r.len();
            let bytes = &got[off * T::SIZE..(off + len) * T::SIZE];
            op.combine_bytes(&mut acc[r], bytes, partner > c.me);
            off += len;
        }
    }
    Ok(acc[bounds(n, p, c.me)].to_vec())
}
