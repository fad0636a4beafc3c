//! Long-message one-to-all broadcast — Grama §4.7.1, eq. 4.13: scatter the message in p
//! near-equal parts (§4.4, eq. 4.6), then all-to-all broadcast them (Alg. 4.7, eq. 4.4):
//! `T = 2 (t_s log p + t_w (p-1) m/p) ≈ 2 (t_s log p + t_w m)`.

use bytes::Bytes;

use crate::collectives::allgather::hypercube::allgather;
use crate::collectives::blocks::{bounds, concat, Layout};
use crate::collectives::ctx::Ctx;
use crate::collectives::scatter::hypercube::scatter;
use crate::error::Result;

/// Broadcast `data` (at relative rank `root`) of `len` bytes.
pub(crate) fn bcast(c: &Ctx<'_>, root: u32, data: Bytes, len: usize) -> Result<Bytes> {
    let p = c.p();
    let sizes: Vec<usize> = (0..p).map(|j| bounds(len, p, j).len()).collect();
    let parts = if c.me == root {
        (0..p).map(|j| data.slice(bounds(len, p, j))).collect()
    } else {
        Vec::new()
    };
    let mine = scatter(c, root, parts, Layout::Given(&sizes))?;
    let all = allgather(c, mine, Layout::Given(&sizes))?;
    Ok(concat(&all))
}
