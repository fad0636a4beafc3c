//! All-to-all personalized communication in log p store-and-forward exchanges — Grama
//! §4.5.3 (Figure 4.20): at step i every node sends, as one message, the p/2 packets it
//! holds whose destination differs from it in bit i. Model time eq. 4.9:
//! `T = (t_s + t_w m p/2) log p`.

use bytes::Bytes;

use crate::collectives::blocks::{pack, unpack_equal, Layout};
use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// `blocks[t]` goes to relative rank t; returns the block from each relative rank.
pub(crate) fn alltoall(c: &Ctx<'_>, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
    let p = c.p();
    // Blocks of equal length everywhere (the caller checked this node's own).
    let own = blocks.first().map_or(0, Bytes::len);
    // Packets (source, destination, data), kept sorted by (source, destination). Before
    // step i a node L holds the packets whose destination agrees with L below bit i and
    // whose source agrees with L from bit i up.
    let mut held: Vec<Packet> = (0..p)
        .map(|t| (c.me, t, blocks[t as usize].clone()))
        .collect();
    for i in 0..c.k {
        held = step(c, i, held, own)?;
    }
    let mut out = vec![Bytes::new(); p as usize];
    for (s, _, b) in held {
        out[s as usize] = b;
    }
    Ok(out)
}

/// A packet: its source, its destination (relative ranks) and its data.
type Packet = (u32, u32, Bytes);

/// Step `i` splits what this node holds: the data of the packets that cross bit i (in
/// order), and the packets that stay.
fn split(c: &Ctx<'_>, i: u32, held: Vec<Packet>) -> (Vec<Bytes>, Vec<Packet>) {
    let bit = 1u32 << i;
    let (send, keep): (Vec<_>, Vec<_>) = held
        .into_iter()
        .partition(|(_, t, _)| t & bit != c.me & bit);
    (send.into_iter().map(|(_, _, b)| b).collect(), keep)
}

/// Step `i`: send the partner across bit i the packets for its side, receive its packets
/// for this side (each `own` bytes), and return what this node then holds, sorted by
/// (source, destination).
fn step(c: &Ctx<'_>, i: u32, held: Vec<Packet>, own: usize) -> Result<Vec<Packet>> {
    let partner = c.me ^ (1u32 << i);
    let (send, mut held) = split(c, i, held);
    let keys = incoming(c, i);
    let got = c.sendrecv(partner, pack(&send, Layout::Equal), partner)?;
    let ids = vec![0u32; keys.len()];
    let got = unpack_equal(got, &ids, Layout::Equal, "alltoall", (partner, own))?;
    held.extend(keys.into_iter().zip(got).map(|((s, t), b)| (s, t, b)));
    held.sort_unstable_by_key(|(s, t, _)| (*s, *t));
    Ok(held)
}

/// The (source, destination) of the packets that step `i` brings this node, in the order
/// of the message: from the partner's side of bit i, for destinations that agree with this
/// node below bit i and in bit i.
fn incoming(c: &Ctx<'_>, i: u32) -> Vec<(u32, u32)> {
    let (p, bit) = (c.p(), 1u32 << i);
    let (low, partner) = (bit - 1, c.me ^ bit);
    let mut keys: Vec<(u32, u32)> = Vec::with_capacity(p as usize / 2);
    for lo in 0..bit {
        let s = (partner & !low) | lo;
        for hi in 0..(p >> i) {
            let t = (c.me & low) | (hi << i);
            if t & bit == c.me & bit {
                keys.push((s, t));
            }
        }
    }
    keys.sort_unstable();
    keys
}

/// [`alltoall`] between the caller's memories: block t of `data` (`m` bytes each) goes to
/// relative rank t, the first step's lent as they are (`lend.rs`); the last step's message
/// — the p/2 blocks for this node from the half of the ranks across the top dimension, in
/// rank order — lands in `out` where they belong (`node/landing.rs`), and only the blocks
/// kept or received before (this node's own among them) are copied into `out`. Returns a
/// message of another length (nothing written) with its sender, for the caller to name.
///
/// # Safety
/// `out .. out + p · m` must be writable and not otherwise used until this returns.
pub(crate) unsafe fn alltoall_landing(
    c: &Ctx<'_>,
    data: &[u8],
    m: usize,
    out: *mut u8,
) -> Result<Option<(u32, Bytes)>> {
    let p = c.p();
    crate::collectives::lend::lend(&|| c.release_lent(), |l| {
        let Some(last) = c.k.checked_sub(1) else {
            // A subcube of one member: its own block.
            // SAFETY: block 0 of `out` (the caller's contract).
            unsafe { super::copy_block(data, out, 0, m) };
            return Ok(None);
        };
        let mut held: Vec<Packet> = (0..p)
            .map(|t| (c.me, t, l.lend(&data[t as usize * m..(t as usize + 1) * m])))
            .collect();
        for i in 0..last {
            held = step(c, i, held, m)?;
        }
        // The last step: every block that comes is for this node, from the ranks
        // `first ..` (those across the top bit, in order).
        let bit = 1u32 << last;
        let partner = c.me ^ bit;
        let first = (partner & !(bit - 1)) as usize;
        let (send, held) = split(c, last, held);
        // SAFETY: blocks `first .. first + bit` of `out`, written by this receive only; it
        // is waited for (or dropped, on an error) before this returns.
        let r = unsafe { c.irecv_landing(partner, (out.add(first * m), bit as usize * m))? };
        let s = c.isend(partner, pack(&send, Layout::Equal))?;
        drop(send);
        for (src, _, b) in &held {
            // SAFETY: block `src` of `out`: a source this side of the top bit, outside the
            // range the receive writes.
            unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), out.add(*src as usize * m), m) };
        }
        let got = r.wait();
        s.wait()?;
        Ok(got?.map(|b| (partner, b)))
    })
}
