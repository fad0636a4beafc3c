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

    /// [`Subcube::allgather`] of `mine` into `out`, `size() · mine.len()` bytes in relative
    /// rank order (the typed forms' core). With the hypercube algorithm every message lands
    /// in `out` where it belongs and is sent from there (`hypercube::allgather_landing`);
    /// the other algorithms exchange message buffers, copied into `out` at the end.
    ///
    /// # Safety
    /// `out .. out + size() · mine.len()` must be writable and not otherwise used until this
    /// returns; when it returns `Ok`, every byte of it has been written.
    pub(crate) unsafe fn allgather_to(&self, mine: &[u8], out: *mut u8) -> Result<()> {
        let (alg, c) = self.start(Operation::Allgather, mine.len(), true)?;
        let m = mine.len();
        if alg == Algorithm::Hypercube && m >= super::LAND_FROM {
            // SAFETY: forwarded.
            return c.guard(unsafe { hypercube::allgather_landing(&c, mine, out) });
        }
        let blocks = allgather_blocks(alg, &c, Bytes::copy_from_slice(mine))?;
        for (j, b) in blocks.iter().enumerate() {
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

/// The byte form's algorithms: every member's block by relative rank, each checked to be
/// of one length.
fn allgather_blocks(alg: Algorithm, c: &Ctx<'_>, block: Bytes) -> Result<Vec<Bytes>> {
    let out = c.guard(match alg {
        Algorithm::Hypercube => hypercube::allgather(c, block, Layout::Equal),
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
