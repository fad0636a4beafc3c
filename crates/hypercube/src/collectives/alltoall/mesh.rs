//! All-to-all personalized communication on the 2-D mesh embedded in the subcube — Grama
//! §4.5.2 (Figure 4.19): a ring exchange along each row with packets grouped by
//! destination column, then along each column with packets grouped by destination row.
//! The mesh is `r × c` as in `allgather::mesh` (`r = 2^floor(k/2)`, `c = 2^ceil(k/2)`).
//! Model time (eq. 4.8 for a square mesh): `T = (t_s + t_w m p/2)(r + c - 2)`.

use bytes::Bytes;

use super::ring::ring_exchange;
use crate::collectives::allgather::mesh::{coords, rank_at};
use crate::collectives::blocks::concat;
use crate::collectives::ctx::Ctx;
use crate::collectives::select::mesh_shape;
use crate::error::Result;

/// `blocks[t]` goes to relative rank t; returns the block from each relative rank.
pub(crate) fn alltoall(c: &Ctx<'_>, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
    let (r, cols) = mesh_shape(c.k);
    let (row, col) = coords(c.me, c.k);
    let m = blocks[0].len();
    // Phase 1, along my row: the group for column j = my packets to (0, j), (1, j), …
    let row_members: Vec<u32> = (0..cols).map(|j| rank_at(row, j, c.k)).collect();
    let groups: Vec<Bytes> = (0..cols)
        .map(|j| {
            concat(
                &(0..r)
                    .map(|i| blocks[rank_at(i, j, c.k) as usize].clone())
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    // from_row[sc] = packets from (row, sc) to (0, col), (1, col), …
    let from_row = ring_exchange(c, &row_members, col as usize, &groups, m * r as usize)?;
    // Phase 2, along my column: the group for row i = packets from (row, 0), (row, 1), …
    // to (i, col).
    let col_members: Vec<u32> = (0..r).map(|i| rank_at(i, col, c.k)).collect();
    let groups: Vec<Bytes> = (0..r as usize)
        .map(|i| {
            concat(
                &from_row
                    .iter()
                    .map(|g| g.slice(i * m..(i + 1) * m))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let from_col = ring_exchange(c, &col_members, row as usize, &groups, m * cols as usize)?;
    let mut out = vec![Bytes::new(); c.p() as usize];
    for (sr, g) in from_col.into_iter().enumerate() {
        for sc in 0..cols as usize {
            out[rank_at(sr as u32, sc as u32, c.k) as usize] = g.slice(sc * m..(sc + 1) * m);
        }
    }
    Ok(out)
}
