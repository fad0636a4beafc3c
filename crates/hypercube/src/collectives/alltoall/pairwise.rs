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

/// [`alltoall`] between the caller's memories: block t of `data` (`m` bytes each) goes to
/// relative rank t, lent as it is (`lend.rs`), and the block from rank t lands at
/// `out + t · m` (`node/landing.rs`); this node's own block is copied. Returns a message
/// of another length (nothing written) with its sender, for the caller to name.
///
/// # Safety
/// `out .. out + p · m` must be writable and not otherwise used until this returns.
pub(crate) unsafe fn alltoall_landing(
    c: &Ctx<'_>,
    data: &[u8],
    m: usize,
    out: *mut u8,
) -> Result<()> {
    c.lend(|l| {
        let me = c.me as usize;
        if c.p() == 1 {
            // SAFETY: block `me` of `out` (the caller's contract).
            unsafe { super::copy_block(data, out, me, m) };
        }
        for j in 1..c.p() {
            let t = (c.me ^ j) as usize;
            // SAFETY: block `t` of `out`, written by this receive only; it is waited for
            // (or dropped, on an error) before this returns.
            let r = unsafe { c.irecv_landing(t as u32, (out.add(t * m), m))? };
            let s = c.isend(t as u32, l.lend(&data[t * m..(t + 1) * m]))?;
            if j == 1 {
                // This node's own block, copied while the first exchange is under way.
                // SAFETY: block `me` of `out` (the caller's contract).
                unsafe { super::copy_block(data, out, me, m) };
            }
            let got = r.wait();
            s.wait()?;
            if let Some(b) = got? {
                return Err(super::wrong_block(t as u32, &b, m));
            }
        }
        Ok(())
    })
}
