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
    if T::MEMORY_IS_WIRE && T::WIRE_SIZE == size_of::<T>() {
        return landed(c, &block, n, &sizes, all_port);
    }
    let all = if all_port {
        crate::collectives::allgather::allport::allgather(c, encode(&block), Layout::Given(&sizes))?
    } else {
        allgather(c, encode(&block), Layout::Given(&sizes))?
    };
    decode_blocks(&all, n, "allreduce")
}

/// The second phase where `T`'s memory is its wire encoding, of its size: every message of
/// the all-gather lands in the result where its blocks (or, all-port, its blocks' parts)
/// belong (`allgather_placed` in `allgather/hypercube.rs` and `allgather/allport.rs`),
/// this node's reduced block copied there first. Was: the all-gather's messages (and the
/// all-port one's join of each block's d parts), then their decoding into the result.
fn landed<T: Pod>(
    c: &Ctx<'_>,
    block: &[T],
    n: usize,
    sizes: &[usize],
    all_port: bool,
) -> Result<Vec<T>> {
    let me = c.me as usize;
    let mine = crate::collectives::pod::as_bytes(block);
    if mine.len() != sizes[me] {
        return Err(crate::error::Error::InvalidArgument(format!(
            "allreduce: this member's reduced block has {} bytes where {} were due",
            mine.len(),
            sizes[me]
        )));
    }
    let mut out: Vec<T> = Vec::with_capacity(n);
    let at: usize = sizes[..me].iter().sum();
    let base = out.as_mut_ptr().cast::<u8>();
    // SAFETY: `out`'s capacity is `n` elements, `n · WIRE_SIZE` bytes (`sizes`' sum; the
    // caller checked that the wire size is the memory size), used by nothing else until
    // it is set; this node's block goes to its place first, and on `Ok` every other byte has
    // been written by a landing. Every bit pattern is a `T` (`Pod`).
    unsafe {
        std::ptr::copy_nonoverlapping(mine.as_ptr(), base.add(at), mine.len());
        if all_port {
            crate::collectives::allgather::allport::allgather_placed(c, sizes, base)?;
        } else {
            crate::collectives::allgather::hypercube::allgather_placed(c, sizes, None, base)?;
        }
        out.set_len(n);
    }
    Ok(out)
}
