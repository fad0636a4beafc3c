//! Gather with every block sent directly to the root along its e-cube route (§4.4's
//! operation with the routing of §4.6.2 / Alg. 4.10): the nodes on the way forward the
//! blocks in their progress threads; the root takes them as they come. Model time
//! (single-ported root): `T = (t_s + t_w m)(p − 1)`. Each block is its own message, so
//! blocks of any lengths (gatherv) need no framing.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::{Error, Result};

/// Every node's `mine` → at relative rank `root`, all blocks by relative rank.
/// With `equal`, every block must have the root's length (gather, not gatherv).
pub(crate) fn gather(
    c: &Ctx<'_>,
    root: u32,
    mine: Bytes,
    equal: bool,
) -> Result<Option<Vec<Bytes>>> {
    if c.me != root {
        c.send(root, mine)?;
        return Ok(None);
    }
    let order = crate::collectives::scatter::ecube::by_distance(c, root);
    let recvs = order
        .iter()
        .map(|&j| c.irecv(j))
        .collect::<Result<Vec<_>>>()?;
    let mut out = vec![Bytes::new(); c.p() as usize];
    out[root as usize] = mine;
    let mut wrong = None;
    for (j, r) in order.into_iter().zip(recvs) {
        let b = r.wait()?.into_data();
        if equal && b.len() != out[root as usize].len() && wrong.is_none() {
            wrong = Some((j, b.len()));
        }
        out[j as usize] = b;
    }
    if let Some((j, len)) = wrong {
        return Err(unequal(j, len, out[root as usize].len()));
    }
    Ok(Some(out))
}

/// A gather (not gatherv) whose relative rank `j` sent `len` bytes where the root's block
/// has `own`.
pub(super) fn unequal(j: u32, len: usize, own: usize) -> Error {
    Error::InvalidArgument(format!(
        "gather: relative rank {j} sent {len} bytes but the root's block has {own}; every \
         member must pass a block of one length (or use gatherv)"
    ))
}
