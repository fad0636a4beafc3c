//! All-to-all broadcast on the hypercube — Grama Alg. 4.7 (exchange along dimensions
//! 0, 1, …, d-1, doubling the message); model time eq. 4.4:
//! `T = t_s log p + t_w m (p-1)`.

use bytes::Bytes;

use crate::collectives::blocks::{pack, unpack_equal, Layout};
use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Every node's `mine` → all blocks by relative rank.
pub(crate) fn allgather(c: &Ctx<'_>, mine: Bytes, layout: Layout<'_>) -> Result<Vec<Bytes>> {
    let own = mine.len();
    // held = blocks of the aligned rank range of 2^i nodes containing me, in rank order
    let mut held = vec![mine];
    for i in 0..c.k {
        let half = 1u32 << i;
        let partner = c.me ^ half;
        let first = partner & !(half - 1);
        let ids: Vec<u32> = (first..first + half).collect();
        let got = c.sendrecv(partner, pack(&held, layout), partner)?;
        let got = unpack_equal(got, &ids, layout, "allgather", (partner, own))?;
        held = if partner < c.me {
            got.into_iter().chain(held).collect()
        } else {
            held.into_iter().chain(got).collect()
        };
    }
    Ok(held)
}
