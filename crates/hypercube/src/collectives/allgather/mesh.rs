//! All-to-all broadcast on the 2-D mesh embedded in the subcube — Grama Alg. 4.6: a ring
//! all-to-all broadcast along each row, then along each column with the row's blocks
//! combined. A subcube of dimension k is an `r × c` mesh, `r = 2^floor(k/2)` rows and
//! `c = 2^ceil(k/2)` columns; relative rank = `gray(row) << ceil(k/2) | gray(col)`, so each
//! row and column is a Gray-code ring of hypercube neighbours. Model time (eq. 4.3 for a
//! square mesh, `r = c = √p`): `T = t_s (r + c - 2) + t_w m (p-1)`.

use bytes::Bytes;
use hypercube_topology::{ginv, gray};

use super::ring::ring_pass;
use crate::collectives::blocks::{check_equal, pack, unpack_equal, Layout};
use crate::collectives::ctx::Ctx;
use crate::collectives::select::mesh_shape;
use crate::error::Result;

/// The mesh coordinates `(row, col)` of relative rank `x` in a subcube of dimension `k`.
pub(crate) fn coords(x: u32, k: u32) -> (u32, u32) {
    let cb = k.div_ceil(2);
    (ginv(x >> cb), ginv(x & ((1 << cb) - 1)))
}

/// The relative rank at mesh `(row, col)`.
pub(crate) fn rank_at(row: u32, col: u32, k: u32) -> u32 {
    (gray(row) << k.div_ceil(2)) | gray(col)
}

/// Every node's `mine` → all blocks by relative rank. `layout` is `Equal` or `Framed`.
pub(crate) fn allgather(c: &Ctx<'_>, mine: Bytes, layout: Layout<'_>) -> Result<Vec<Bytes>> {
    let (r, cols) = mesh_shape(c.k);
    let (row, col) = coords(c.me, c.k);
    let own = mine.len();
    let row_members: Vec<u32> = (0..cols).map(|j| rank_at(row, j, c.k)).collect();
    let row_blocks = ring_pass(c, &row_members, col as usize, mine)?;
    // Equal blocks: the row's must all be this node's length before they go on as one
    // message, which the column checks only as a whole (2 + 6 bytes pass for 4 + 4).
    if let Layout::Equal = layout {
        for (j, b) in row_blocks.iter().enumerate() {
            check_equal(b, 1, own, layout, "allgather", row_members[j])?;
        }
    }
    let col_members: Vec<u32> = (0..r).map(|i| rank_at(i, col, c.k)).collect();
    let rows = ring_pass(
        c,
        &col_members,
        row as usize,
        pack(&row_blocks, layout).into_bytes(),
    )?;
    let mut out = vec![Bytes::new(); c.p() as usize];
    for (i, packed) in rows.into_iter().enumerate() {
        let ids: Vec<u32> = (0..cols).map(|j| rank_at(i as u32, j, c.k)).collect();
        let from = rank_at(i as u32, col, c.k);
        for (j, b) in unpack_equal(packed, &ids, layout, "allgather", (from, own))?
            .into_iter()
            .enumerate()
        {
            out[ids[j] as usize] = b;
        }
    }
    Ok(out)
}
