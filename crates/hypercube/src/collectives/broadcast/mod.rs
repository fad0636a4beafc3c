//! One-to-all broadcast (`MPI_Bcast`, Grama §4.1 and §4.7.1).

pub(crate) mod allport;
pub(crate) mod hypercube;
mod scatter_allgather;

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::ctx::rel_root;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// One-to-all broadcast: every member returns the `len_bytes` bytes that `root` passed
    /// as `data` (other members' `data` is ignored; pass `Bytes::new()`). Every member must
    /// pass the same `root` and `len_bytes`, which selects the algorithm: Alg. 4.2
    /// (eq. 4.1) or scatter + all-to-all broadcast (eq. 4.13).
    #[doc(alias = "MPI_Bcast")]
    pub fn bcast(&self, root: NodeId, data: Bytes, len_bytes: usize) -> Result<Bytes> {
        let r = rel_root(self.node, self.dim, root)?;
        if self.node.mynode() == root && data.len() != len_bytes {
            return Err(Error::InvalidArgument(format!(
                "bcast: the root passed {} bytes but len_bytes = {len_bytes}",
                data.len()
            )));
        }
        let (alg, c) = self.start(Operation::Bcast, len_bytes, true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::bcast(&c, r, data, len_bytes),
            Algorithm::AllPort => allport::bcast(&c, r, data, len_bytes),
            Algorithm::ScatterAllgather => scatter_allgather::bcast(&c, r, data, len_bytes),
            other => Err(not_implemented(Operation::Bcast, other)),
        })
    }
}
