//! Barrier (`MPI_Barrier`).

mod hypercube;

use super::ctx::Ctx;
use super::select::{choose, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// Return only after every member of the subcube has called `barrier`. log p empty
    /// exchanges (t_s log p).
    #[doc(alias = "MPI_Barrier")]
    pub fn barrier(&self) -> Result<()> {
        choose(Operation::Barrier, self.alg, self.dim, 0, true)?;
        let c = Ctx::new(self.node, self.dim)?;
        hypercube::barrier(&c)
    }
}
