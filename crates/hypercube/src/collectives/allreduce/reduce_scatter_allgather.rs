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
    let block = first_phase(c, data, op, all_port)?;
    let sizes = block_bytes::<T>(n, c.p());
    if lands::<T>() {
        let mut out: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `out`'s capacity is `n` elements, `n · WIRE_SIZE` bytes (`sizes`' sum,
        // the wire size being the memory size: `lands`), used by nothing else until it is
        // set; on `Ok` every byte has been written. Every bit pattern is a `T` (`Pod`).
        unsafe {
            land(c, &block, &sizes, all_port, out.as_mut_ptr().cast())?;
            out.set_len(n);
        }
        return Ok(out);
    }
    let all = if all_port {
        crate::collectives::allgather::allport::allgather(c, encode(&block), Layout::Given(&sizes))?
    } else {
        allgather(c, encode(&block), Layout::Given(&sizes))?
    };
    decode_blocks(&all, n, "allreduce")
}

/// [`allreduce`] (or [`allreduce_all_port`]) into the caller's `out`, as long as `data`,
/// where the result can land there ([`lands`]; the caller checked both): no copy of it.
pub(crate) fn allreduce_to<T: Pod>(
    c: &Ctx<'_>,
    data: &[T],
    op: Op<'_, T>,
    all_port: bool,
    out: &mut [T],
) -> Result<()> {
    let block = first_phase(c, data, op, all_port)?;
    let sizes = block_bytes::<T>(data.len(), c.p());
    // SAFETY: `out` is `data.len()` elements of `WIRE_SIZE` bytes (the caller's check),
    // borrowed mutably for the call; every bit pattern is a `T`.
    unsafe { land(c, &block, &sizes, all_port, out.as_mut_ptr().cast()) }
}

/// Whether the result can be landed where it goes: `T`'s memory is its wire encoding, of
/// its size.
pub(crate) fn lands<T: Pod>() -> bool {
    T::MEMORY_IS_WIRE && T::WIRE_SIZE == size_of::<T>()
}

/// The first phase: this node's block of the reduction.
fn first_phase<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>, all_port: bool) -> Result<Vec<T>> {
    if all_port {
        crate::collectives::reduce_scatter::allport::reduce_scatter(c, data, op)
    } else {
        reduce_scatter(c, data, op)
    }
}

/// The bytes of each node's block of an `n`-element result over `p` nodes.
fn block_bytes<T: Pod>(n: usize, p: u32) -> Vec<usize> {
    (0..p)
        .map(|j| bounds(n, p, j).len() * T::WIRE_SIZE)
        .collect()
}

/// The second phase where the result lands ([`lands`]): every message of the all-gather
/// lands at `base` where its blocks (or, all-port, its blocks' parts) belong
/// (`allgather_placed` in `allgather/hypercube.rs` and `allgather/allport.rs`), this node's
/// reduced block copied there first. Was: the all-gather's messages (and the all-port
/// one's join of each block's d parts), then their decoding into the result.
///
/// # Safety
/// `base .. base + sizes' sum` must be writable and not otherwise used until this returns;
/// on `Ok` every byte of it has been written.
unsafe fn land<T: Pod>(
    c: &Ctx<'_>,
    block: &[T],
    sizes: &[usize],
    all_port: bool,
    base: *mut u8,
) -> Result<()> {
    let me = c.me as usize;
    let mine = crate::collectives::pod::as_bytes(block);
    if mine.len() != sizes[me] {
        return Err(crate::error::Error::InvalidArgument(format!(
            "allreduce: this member's reduced block has {} bytes where {} were due",
            mine.len(),
            sizes[me]
        )));
    }
    let at: usize = sizes[..me].iter().sum();
    // SAFETY: this node's block lies in `base`'s range (the caller's contract); the
    // all-gathers write the others' blocks (forwarded).
    unsafe {
        std::ptr::copy_nonoverlapping(mine.as_ptr(), base.add(at), mine.len());
        if all_port {
            crate::collectives::allgather::allport::allgather_placed(c, sizes, base)
        } else {
            crate::collectives::allgather::hypercube::allgather_placed(c, sizes, None, base)
        }
    }
}
