//! Barrier on the hypercube: the all-reduce pattern (Grama §4.3, Alg. 4.7's exchanges) with
//! empty messages — no node leaves before every node has entered. Model time eq. 4.5 with
//! m = 0: `T = t_s log p`.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Wait for every member.
pub(crate) fn barrier(c: &Ctx<'_>) -> Result<()> {
    for i in 0..c.k {
        let partner = c.me ^ (1 << i);
        c.sendrecv(partner, Bytes::new(), partner)?;
    }
    Ok(())
}
