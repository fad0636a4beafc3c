//! Scatter on the hypercube — Grama §4.4 (the broadcast pattern of Alg. 4.2 with halving
//! messages, any source by XOR relabelling); model time eq. 4.6:
//! `T = t_s log p + t_w m (p-1)`.

use bytes::Bytes;

use crate::collectives::blocks::{pack, unpack, Layout};
use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// `blocks` (at relative rank `root`: p blocks by relative rank; elsewhere ignored) →
/// this node's block.
pub(crate) fn scatter(
    c: &Ctx<'_>,
    root: u32,
    blocks: Vec<Bytes>,
    layout: Layout<'_>,
) -> Result<Bytes> {
    let v = c.me ^ root;
    // held[u] = block of virtual rank v + u
    let mut held: Vec<Bytes> = if c.me == root {
        (0..c.p())
            .map(|u| blocks[(u ^ root) as usize].clone())
            .collect()
    } else {
        Vec::new()
    };
    for i in (0..c.k).rev() {
        let half = 1u32 << i;
        if v & ((half << 1) - 1) == 0 {
            let partner = (v ^ half) ^ root;
            let upper = held.split_off(half as usize);
            c.send(partner, pack(&upper, layout))?;
        } else if v & (half - 1) == 0 {
            let partner = (v ^ half) ^ root;
            let ids: Vec<u32> = (0..half).map(|u| (v + u) ^ root).collect();
            held = unpack(c.recv(partner)?, &ids, layout, "scatter")?;
        }
    }
    Ok(held.swap_remove(0))
}
