//! Gather on the hypercube — Grama §4.4 (scatter's steps in reverse, any root by XOR
//! relabelling); model time eq. 4.6: `T = t_s log p + t_w m (p-1)`. With framed blocks it
//! is also `gatherv` (block lengths travel in the messages, so the cost has 8 bytes more
//! per block).

use bytes::Bytes;

use crate::collectives::blocks::{pack, unpack_equal, Layout};
use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Every node's `mine` → at relative rank `root`, all blocks by relative rank.
pub(crate) fn gather(
    c: &Ctx<'_>,
    root: u32,
    mine: Bytes,
    layout: Layout<'_>,
) -> Result<Option<Vec<Bytes>>> {
    let v = c.me ^ root;
    let own = mine.len();
    // held[u] = block of virtual rank v + u
    let mut held = vec![mine];
    for i in 0..c.k {
        let half = 1u32 << i;
        if v & (half - 1) != 0 {
            break;
        }
        let partner = (v ^ half) ^ root;
        if v & half != 0 {
            c.send(partner, pack(&held, layout))?;
            return Ok(None);
        }
        let ids: Vec<u32> = (0..half).map(|u| (v + half + u) ^ root).collect();
        let got = c.recv(partner)?;
        held.extend(unpack_equal(got, &ids, layout, "gather", (partner, own))?);
    }
    if c.me != root {
        return Ok(None);
    }
    let mut out = vec![Bytes::new(); c.p() as usize];
    for (u, b) in held.into_iter().enumerate() {
        out[(u as u32 ^ root) as usize] = b;
    }
    Ok(Some(out))
}
