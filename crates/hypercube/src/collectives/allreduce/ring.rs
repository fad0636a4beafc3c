//! All-reduce on the Gray-code ring: ring all-to-all reduction (Alg. 4.5) then ring
//! all-to-all broadcast (Alg. 4.4) of the reduced blocks — the ring form of §4.7.3's
//! composition; ⊕ must be commutative. Model time (eq. 4.2 twice, m/p per block):
//! `T = 2 (p-1)(t_s + t_w m/p)`.

use crate::collectives::allgather::ring::allgather;
use crate::collectives::ctx::Ctx;
use crate::collectives::element::{decode_blocks, encode, Op};
use crate::collectives::pod::Pod;
use crate::collectives::reduce_scatter::ring::reduce_scatter;
use crate::error::Result;

/// Element-wise reduction of every node's `data`, on every node.
pub(crate) fn allreduce<T: Pod>(c: &Ctx<'_>, data: Vec<T>, op: Op<'_, T>) -> Result<Vec<T>> {
    let n = data.len();
    let block = reduce_scatter(c, data, op)?;
    let all = allgather(c, encode(&block))?;
    decode_blocks(&all, n, "allreduce")
}
