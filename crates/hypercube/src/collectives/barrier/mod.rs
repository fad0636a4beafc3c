//! Barrier (`MPI_Barrier`).

mod hypercube;
mod tree;

use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::Result;

impl Subcube<'_> {
    /// Return only after every member of the subcube has called `barrier`: log p empty
    /// exchanges (t_s log p, p log p messages; `barrier/hypercube.rs`), or up and down the
    /// binomial tree (2 t_s log p, 2 (p − 1) messages; `barrier/tree.rs`) — the automatic
    /// choice where the ranks outnumber the cores four to one or more, where every message
    /// is a wake-up and the tree measured 20–35 % faster (docs/collectives.md,
    /// "Algorithms"). The tree lets node 0 go first and the leaves `log p` messages later;
    /// the exchange lets every member go when its last partner's message comes.
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
