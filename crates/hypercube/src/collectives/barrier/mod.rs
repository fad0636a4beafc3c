//! Barrier (`MPI_Barrier`).

mod hypercube;

use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// Return only after every member of the subcube has called `barrier`. log p empty
    /// exchanges (t_s log p).
    #[doc(alias = "MPI_Barrier")]
    pub fn barrier(&self) -> Result<()> {
        let (alg, c) = self.start(Operation::Barrier, 0, true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::barrier(&c),
            other => Err(not_implemented(Operation::Barrier, other)),
        })
    }
}
