//! Barrier (`MPI_Barrier`).

mod hypercube;
mod tree;

use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// Return only after every member of the subcube has called `barrier`: log p empty
    /// exchanges (t_s log p; `barrier/hypercube.rs`), or by request
    /// ([`Algorithm::Tree`]) up and down the binomial tree (2 t_s log p, 2 (p − 1)
    /// messages; `barrier/tree.rs`), which measured faster with 16 ranks on 2 cores
    /// (docs/collectives.md, "Algorithms").
    #[doc(alias = "MPI_Barrier")]
    pub fn barrier(&self) -> Result<()> {
        let (alg, c) = self.start(Operation::Barrier, 0, true)?;
        c.guard(match alg {
            Algorithm::Hypercube => hypercube::barrier(&c),
            Algorithm::Tree => tree::barrier(&c),
            other => Err(not_implemented(Operation::Barrier, other)),
        })
    }
}
