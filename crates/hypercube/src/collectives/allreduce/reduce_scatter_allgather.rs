//! Long-message all-reduce — Grama §4.7.3, eq. 4.14: all-to-all reduction of p blocks
//! (Alg. 4.8) then all-to-all broadcast of the reduced blocks (Alg. 4.7):
//! `T = 2 (t_s log p + t_w (p-1) m/p) ≈ 2 (t_s log p + t_w m)`.

use crate::collectives::allgather::hypercube::allgather;
use crate::collectives::blocks::{bounds, Layout};
use crate::collectives::ctx::Ctx;
use crate::collectives::element::{decode_blocks, encode, Op};
use crate::collectives::pod::Pod;
use crate::collectives::reduce_scatter::hypercube::reduce_scatter;
use crate::error::Result;

/// Element-wise reduction of every node's `data`, on every node.
pub(crate) fn allreduce<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    two_phases(c, data, op, false)
}

/// The same on all-port hardware: both phases in their all-port forms
/// (`reduce_scatter/allport.rs`, `allgather/allport.rs`: d parts over rotated dimension
/// orders), all-port time `2 (t_s (log p)² + t_w (m/p)(p − 1)/log p)`; a commutative ⊕ only.
pub(crate) fn allreduce_all_port<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    two_phases(c, data, op, true)
}

fn two_phases<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>, all_port: bool) -> Result<Vec<T>> {
    let n = data.len();
    let p = c.p();
    let block = if all_port {
        crate::collectives::reduce_scatter::allport::reduce_scatter(c, data, op)?
    } else {
        reduce_scatter(c, data, op)?
    };
    let sizes: Vec<usize> = (0..p)
        .map(|j| bounds(n, p, j).len() * T::WIRE_SIZE)
        .collect();
    let all = if all_port {
        crate::collectives::allgather::allport::allgather(c, encode(&block), Layout::Given(&sizes))?
    } else {
        allgather(c, encode(&block), Layout::Given(&sizes))?
    };
    decode_blocks(&all, n, "allreduce")
}
