//! All-to-one reduction on the hypercube — Grama Alg. 4.3 (the broadcast's steps in
//! reverse), any root by the relabelling of Alg. 4.2; model time eq. 4.1:
//! `T = (t_s + t_w m) log p`. The lower rank's partial result is the left operand, so a
//! non-commutative ⊕ is combined in rank order whatever the root.

use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// Every node's `data` → the reduction at relative rank `root`.
pub(crate) fn reduce<T: Pod>(
    c: &Ctx<'_>,
    root: u32,
    data: Vec<T>,
    op: Op<'_, T>,
) -> Result<Option<Vec<T>>> {
    let v = c.me ^ root;
    let mut acc = data;
    for i in 0..c.k {
        let bit = 1u32 << i;
        if v & (bit - 1) != 0 {
            break;
        }
        let partner = (v ^ bit) ^ root;
        if v & bit != 0 {
            c.send(partner, encode(&acc))?;
            return Ok(None);
        }
        let got = c.recv(partner)?;
        check_len::<T>(&got, acc.len(), "reduce")?;
        op.combine_bytes(&mut acc, &got, partner > c.me);
    }
    Ok((c.me == root).then_some(acc))
}
