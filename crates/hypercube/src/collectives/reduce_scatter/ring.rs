//! All-to-all reduction on the Gray-code ring — Grama Alg. 4.5 (p-1 steps; at step i send
//! the partial result for the block i places ahead to the left, receive one from the right).
//! The terms are combined in ring order, so ⊕ must be commutative. Model time (eq. 4.2 with
//! m/p per block): `T = (t_s + t_w m/p)(p-1)`.

use hypercube_topology::{ginv, gray};

use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use bytes::Bytes;

use crate::collectives::element::{check_len, encode_vec, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
pub(crate) fn reduce_scatter<T: Pod>(c: &Ctx<'_>, data: Vec<T>, op: Op<'_, T>) -> Result<Vec<T>> {
    let n = data.len();
    let p = c.p();
    let pos = ginv(c.me);
    let left = gray((pos + p - 1) % p);
    let right = gray((pos + 1) % p);
    // The partial result received last step, kept as bytes and combined from them directly.
    let mut recv: Option<Bytes> = None;
    for i in 1..p {
        let j = gray((pos + i) % p);
        let temp = mine_with(&data[bounds(n, p, j)], recv.as_deref(), op);
        let from_block = gray((pos + 1 + i) % p);
        // The partial result goes as its own vector's memory (no copy into a message).
        let got = c.sendrecv(left, encode_vec(temp).0, right)?;
        check_len::<T>(&got, bounds(n, p, from_block).len(), "reduce_scatter")?;
        recv = Some(got);
    }
    Ok(mine_with(&data[bounds(n, p, c.me)], recv.as_deref(), op))
}

/// `mine ⊕ received` (the bytes of the partial result from the right), written once into a
/// new vector; `mine` as it is when nothing came yet.
fn mine_with<T: Pod>(mine: &[T], received: Option<&[u8]>, op: Op<'_, T>) -> Vec<T> {
    match received {
        None => mine.to_vec(),
        Some(r) => {
            let mut out = Vec::with_capacity(mine.len());
            op.combine_into(&mut out, mine, r, true);
            out
        }
    }
}
