//! All-to-all personalized communication by pairwise exchange — Grama Alg. 4.10: in step
//! j = 1 … p-1 node i exchanges its packet with node i XOR j (congestion-free under e-cube
//! routing). Model time eq. 4.10: `T = (t_s + t_w m)(p-1)`. Blocks may differ in length,
//! so this is also `alltoallv`.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// `blocks[t]` goes to relative rank t; returns the block from each relative rank.
pub(crate) fn alltoall(c: &Ctx<'_>, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
    let p = c.p();
    let mut out = vec![Bytes::new(); p as usize];
    out[c.me as usize] = blocks[c.me as usize].clone();
    for j in 1..p {
        let partner = c.me ^ j;
        out[partner as usize] = c.sendrecv(partner, blocks[partner as usize].clone(), partner)?;
    }
    Ok(out)
}
