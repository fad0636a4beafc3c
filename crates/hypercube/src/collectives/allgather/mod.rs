//! All-to-all broadcast: allgather and allgatherv (`MPI_Allgather`, `MPI_Allgatherv`,
//! Grama §4.2).

pub(crate) mod hypercube;
pub(crate) mod mesh;
pub(crate) mod ring;

use bytes::Bytes;

use super::ctx::{Ctx, Layout};
use super::select::{choose, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// All-to-all broadcast: every member passes a block of one common length and returns
    /// all members' blocks by relative rank. Alg. 4.7 (eq. 4.4), ring Alg. 4.4 (eq. 4.2) or
    /// mesh Alg. 4.6 (eq. 4.3).
    #[doc(alias = "MPI_Allgather")]
    pub fn allgather(&self, block: Bytes) -> Result<Vec<Bytes>> {
        let alg = choose(Operation::Allgather, self.alg, self.dim, block.len(), true)?;
        let c = Ctx::new(self.node, self.dim)?;
        let out = match alg {
            Algorithm::Ring => ring::allgather(&c, block)?,
            Algorithm::Mesh => mesh::allgather(&c, block, Layout::Equal)?,
            _ => hypercube::allgather(&c, block, Layout::Equal)?,
        };
        if out.iter().any(|b| b.len() != out[0].len()) {
            return Err(Error::InvalidArgument(
                "allgather: members passed blocks of different lengths; use allgatherv".into(),
            ));
        }
        Ok(out)
    }

    /// All-to-all broadcast of blocks of any lengths. The hypercube and mesh algorithms
    /// carry the lengths in the messages (8 bytes per block); the ring needs none.
    #[doc(alias = "MPI_Allgatherv")]
    pub fn allgatherv(&self, block: Bytes) -> Result<Vec<Bytes>> {
        let alg = choose(Operation::Allgather, self.alg, self.dim, block.len(), true)?;
        let c = Ctx::new(self.node, self.dim)?;
        match alg {
            Algorithm::Ring => ring::allgather(&c, block),
            Algorithm::Mesh => mesh::allgather(&c, block, Layout::Framed),
            _ => hypercube::allgather(&c, block, Layout::Framed),
        }
    }
}
