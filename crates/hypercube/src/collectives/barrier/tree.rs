//! Barrier as an all-to-one reduction of nothing up the binomial tree of the hypercube,
//! then a one-to-all broadcast of nothing down it (Grama §4.1, the tree of Figure 4.6 and
//! its reverse): `2 (p − 1)` messages in all against the exchange's `p log p`, and
//! `2 t_s log p` on the critical path against `t_s log p`.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Wait for every member.
pub(crate) fn barrier(c: &Ctx<'_>) -> Result<()> {
    // Up: at step i a node whose bit i is its lowest set bit reports to the node across
    // bit i, once it has heard from every node below it; node 0 hears from all.
    let mut top = c.k;
    for i in 0..c.k {
        let bit = 1u32 << i;
        if c.me & bit != 0 {
            c.send(c.me ^ bit, Bytes::new())?;
            c.recv(c.me ^ bit)?;
            top = i;
            break;
        }
        c.recv(c.me | bit)?;
    }
    // Down: release the nodes below, the farthest first.
    for i in (0..top).rev() {
        c.send(c.me | (1u32 << i), Bytes::new())?;
    }
    Ok(())
}
