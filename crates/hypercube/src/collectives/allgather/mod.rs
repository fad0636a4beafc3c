//! All-to-all broadcast: allgather and allgatherv (`MPI_Allgather`, `MPI_Allgatherv`,
//! Grama §4.2).

pub(crate) mod allport;
pub(crate) mod hypercube;
pub(crate) mod mesh;
pub(crate) mod ring;

use bytes::Bytes;

use super::blocks::Layout;
use super::ctx::Ctx;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// All-to-all broadcast: every member passes a block of one common length and returns
    /// all members' blocks by relative rank. Alg. 4.7 (eq. 4.4), ring Alg. 4.4 (eq. 4.2) or
    /// mesh Alg. 4.6 (eq. 4.3).
    #[doc(alias = "MPI_Allgather")]
    pub fn allgather(&self, block: Bytes) -> Result<Vec<Bytes>> {
        let (alg, c) = self.start(Operation::Allgather, block.len(), true)?;
        allgather_blocks(alg, &c, block)
    }

    /// [`Subcube::allgather`] of this member's block `own` into `out`, `size() · own.len()`
    /// bytes in relative rank order (the typed forms' core). With the hypercube algorithm
    /// every message lands in `out` where it belongs and is sent from there
    /// (`hypercube::allgather_landing`); with the all-port one each message lands in the places
    /// of its parts and they are sent from there (`allport::allgather_to`);
    /// the other algorithms exchange message buffers, copied into `out` at the end.
    ///
    /// # Safety
    /// `out .. out + size() · own.len()` must be writable and not otherwise used until this
    /// returns (for [`Own::InPlace`], this member's block in it is only read); when it
    /// returns `Ok`, every byte of it has been written (or was this member's block).
    pub(crate) unsafe fn allgather_to(&self, own: Own<'_>, out: *mut u8) -> Result<()> {
        let m = own.len();
        let (alg, c) = self.start(Operation::Allgather, m, true)?;
        if alg == Algorithm::Hypercube && m >= super::LAND_FROM {
            // SAFETY: forwarded.
            return c.guard(unsafe { hypercube::allgather_landing(&c, own, out) });
        }
        if alg == Algorithm::AllPort && c.k > 0 {
            // SAFETY: forwarded.
            return c.guard(unsafe { allport::allgather_to(&c, own, out) });
        }
        let at = c.me as usize * m;
        let mine = match own {
            Own::From(mine) => Bytes::copy_from_slice(mine),
            // SAFETY: this member's block of `out`, written by the caller.
            Own::InPlace(_) => Bytes::copy_from_slice(unsafe { own.in_place(out, at) }),
        };
        let blocks = allgather_blocks(alg, &c, mine)?;
        for (j, b) in blocks.iter().enumerate() {
            if matches!(own, Own::InPlace(_)) && j * m == at {
                continue;
            }
            // SAFETY: `size()` blocks of `m` bytes (checked equal by `allgather_blocks`)
            // fill `out` exactly.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), out.add(j * m), b.len()) };
        }
        Ok(())
    }

    /// All-to-all broadcast of blocks of any lengths. The hypercube and mesh algorithms
    /// carry the lengths in the messages (8 bytes per block); the ring needs none.
    #[doc(alias = "MPI_Allgatherv")]
    pub fn allgatherv(&self, block: Bytes) -> Result<Vec<Bytes>> {
        let (alg, c) = self.start(Operation::Allgather, block.len(), true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::allgather(&c, block, Layout::Framed),
            Algorithm::AllPort => allport::allgather(&c, block, Layout::Framed),
            Algorithm::Ring => ring::allgather(&c, block),
            Algorithm::Mesh => mesh::allgather(&c, block, Layout::Framed),
            other => Err(not_implemented(Operation::Allgather, other)),
        })
    }
}

/// Where [`Subcube::allgather_to`] finds this member's block.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Own<'a> {
    /// In the caller's slice: copied into its place in the result.
    From(&'a [u8]),
    /// Already in its place in the result, this many bytes (`MPI_IN_PLACE`): sent from
    /// there, never written.
    InPlace(usize),
}

impl<'a> Own<'a> {
    /// The block's length in bytes.
    pub(crate) fn len(self) -> usize {
        match self {
            Own::From(s) => s.len(),
            Own::InPlace(n) => n,
        }
    }

    /// The block as it lies at `out + at` (for [`Own::InPlace`]; `From`'s own slice
    /// otherwise).
    ///
    /// # Safety
    /// For `InPlace`, `out + at .. + len` must be readable and written, and not written
    /// while the returned slice lives.
    pub(crate) unsafe fn in_place(self, out: *const u8, at: usize) -> &'a [u8] {
        match self {
            Own::From(s) => s,
            // SAFETY: the caller's promise.
            Own::InPlace(n) => unsafe { std::slice::from_raw_parts(out.add(at), n) },
        }
    }
}

/// The byte form's algorithms: every member's block by relative rank, each checked to be
/// of one length.
fn allgather_blocks(alg: Algorithm, c: &Ctx<'_>, block: Bytes) -> Result<Vec<Bytes>> {
    let out = c.guard(match alg {
        Algorithm::Hypercube => hypercube::allgather(c, block, Layout::Equal),
        Algorithm::AllPort if c.k > 0 => allport::allgather_landed(c, block),
        Algorithm::AllPort => allport::allgather(c, block, Layout::Equal),
        Algorithm::Ring => ring::allgather(c, block),
        Algorithm::Mesh => mesh::allgather(c, block, Layout::Equal),
        other => Err(not_implemented(Operation::Allgather, other)),
    })?;
    if out.iter().any(|b| b.len() != out[0].len()) {
        return Err(super::blocks::unequal_blocks("allgather"));
    }
    Ok(out)
}
