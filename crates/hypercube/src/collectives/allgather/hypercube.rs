//! All-to-all broadcast on the hypercube — Grama Alg. 4.7 (exchange along dimensions
//! 0, 1, …, d-1, doubling the message); model time eq. 4.4:
//! `T = t_s log p + t_w m (p-1)`.

use bytes::Bytes;

use super::Own;
use crate::collectives::blocks::{pack, unpack_equal, wrong_length, Layout};
use crate::collectives::ctx::Ctx;
use crate::collectives::lend::lend;
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
    let own = mine.len();
    // SAFETY (for every step): both ranges lie in `out` (ranks < p); the blocks held were
    // written (this node's in the first step, the others received in earlier steps) and
    // are only read from then on; the partner's range is disjoint from every range lent.
    let copy_own = || {
        if let Own::From(mine) = mine {
            unsafe {
                std::ptr::copy_nonoverlapping(mine.as_ptr(), out.add(c.me as usize * own), own)
            }
        }
    };
    lend(&|| c.release_lent(), |l| {
        if c.k == 0 {
            copy_own();
        }
        for i in 0..c.k {
            let half = 1u32 << i;
            let partner = c.me ^ half;
            let n = half as usize * own;
            let theirs = (partner & !(half - 1)) as usize * own;
            let got = unsafe {
                let r = c.irecv_landing(partner, (out.add(theirs), n))?;
                let held = if i == 0 {
                    // The first step sends the caller's block itself, and copies it into
                    // `out` while the exchange is under way (in place: sends it from there).
                    mine.in_place(out, c.me as usize * own)
                } else {
                    let first = (c.me & !(half - 1)) as usize * own;
                    std::slice::from_raw_parts(out.add(first), n)
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
                return Err(wrong_length(&m, half as usize, own, "allgather", partner));
            }
        }
        Ok(())
    })
}
