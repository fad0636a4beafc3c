//! Circular q-shift on the Gray-code ring — Grama §4.6.2 (Figure 4.23): q is a sum of
//! powers of two; a 2^i-shift moves every packet between ring positions 2^i apart, which
//! are two hypercube links apart (one for i = 0), so it takes two neighbour steps (one).
//! Forward q or backward p − q, whichever takes fewer steps. Model time: `(t_s + t_w m)` per
//! step, at most eq. 4.11's `(t_s + t_w m)(2 log p − 1)` and, with both directions, at most
//! `(t_s + t_w m) log p`.

use bytes::Bytes;
use hypercube_topology::{ginv, gray};

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Neighbour steps of a forward shift by `q`: 1 for bit 0, 2 for every higher bit.
pub(crate) fn steps(q: u32) -> u32 {
    (q & 1) + 2 * (q >> 1).count_ones()
}

/// The data of ring position j goes to position j + q (mod p).
pub(crate) fn shift(c: &Ctx<'_>, data: Bytes, q: u32) -> Result<Bytes> {
    let p = c.p();
    let q = q % p;
    let (amount, forward) = if steps(p - q) < steps(q) {
        (p - q, false)
    } else {
        (q, true)
    };
    let mut data = data;
    for i in 0..c.k {
        let dist = 1u32 << i;
        if amount & dist == 0 {
            continue;
        }
        // Ring position pos sends to to(pos) and receives from from(pos).
        let to = |pos: u32| {
            if forward {
                (pos + dist) % p
            } else {
                (pos + p - dist) % p
            }
        };
        let from = |pos: u32| {
            if forward {
                (pos + p - dist) % p
            } else {
                (pos + dist) % p
            }
        };
        let pos = ginv(c.me);
        if i == 0 {
            data = c.sendrecv(gray(to(pos)), data, gray(from(pos)))?;
            continue;
        }
        // Two hops: first across the lower of the two differing bits, then the other.
        let mid = |pos: u32| {
            let a = gray(pos);
            let diff = a ^ gray(to(pos));
            a ^ (diff & diff.wrapping_neg())
        };
        // Step 1: to the intermediate node; receive the packets this node relays.
        let srcs: Vec<u32> = (0..p).filter(|&y| mid(y) == c.me).map(gray).collect();
        let reqs = srcs
            .iter()
            .map(|&s| c.irecv(s))
            .collect::<Result<Vec<_>>>()?;
        let sent = c.isend(mid(pos), data)?;
        let mut relay = Vec::with_capacity(srcs.len());
        for (src, r) in srcs.into_iter().zip(reqs) {
            relay.push((src, r.wait()?.into_data()));
        }
        sent.wait()?;
        // Step 2: relay them on; receive this node's packet from its source's intermediate.
        let fin = c.irecv(mid(from(pos)))?;
        for (src, packet) in relay {
            c.send(gray(to(ginv(src))), packet)?;
        }
        data = fin.wait()?.into_data();
    }
    Ok(data)
}
