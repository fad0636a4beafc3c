//! Long-message all-reduce — Grama §4.7.3, eq. 4.14: all-to-all reduction of p blocks
//! (Alg. 4.8) then all-to-all broadcast of the reduced blocks (Alg. 4.7):
//! `T = 2 (t_s log p + t_w (p-1) m/p) ≈ 2 (t_s log p + t_w m)`.

use crate::collectives::allgather::hypercube::allgather;
use crate::collectives::ctx::{bounds, Ctx, Layout};
use crate::collectives::element::{decode_blocks, encode, Op};
use crate::collectives::pod::Pod;
use crate::collectives::reduce_scatter::hypercube::reduce_scatter;
use crate::error::Result;

/// Element-wise reduction of every node's `data`, on every node.
pub(crate) fn allreduce<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    let n = data.len();
    let p = c.p();
    let block = reduce_scatter(c, data, op)?;
    let sizes: Vec<usize> = (0..p)
        .map(|j| bounds(n, p, j).len() * T::WIRE_SIZE)
        .collect();
    let all = allgather(c, encode(&block), Layout::Given(&sizes))?;
    decode_blocks(&all, n, "allreduce")
}
