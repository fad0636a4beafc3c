//! All-to-all reduction (`MPI_Reduce_scatter`, Grama §4.2, Alg. 4.5 and 4.8).

pub(crate) mod allport;
pub(crate) mod hypercube;
pub(crate) mod ring;

use super::element::Op;
use super::pod::Pod;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// All-to-all reduction: every member passes a vector of n elements (the same n
    /// everywhere); member j returns block j of the element-wise reduction, where block j
    /// is elements `j*n/p .. (j+1)*n/p`. Alg. 4.8 or, for a commutative ⊕, ring Alg. 4.5 or
    /// the all-port form (`reduce_scatter/allport.rs`).
    #[doc(alias = "MPI_Reduce_scatter")]
    pub fn reduce_scatter<T: Pod>(&self, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
        op.check()?;
        let m = std::mem::size_of_val(data);
        let (alg, c) = self.start(Operation::ReduceScatter, m, op.is_commutative())?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::reduce_scatter(&c, data, op),
            Algorithm::AllPort => allport::reduce_scatter(&c, data, op),
            Algorithm::Ring => ring::reduce_scatter(&c, data.to_vec(), op),
            other => Err(not_implemented(Operation::ReduceScatter, other)),
        })
    }
}
