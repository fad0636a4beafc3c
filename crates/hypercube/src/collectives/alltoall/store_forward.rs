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
    let mut out = vec![Bytes::new(); p as usize];
    out[c.me as usize] = blocks[c.me as usize].clone();
    // Packets (source, destination, data) still to pass on. Before step i a node L holds
    // the packets whose destination agrees with L below bit i and whose source agrees with
    // L from bit i up; those for L itself are in `out`.
    let mut held: Vec<Packet> = (0..p)
        .filter(|&t| t != c.me)
        .map(|t| (c.me, t, blocks[t as usize].clone()))
        .collect();
    for i in 0..c.k {
        let partner = c.me ^ (1u32 << i);
        let (send, keep) = split(c, i, held);
        let keys = incoming(c, i);
        let got = c.sendrecv(partner, pack(&send, Layout::Equal), partner)?;
        let ids = vec![0u32; keys.len()];
        let got = unpack_equal(got, &ids, Layout::Equal, "alltoall", (partner, own))?;
        held = keep;
        for ((s, t), b) in keys.into_iter().zip(got) {
            if t == c.me {
                out[s as usize] = b;
            } else {
                held.push((s, t, b));
            }
        }
    }
    Ok(out)
}

/// A packet: its source, its destination (relative ranks) and its data.
type Packet = (u32, u32, Bytes);

/// Step `i` splits what this node holds: the data of the packets that cross bit i, in the
/// order of the message ([`incoming`] at the partner), and the packets that stay.
fn split(c: &Ctx<'_>, i: u32, held: Vec<Packet>) -> (Vec<Bytes>, Vec<Packet>) {
    let bit = 1u32 << i;
    let (mut send, keep): (Vec<_>, Vec<_>) = held
        .into_iter()
        .partition(|(_, t, _)| t & bit != c.me & bit);
    let partner = c.me ^ bit;
    send.sort_unstable_by_key(|&(s, t, _)| (t != partner, s, t));
    (send.into_iter().map(|(_, _, b)| b).collect(), keep)
}

/// The (source, destination) of the packets that step `i` brings this node, in the order
/// of the message: from the partner's side of bit i, for destinations that agree with this
/// node below bit i and in bit i. First those for this node — from the `2^i` sources
/// `first ..` in order, where `first` is the partner with its low `i` bits cleared, so
/// that they are one range of the result — then the ones it passes on, by (source,
/// destination).
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
    keys.sort_unstable_by_key(|&(s, t)| (t != c.me, s, t));
    keys
}

/// [`alltoall`] between the caller's memories: block t of `data` (`m` bytes each) goes to
/// relative rank t, the first step's lent as they are (`lend.rs`). Each step's message
/// lands where its blocks go (`node/landing.rs`): the `2^i` blocks for this node — the
/// message's first part ([`incoming`]) — in `out` where they belong, the ones it passes on
/// in a buffer of the step's own, from which a later step sends them. Only this node's own
/// block is copied. Returns a message of another length (nothing written) with its
/// sender, for the caller to name.
///
/// # Safety
/// `out .. out + p · m` must be writable and not otherwise used until this returns.
pub(crate) unsafe fn alltoall_landing(
    c: &Ctx<'_>,
    data: &[u8],
    m: usize,
    out: *mut u8,
) -> Result<()> {
    let p = c.p();
    c.lend(|l| {
        let mut held: Vec<Packet> = (0..p)
            .filter(|&t| t != c.me)
            .map(|t| (c.me, t, l.lend(&data[t as usize * m..(t as usize + 1) * m])))
            .collect();
        for i in 0..c.k {
            let bit = 1u32 << i;
            let partner = c.me ^ bit;
            let first = (partner & !(bit - 1)) as usize;
            let (send, keep) = split(c, i, held);
            // The message's blocks after those for this node: the (p/2 − 2^i) it passes on.
            let rest_len = (p / 2 - bit) as usize * m;
            let mut rest: Vec<u8> = Vec::with_capacity(rest_len);
            let head = (
                // SAFETY: blocks `first .. first + 2^i` of `out` (the caller's contract).
                unsafe { out.add(first * m) },
                bit as usize * m,
            );
            // SAFETY: `head` is written by this receive only (sources across bit i, which
            // no other step brings), `rest`'s capacity by it only; it is waited for (or
            // dropped, on an error) before either is used.
            let r = unsafe { c.irecv_split(partner, head, (rest.as_mut_ptr(), rest_len))? };
            let s = c.isend(partner, pack(&send, Layout::Equal))?;
            drop(send);
            if i == 0 {
                // SAFETY: block `me` of `out`, which no receive writes.
                unsafe { super::copy_block(data, out, c.me as usize, m) };
            }
            let got = r.wait();
            s.wait()?;
            if let Some(b) = got? {
                return Err(super::wrong_block(partner, &b, m));
            }
            // SAFETY: the receive wrote all `rest_len` bytes (the message had exactly the
            // named length, `CallLanding::wait`), within the capacity.
            unsafe { rest.set_len(rest_len) };
            let rest = Bytes::from(rest);
            held = keep;
            let passed = incoming(c, i).into_iter().skip(bit as usize);
            held.extend(
                passed
                    .enumerate()
                    .map(|(j, (s, t))| (s, t, rest.slice(j * m..(j + 1) * m))),
            );
        }
        if c.k == 0 {
            // A subcube of one member: its own block.
            // SAFETY: block 0 of `out` (the caller's contract).
            unsafe { super::copy_block(data, out, 0, m) };
        }
        Ok(())
    })
}
