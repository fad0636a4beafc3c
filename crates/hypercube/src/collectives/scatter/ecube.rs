//! Scatter with every block sent directly from the root along its e-cube route (the
//! routing of §4.6.2 / Alg. 4.10, applied to §4.4's operation): the root starts all p − 1
//! sends at once, nearest destinations first, and the nodes on the way forward the blocks
//! in their progress threads. Model time (single-ported root):
//! `T = (t_s + t_w m)(p − 1)`; the bytes moved over the links are the binomial tree's
//! (`m p/2 log p`), but no node waits for a block that is not its own.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// The destinations of relative rank `root`, nearest first (then by rank).
pub(crate) fn by_distance(c: &Ctx<'_>, root: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (0..c.p()).filter(|&j| j != root).collect();
    order.sort_by_key(|&j| ((j ^ root).count_ones(), j));
    order
}

/// `blocks` (at relative rank `root`: p blocks by relative rank; elsewhere ignored) →
/// this node's block.
pub(crate) fn scatter(c: &Ctx<'_>, root: u32, blocks: &[Bytes]) -> Result<Bytes> {
    if c.me != root {
        return c.recv(root);
    }
    let sends = by_distance(c, root)
        .into_iter()
        .map(|j| c.isend(j, blocks[j as usize].clone()))
        .collect::<Result<Vec<_>>>()?;
    for s in sends {
        s.wait()?;
    }
    Ok(blocks[root as usize].clone())
}
