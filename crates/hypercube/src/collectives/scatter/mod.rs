//! Scatter (`MPI_Scatter`, Grama §4.4).

pub(crate) mod allport;
pub(crate) mod ecube;
pub(crate) mod hypercube;

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::blocks::Layout;
use super::ctx::rel_root;
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// Scatter: `root` passes one block per member (by relative rank), each of
    /// `block_len` bytes; every member returns its block. Other members pass an empty
    /// slice. Every member must pass the same `root` and `block_len` (as `recvcount` in
    /// `MPI_Scatter`), which selects the algorithm: the tree of §4.4 (eq. 4.6) or blocks
    /// sent straight along their e-cube routes ([`Algorithm::Ecube`]), or in d parts down
    /// d edge-disjoint trees ([`Algorithm::AllPort`]).
    #[doc(alias = "MPI_Scatter")]
    pub fn scatter(&self, root: NodeId, blocks: &[Bytes], block_len: usize) -> Result<Bytes> {
        let r = rel_root(self.node, self.dim, root)?;
        let p = self.size() as usize;
        if self.node.mynode() == root {
            if blocks.len() != p {
                return Err(Error::InvalidArgument(format!(
                    "scatter: the root passed {} blocks for {p} members",
                    blocks.len()
                )));
            }
            if let Some((j, b)) = blocks
                .iter()
                .enumerate()
                .find(|(_, b)| b.len() != block_len)
            {
                return Err(Error::InvalidArgument(format!(
                    "scatter: block {j} has {} bytes but block_len = {block_len}; all blocks \
                     must have block_len bytes",
                    b.len()
                )));
            }
        }
        let (alg, c) = self.start(Operation::Scatter, block_len, true)?;
        let mine = c.guard(match alg {
            Algorithm::Hypercube => hypercube::scatter(&c, r, blocks.to_vec(), Layout::Equal),
            Algorithm::Ecube => ecube::scatter(&c, r, blocks),
            Algorithm::AllPort => allport::scatter(&c, r, blocks),
            other => Err(not_implemented(Operation::Scatter, other)),
        })?;
        if mine.len() != block_len {
            return Err(Error::InvalidArgument(format!(
                "scatter: received a block of {} bytes but block_len = {block_len}; every \
                 member must pass the block_len of the root's blocks",
                mine.len()
            )));
        }
        Ok(mine)
    }
}
