//! Long-message all-to-one reduction — Grama §4.7.2 (Problem 4.17): all-to-all reduction
//! of p blocks (Alg. 4.8) then gather of the reduced blocks at the root (§4.4):
//! `T = 2 (t_s log p + t_w (p-1) m/p)`.

use crate::collectives::blocks::{bounds, Layout};
use crate::collectives::ctx::Ctx;
use crate::collectives::element::{decode_blocks, encode, Op};
use crate::collectives::gather::hypercube::gather;
use crate::collectives::pod::Pod;
use crate::collectives::reduce_scatter::hypercube::reduce_scatter;
use crate::error::Result;

/// Every node's `data` → the reduction at relative rank `root`.
pub(crate) fn reduce<T: Pod>(
    c: &Ctx<'_>,
    root: u32,
    data: &[T],
    op: Op<'_, T>,
) -> Result<Option<Vec<T>>> {
    let n = data.len();
    let p = c.p();
    let block = reduce_scatter(c, data, op)?;
    let sizes: Vec<usize> = (0..p)
        .map(|j| bounds(n, p, j).len() * T::WIRE_SIZE)
        .collect();
    match gather(c, root, encode(&block), Layout::Given(&sizes))? {
        Some(all) => Ok(Some(decode_blocks(&all, n, "reduce")?)),
        None => Ok(None),
    }
}
