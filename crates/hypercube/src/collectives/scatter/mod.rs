//! Scatter (`MPI_Scatter`, Grama §4.4).

pub(crate) mod hypercube;

use bytes::Bytes;

use super::ctx::{rel_root, Ctx, Layout};
use super::select::{choose, Operation};
use super::Subcube;
use crate::error::{Error, Result};
use crate::NodeId;

impl Subcube<'_> {
    /// Scatter: `root` passes one block per member (by relative rank, all of one length);
    /// every member returns its block. Other members pass an empty slice. Alg.: §4.4,
    /// eq. 4.6.
    #[doc(alias = "MPI_Scatter")]
    pub fn scatter(&self, root: NodeId, blocks: &[Bytes]) -> Result<Bytes> {
        let r = rel_root(self.node, self.dim, root)?;
        let p = self.size() as usize;
        if self.node.mynode() == root {
            if blocks.len() != p {
                return Err(Error::InvalidArgument(format!(
                    "scatter: the root passed {} blocks for {p} members",
                    blocks.len()
                )));
            }
            if blocks.iter().any(|b| b.len() != blocks[0].len()) {
                return Err(Error::InvalidArgument(
                    "scatter: blocks differ in length; all blocks must have one length".into(),
                ));
            }
        }
        choose(Operation::Scatter, self.alg, self.dim, 0, true)?;
        let c = Ctx::new(self.node, self.dim)?;
        hypercube::scatter(&c, r, blocks.to_vec(), Layout::Equal)
    }
}
