//! All-to-all broadcast: allgather and allgatherv (`MPI_Allgather`, `MPI_Allgatherv`,
//! Grama §4.2).

pub(crate) mod allport;
pub(crate) mod hypercube;
pub(crate) mod mesh;
pub(crate) mod ring;

use bytes::Bytes;

use super::blocks::Layout;
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
        let out = c.guard(match alg {
            Algorithm::Hypercube => hypercube::allgather(&c, block, Layout::Equal),
            Algorithm::AllPort => allport::allgather(&c, block, Layout::Equal),
            Algorithm::Ring => ring::allgather(&c, block),
            Algorithm::Mesh => mesh::allgather(&c, block, Layout::Equal),
            other => Err(not_implemented(Operation::Allgather, other)),
        })?;
        if out.iter().any(|b| b.len() != out[0].len()) {
            return Err(super::blocks::unequal_blocks("allgather"));
        }
        Ok(out)
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
