//! All-reduce (`MPI_Allreduce`, Grama §4.3 and §4.7.3).

mod hypercube;
mod reduce_scatter_allgather;
mod ring;

use super::ctx::Ctx;
use super::element::Op;
use super::pod::Pod;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// All-reduce: every member passes a vector of the same length and returns the
    /// element-wise reduction `x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1}` (relative rank order). §4.3
    /// (eq. 4.5), reduce-scatter + allgather (eq. 4.14) or, for a commutative ⊕, the ring.
    #[doc(alias = "MPI_Allreduce")]
    pub fn allreduce<T: Pod>(&self, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
        op.check()?;
        let m = std::mem::size_of_val(data);
        let (alg, c) = self.start(Operation::Allreduce, m, op.is_commutative())?;
        c.guard(by(alg, &c, data, op))
    }

    /// [`Subcube::allreduce`] into `out` (`allreduce_into`): with reduce-scatter +
    /// all-gather (either form) and `out` as long as `data` the result lands in `out` where
    /// `T`'s memory is its wire encoding; otherwise it is computed, and copied if `out`
    /// fits it (`Subcube::fits`'s error if not, after the call).
    pub(crate) fn allreduce_to<T: Pod>(
        &self,
        data: &[T],
        out: &mut [T],
        op: Op<'_, T>,
    ) -> Result<()> {
        op.check()?;
        let m = std::mem::size_of_val(data);
        let (alg, c) = self.start(Operation::Allreduce, m, op.is_commutative())?;
        let two_phases = matches!(alg, Algorithm::ReduceScatterAllgather | Algorithm::AllPort);
        if two_phases && reduce_scatter_allgather::lands::<T>() && out.len() == data.len() {
            let all_port = alg == Algorithm::AllPort;
            return c.guard(reduce_scatter_allgather::allreduce_to(
                &c, data, op, all_port, out,
            ));
        }
        let r = c.guard(by(alg, &c, data, op))?;
        self.fits(out.len(), r.len(), "allreduce_into")?;
        out.copy_from_slice(&r);
        Ok(())
    }
}

/// The all-reduce by algorithm `alg`.
fn by<T: Pod>(alg: Algorithm, c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    match alg {
        Algorithm::Hypercube => hypercube::allreduce(c, data.to_vec(), op),
        Algorithm::ReduceScatterAllgather => reduce_scatter_allgather::allreduce(c, data, op),
        Algorithm::AllPort => reduce_scatter_allgather::allreduce_all_port(c, data, op),
        Algorithm::Ring => ring::allreduce(c, data.to_vec(), op),
        other => Err(not_implemented(Operation::Allreduce, other)),
    }
}
