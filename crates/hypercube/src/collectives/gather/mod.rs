//! Gather and gatherv (`MPI_Gather`, `MPI_Gatherv`, Grama §4.4).

mod allport;
mod ecube;
pub(crate) mod hypercube;

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::blocks::Layout;
use super::ctx::rel_root;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// Gather: every member passes a block of one common length; `root` returns all blocks
    /// by relative rank (`Some`), the others `None`. §4.4, eq. 4.6.
    #[doc(alias = "MPI_Gather")]
    pub fn gather(&self, root: NodeId, block: Bytes) -> Result<Option<Vec<Bytes>>> {
        let r = rel_root(self.node, self.dim, root)?;
        let (alg, c) = self.start(Operation::Gather, block.len(), true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::gather(&c, r, block, Layout::Equal),
            Algorithm::Ecube => ecube::gather(&c, r, block, true),
            Algorithm::AllPort => allport::gather(&c, r, block, true),
            other => Err(not_implemented(Operation::Gather, other)),
        })
    }

    /// Gatherv: like [`Subcube::gather`] with blocks of any lengths.
    #[doc(alias = "MPI_Gatherv")]
    pub fn gatherv(&self, root: NodeId, block: Bytes) -> Result<Option<Vec<Bytes>>> {
        let r = rel_root(self.node, self.dim, root)?;
        // Lengths differ between members, so the automatic choice must not depend on them.
        let (alg, c) = self.start(Operation::Gather, 0, true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::gather(&c, r, block, Layout::Framed),
            Algorithm::Ecube => ecube::gather(&c, r, block, false),
            Algorithm::AllPort => allport::gather(&c, r, block, false),
            other => Err(not_implemented(Operation::Gather, other)),
        })
    }
}
