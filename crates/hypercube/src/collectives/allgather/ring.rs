//! All-to-all broadcast on the Gray-code ring embedded in the subcube — Grama Alg. 4.4
//! (p-1 steps, each passing the last received block to the right); model time eq. 4.2:
//! `T = (t_s + t_w m)(p-1)`. Blocks may differ in length (it is also `allgatherv`).

use bytes::Bytes;
use hypercube_topology::{ginv, gray};

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// The ring pass among `members` (relative ranks in ring order; this node is
/// `members[at]`): returns every member's item by ring index.
pub(crate) fn ring_pass(
    c: &Ctx<'_>,
    members: &[u32],
    at: usize,
    item: Bytes,
) -> Result<Vec<Bytes>> {
    let n = members.len();
    let right = members[(at + 1) % n];
    let left = members[(at + n - 1) % n];
    let mut out = vec![Bytes::new(); n];
    out[at] = item.clone();
    let mut msg = item;
    for i in 1..n {
        msg = c.sendrecv(right, msg, left)?;
        out[(at + n - i) % n] = msg.clone();
    }
    Ok(out)
}

/// Every node's `mine` → all blocks by relative rank.
pub(crate) fn allgather(c: &Ctx<'_>, mine: Bytes) -> Result<Vec<Bytes>> {
    let ring: Vec<u32> = (0..c.p()).map(gray).collect();
    let by_pos = ring_pass(c, &ring, ginv(c.me) as usize, mine)?;
    let mut out = vec![Bytes::new(); c.p() as usize];
    for (pos, b) in by_pos.into_iter().enumerate() {
        out[gray(pos as u32) as usize] = b;
    }
    Ok(out)
}
