//! All-reduce on the hypercube — Grama §4.3: the all-to-all broadcast pattern (Alg. 4.7)
//! with ⊕ in place of concatenation, so messages do not grow; model time eq. 4.5:
//! `T = (t_s + t_w m) log p`. The lower rank's partial result is always the left operand.

use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// Element-wise reduction of every node's `data`, on every node.
pub(crate) fn allreduce<T: Pod>(c: &Ctx<'_>, data: Vec<T>, op: Op<'_, T>) -> Result<Vec<T>> {
    let mut acc = data;
    for i in 0..c.k {
        let partner = c.me ^ (1 << i);
        let got = c.sendrecv(partner, encode(&acc), partner)?;
        check_len::<T>(&got, acc.len(), "allreduce")?;
        op.combine_bytes(&mut acc, &got, partner > c.me);
    }
    Ok(acc)
}
