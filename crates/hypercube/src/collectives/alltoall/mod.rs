//! All-to-all personalized communication (`MPI_Alltoall`, `MPI_Alltoallv`, Grama §4.5).

mod ecube;
mod mesh;
mod pairwise;
mod ring;
mod store_forward;

use bytes::Bytes;

use super::ctx::Ctx;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// All-to-all personalized: `blocks[j]` (one per relative rank, all of one length m,
    /// the same m on every member) goes to relative rank j; returns the block each member
    /// sent to this one, by relative rank. Store-and-forward (eq. 4.9), pairwise Alg. 4.10
    /// (eq. 4.10), e-cube with every block in flight at once (all-port; `alltoall/ecube.rs`),
    /// ring (eq. 4.7) or mesh (eq. 4.8).
    #[doc(alias = "MPI_Alltoall")]
    pub fn alltoall(&self, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
        self.check_blocks(blocks)?;
        if blocks.iter().any(|b| b.len() != blocks[0].len()) {
            return Err(Error::InvalidArgument(
                "alltoall: blocks differ in length; use alltoallv".into(),
            ));
        }
        let (alg, c) = self.start(Operation::Alltoall, blocks[0].len(), true)?;
        let out = c.guard(match alg {
            Algorithm::StoreForward => store_forward::alltoall(&c, blocks),
            Algorithm::Pairwise => pairwise::alltoall(&c, blocks),
            Algorithm::Ecube => ecube::alltoall(&c, blocks),
            Algorithm::Ring => ring::alltoall(&c, blocks),
            Algorithm::Mesh => mesh::alltoall(&c, blocks),
            other => Err(not_implemented(Operation::Alltoall, other)),
        })?;
        if out.iter().any(|b| b.len() != blocks[0].len()) {
            return Err(super::ctx::unequal_blocks("alltoall"));
        }
        Ok(out)
    }

    /// All-to-all personalized with blocks of any lengths: pairwise exchange (Alg. 4.10),
    /// or, when asked for, e-cube with every block in flight at once (`alltoall/ecube.rs`);
    /// no other algorithm applies.
    #[doc(alias = "MPI_Alltoallv")]
    pub fn alltoallv(&self, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
        self.check_blocks(blocks)?;
        let c = Ctx::new(self.node, self.dim)?;
        c.guard(match self.alg {
            Algorithm::Auto | Algorithm::Pairwise => pairwise::alltoall(&c, blocks),
            Algorithm::Ecube => ecube::alltoall(&c, blocks),
            other => Err(Error::InvalidArgument(format!(
                "alltoallv: algorithm {other:?} does not apply; only Pairwise and Ecube do"
            ))),
        })
    }

    fn check_blocks(&self, blocks: &[Bytes]) -> Result<()> {
        super::ctx::check_dim(self.node, self.dim)?;
        if blocks.len() != self.size() as usize {
            return Err(Error::InvalidArgument(format!(
                "alltoall: {} blocks passed for {} members",
                blocks.len(),
                self.size()
            )));
        }
        Ok(())
    }
}
