//! All-to-all broadcast on the hypercube — Grama Alg. 4.7 (exchange along dimensions
//! 0, 1, …, d-1, doubling the message); model time eq. 4.4:
//! `T = t_s log p + t_w m (p-1)`.

use bytes::Bytes;

use super::Own;
use crate::collectives::blocks::{pack, starts, unpack_equal, wrong_length, Layout};
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

/// [`allgather`] into the caller's memory: `out` holds `p · own` bytes, `own` the length
/// of this node's block `mine`, which goes to its place (relative rank · `own`) — or is
/// there already ([`Own::InPlace`]: then it is sent from there and never written). Each
/// step's message lands where its blocks belong (`node/landing.rs`: over TCP read from the socket straight into `out`) and what
/// a node sends is lent from `out` (`lend.rs`): no copy into or out of message buffers.
/// The ranges a step sends (the blocks held) and receives (the partner's) are disjoint, and
/// a range is lent only after it was written.
///
/// # Safety
/// `out .. out + p · mine.len()` must be writable and not otherwise used until this returns.
pub(crate) unsafe fn allgather_landing(c: &Ctx<'_>, mine: Own<'_>, out: *mut u8) -> Result<()> {
    let first = match mine {
        Own::From(s) => Some(s),
        Own::InPlace(_) => None,
    };
    // SAFETY: forwarded; block r of `own` bytes lies at r · own.
    unsafe { allgather_placed(c, &vec![mine.len(); c.p() as usize], first, out) }
}

/// [`allgather_landing`] of blocks of the given lengths: block `r` has `sizes[r]` bytes and
/// lies at `sizes[..r]`'s sum in `out` (the all-reduce's second phase, which lands the
/// reduced blocks in its result). `mine`: this node's block, sent as it is by the first
/// step and copied into its place meanwhile; `None`: it is in its place already.
///
/// # Safety
/// `out .. out + sizes' sum` must be writable and not otherwise used until this returns
/// (this node's block written, if `mine` is `None`).
pub(crate) unsafe fn allgather_placed(
    c: &Ctx<'_>,
    sizes: &[usize],
    mine: Option<&[u8]>,
    out: *mut u8,
) -> Result<()> {
    let me = c.me as usize;
    // at[r]: where block r starts; at[p]: the end.
    let at = starts(sizes);
    // SAFETY (for every step): both ranges lie in `out` (ranks < p); the blocks held were
    // written (this node's in the first step, the others received in earlier steps) and
    // are only read from then on; the partner's range is disjoint from every range lent.
    let copy_own = || {
        if let Some(mine) = mine {
            unsafe { std::ptr::copy_nonoverlapping(mine.as_ptr(), out.add(at[me]), mine.len()) }
        }
    };
    c.lend(|l| {
        if c.k == 0 {
            copy_own();
        }
        for i in 0..c.k {
            let half = 1usize << i;
            let partner = c.me ^ half as u32;
            // Blocks `from .. from + half`, as a range of `out`.
            let range = |from: usize| (at[from], at[from + half] - at[from]);
            let (theirs, n) = range(partner as usize & !(half - 1));
            let got = unsafe {
                let r = c.irecv_landing(partner, (out.add(theirs), n))?;
                let held = match mine {
                    // The first step sends the caller's block itself, and copies it into
                    // `out` while the exchange is under way.
                    Some(mine) if i == 0 => mine,
                    _ => {
                        let (first, len) = range(me & !(half - 1));
                        std::slice::from_raw_parts(out.add(first), len)
                    }
                };
                let s = c.isend(partner, l.lend(held))?;
                if i == 0 {
                    copy_own();
                }
                let got = r.wait();
                s.wait()?;
                got?
            };
            if let Some(m) = got {
                return Err(wrong_length(&m, half, sizes[me], "allgather", partner));
            }
        }
        Ok(())
    })
}
