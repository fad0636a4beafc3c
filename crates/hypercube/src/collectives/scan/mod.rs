//! Prefix sums (`MPI_Scan`, `MPI_Exscan`, Grama §4.3): Alg. 4.9 on the hypercube, or the
//! pipelined chain of ranks for long vectors.

mod chain;
mod hypercube;

use super::element::Op;
use super::pod::Pod;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// Inclusive prefix reduction: relative rank j returns `x_0 ⊕ … ⊕ x_j`. Alg. 4.9, or
    /// the pipelined chain ([`Algorithm::Chain`]). Both keep rank order, so `op` need not
    /// be commutative.
    #[doc(alias = "MPI_Scan")]
    pub fn scan<T: Pod>(&self, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
        self.prefix(data, op, true)?
            .ok_or_else(|| Error::InvalidArgument("scan: no result".into()))
    }

    /// Exclusive prefix reduction: relative rank j > 0 returns `Some(x_0 ⊕ … ⊕ x_{j-1})`,
    /// rank 0 returns `None`. Algorithms as [`Subcube::scan`].
    #[doc(alias = "MPI_Exscan")]
    pub fn exscan<T: Pod>(&self, data: &[T], op: Op<'_, T>) -> Result<Option<Vec<T>>> {
        self.prefix(data, op, false)
    }

    fn prefix<T: Pod>(&self, data: &[T], op: Op<'_, T>, inclusive: bool) -> Result<Option<Vec<T>>> {
        op.check()?;
        let m = std::mem::size_of_val(data);
        let (alg, c) = self.start(Operation::Scan, m, true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::scan(&c, data.to_vec(), op, inclusive),
            Algorithm::Chain => chain::scan(&c, data.to_vec(), op, inclusive),
            other => Err(not_implemented(Operation::Scan, other)),
        })
    }
}
