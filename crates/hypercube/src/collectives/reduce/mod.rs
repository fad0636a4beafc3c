//! All-to-one reduction (`MPI_Reduce`, Grama §4.1 and §4.7.2).

mod allport;
mod hypercube;
mod reduce_scatter_gather;

use hypercube_topology::NodeId;

use super::ctx::rel_root;
use super::element::Op;
use super::pod::Pod;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// All-to-one reduction: every member passes a vector of the same length; `root`
    /// returns `Some(x_0 ⊕ … ⊕ x_{p-1})` (relative rank order), the others `None`.
    /// Alg. 4.3 (eq. 4.1) or reduce-scatter + gather for long vectors.
    #[doc(alias = "MPI_Reduce")]
    pub fn reduce<T: Pod>(
        &self,
        root: NodeId,
        data: &[T],
        op: Op<'_, T>,
    ) -> Result<Option<Vec<T>>> {
        op.check()?;
        let r = rel_root(self.node, self.dim, root)?;
        let m = std::mem::size_of_val(data);
        let (alg, c) = self.start(Operation::Reduce, m, op.is_commutative())?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::reduce(&c, r, data, op),
            Algorithm::AllPort => allport::reduce(&c, r, data, op),
            Algorithm::ReduceScatterGather => reduce_scatter_gather::reduce(&c, r, data, op),
            other => Err(not_implemented(Operation::Reduce, other)),
        })
    }
}
