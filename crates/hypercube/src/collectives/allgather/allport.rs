//! All-to-all broadcast on **all-port** hardware: every block is cut into d parts, and part
//! i runs Grama's Alg. 4.7 (recursive doubling) with its dimension order rotated by i —
//! dimensions i, i+1, …, i+d−1 (mod d). At every step the d parts use d different
//! dimensions, so each node drives all of its links at once: the d rotated spanning
//! binomial trees of Johnsson & Ho ("Optimum broadcasting and personalized communication
//! in hypercubes", IEEE Trans. Computers 38(9), 1989; cited by the Bhatt seed, §1).
//!
//! Step j moves `2^j m/d` bytes over each link, so the all-port time is
//! `d t_s log p + t_w m (p − 1)/d` (start-ups counted as the node's serial work): the link
//! bound `(p − 1) m/d` exactly, where Alg. 4.7 needs `(p − 1) m`. In Grama's one-port
//! model it costs `d t_s log p + t_w m (p − 1)`: more start-ups, the same bytes.
//!
//! The d parts of every block must end up joined: [`allgather_to`] receives each
//! message's parts straight into their places in one buffer of all blocks, and sends from
//! there — the typed forms' buffer is the caller's memory, the byte form's
//! ([`allgather_landed`]) a fresh one whose blocks it returns as views; [`allgather`]
//! (blocks of any lengths, and the all-port all-reduce's blocks of given lengths) joins
//! them once at the end.

use bytes::{Bytes, BytesMut};

use super::Own;
use crate::base::parts::Parts;
use crate::collectives::blocks::{bounds, pack, starts, unpack_equal, wrong_length, Layout};
use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Every node's `mine` → all blocks by relative rank. Each part's slices travel in
/// `layout` ([`Layout::Given`]: part i of block j has `bounds(sizes[j], d, i)` bytes).
pub(crate) fn allgather(c: &Ctx<'_>, mine: Bytes, layout: Layout<'_>) -> Result<Vec<Bytes>> {
    let d = c.k;
    if d == 0 {
        return Ok(vec![mine]);
    }
    let own = mine.len();
    let given: Vec<Vec<usize>> = match layout {
        Layout::Given(sizes) => (0..d)
            .map(|i| sizes.iter().map(|&z| bounds(z, d, i).len()).collect())
            .collect(),
        _ => Vec::new(),
    };
    let part_layout = |i: u32| match layout {
        Layout::Given(_) => Layout::Given(&given[i as usize]),
        other => other,
    };
    // held[i]: part i of the blocks of the nodes held so far, by relative rank (sorted).
    let mut held: Vec<Vec<(u32, Bytes)>> = (0..d)
        .map(|i| vec![(c.me, mine.slice(bounds(own, d, i)))])
        .collect();
    for j in 0..d {
        let partner = |i: u32| c.me ^ (1 << ((i + j) % d));
        let recvs = (0..d)
            .map(|i| c.irecv(partner(i)))
            .collect::<Result<Vec<_>>>()?;
        let sends = (0..d)
            .map(|i| {
                let slices: Vec<Bytes> = held[i as usize].iter().map(|(_, b)| b.clone()).collect();
                c.isend(partner(i), pack(&slices, part_layout(i)))
            })
            .collect::<Result<Vec<_>>>()?;
        for (i, r) in (0..d).zip(recvs) {
            let bit = 1 << ((i + j) % d);
            let mut ids: Vec<u32> = held[i as usize].iter().map(|(n, _)| n ^ bit).collect();
            ids.sort_unstable();
            let got = r.wait()?.into_data();
            let part = bounds(own, d, i).len();
            let got = unpack_equal(got, &ids, part_layout(i), "allgather", (partner(i), part))?;
            let h = &mut held[i as usize];
            h.extend(ids.into_iter().zip(got));
            h.sort_unstable_by_key(|(n, _)| *n);
        }
        for s in sends {
            s.wait()?;
        }
    }
    // Every part now holds all p nodes' slices in rank order: join them per node.
    Ok((0..c.p() as usize)
        .map(|r| {
            let len = held.iter().map(|h| h[r].1.len()).sum();
            let mut b = BytesMut::with_capacity(len);
            for h in &held {
                b.extend_from_slice(&h[r].1);
            }
            b.freeze()
        })
        .collect())
}

/// The relative ranks whose part `i` a node `me` holds before step `j` — its subcube over
/// dimensions `i, i+1, …, i+j−1` (mod d) — in rank order: the blocks whose part i a step's
/// message carries, in the order it carries them.
fn held(me: u32, d: u32, i: u32, j: u32) -> Vec<u32> {
    let free: u32 = (0..j).fold(0, |m, t| m | 1 << ((i + t) % d));
    (0..1u32 << d).filter(|r| r & !free == me & !free).collect()
}

/// The byte form of blocks of one length: [`allgather_to`] into a fresh buffer of `p · m`
/// bytes, returned as `p` views of it (so a block kept keeps them all). Was: [`allgather`]
/// and a join of each block's d parts, a copy of the whole result (~13 % of the samples as
/// `memmove` on the emulated 3-cube at 1 Gbit/s, 256 KiB; `docs/perf/analysis.md`).
pub(crate) fn allgather_landed(c: &Ctx<'_>, mine: Bytes) -> Result<Vec<Bytes>> {
    let (p, m) = (c.p() as usize, mine.len());
    let n = p.checked_mul(m).ok_or_else(|| too_long(p, m))?;
    let mut all = Vec::<u8>::with_capacity(n);
    // SAFETY: `all`'s capacity is `p · m` bytes and nothing else uses it until the call
    // returns; when it returns `Ok`, every byte of it has been written (`allgather_to`).
    unsafe {
        allgather_to(c, Own::From(&mine), all.as_mut_ptr())?;
        all.set_len(n);
    }
    let all = Bytes::from(all);
    Ok((0..p).map(|r| all.slice(r * m..(r + 1) * m)).collect())
}

/// A result of `p` blocks of `m` bytes that no buffer can hold.
fn too_long(p: usize, m: usize) -> crate::error::Error {
    crate::error::Error::InvalidArgument(format!(
        "allgather: {p} blocks of {m} bytes exceed the address space; pass shorter blocks"
    ))
}

/// [`allgather`] into the caller's memory: `out` holds `p · m` bytes (`m` = this node's
/// block, [`Own`]), block `r` at `r · m`. The messages are [`allgather`]'s, but each is
/// received straight into the places of its parts in `out` (a landing of many pieces,
/// `base/landing.rs`: over TCP read from the socket there) and a step sends the parts this
/// node holds from there (lent, `lend.rs`): no copy of the result at all, where joining the
/// parts and then copying the blocks into `out` made two. Every receive is posted before
/// the first send, in step order (the order each neighbour sends in), so a message that
/// comes before this node reaches its step lands too. On the emulated 3-cube at 1 Gbit/s,
/// 256 KiB: 6.7–7.1 ms a call, copying each message's parts into place 7.1–7.6, the join
/// and copy 7.4–7.8 (`docs/perf/analysis.md`).
///
/// # Safety
/// `out .. out + p · m` must be writable and not otherwise used until this returns.
pub(crate) unsafe fn allgather_to(c: &Ctx<'_>, mine: Own<'_>, out: *mut u8) -> Result<()> {
    let m = mine.len();
    if let Own::From(own) = mine {
        // SAFETY: this node's block of `out` (the caller's contract).
        unsafe { std::ptr::copy_nonoverlapping(own.as_ptr(), out.add(c.me as usize * m), m) };
    }
    // SAFETY: forwarded; block r of `m` bytes lies at r · m.
    unsafe { allgather_placed(c, &vec![m; c.p() as usize], out) }
}

/// [`allgather_to`] of blocks of the given lengths: block `r` has `sizes[r]` bytes and lies
/// at `sizes[..r]`'s sum in `out`, this node's already in its place (the all-port
/// all-reduce's second phase, which lands the reduced blocks in its result).
///
/// # Safety
/// `out .. out + sizes' sum` must be writable and not otherwise used until this returns,
/// this node's block written.
pub(crate) unsafe fn allgather_placed(c: &Ctx<'_>, sizes: &[usize], out: *mut u8) -> Result<()> {
    let d = c.k;
    let offsets = starts(sizes);
    let at = |r: u32, i: u32| {
        let b = bounds(sizes[r as usize], d, i);
        (offsets[r as usize] + b.start, b.len())
    };
    // SAFETY (throughout): every range lies in `out` (ranks < p, parts inside a block).
    // This node's block is there; each (block, part) range of another node is written
    // once, by its message's landing, and only then sent on (lent), so no range is
    // written while lent or read.
    let partner = |i: u32, j: u32| c.me ^ (1 << ((i + j) % d));
    // tables[j][i]: where the parts of step j's message of part i go, in the order it
    // carries them; they outlive every receive (dropped when this returns).
    let tables: Vec<Vec<Vec<(*mut u8, usize)>>> = (0..d)
        .map(|j| {
            (0..d)
                .map(|i| {
                    held(partner(i, j), d, i, j)
                        .into_iter()
                        .map(|r| {
                            let (off, len) = at(r, i);
                            (unsafe { out.add(off) }, len)
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    c.lend(|l| {
        let mut recvs = Vec::with_capacity((d * d) as usize);
        for (j, step) in (0..d).zip(&tables) {
            for (i, pieces) in (0..d).zip(step) {
                recvs.push((i, unsafe { c.irecv_pieces(partner(i, j), pieces)? }));
            }
        }
        let mut recvs = recvs.into_iter();
        for j in 0..d {
            let mut sends = Vec::with_capacity(d as usize);
            for i in 0..d {
                let parts: Vec<Bytes> = held(c.me, d, i, j)
                    .into_iter()
                    .map(|r| {
                        let (off, len) = at(r, i);
                        l.lend(unsafe { std::slice::from_raw_parts(out.add(off), len) })
                    })
                    .collect();
                sends.push(c.isend(partner(i, j), Parts::from(parts))?);
            }
            // The first error ends the call (a member that failed sends one failure notice
            // to each member, which one receive takes); the receives stay posted while this
            // node's sends are waited for, so that a partner's sends to it complete.
            let mut failed = None;
            for (i, r) in recvs.by_ref().take(d as usize) {
                match r.wait() {
                    Ok(None) => {}
                    Ok(Some(msg)) => {
                        let (from, n) = (partner(i, j), tables[j as usize][i as usize].len());
                        failed = Some(wrong_length(&msg, n, at(c.me, i).1, "allgather", from));
                        break;
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            for s in sends {
                s.wait()?;
            }
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::held;

    /// Part i's holdings double along dimensions i, i+1, … (mod d), in rank order.
    #[test]
    fn parts_are_held_along_rotated_dimensions() {
        assert_eq!(held(5, 3, 0, 0), [5]);
        assert_eq!(held(5, 3, 0, 2), [4, 5, 6, 7]);
        assert_eq!(held(5, 3, 1, 1), [5, 7]);
        assert_eq!(held(5, 3, 2, 2), [0, 1, 4, 5], "dimensions 2 and 0");
        assert_eq!(held(5, 3, 2, 3), (0..8).collect::<Vec<_>>());
    }
}
