//! All-to-all personalized communication on the Gray-code ring — Grama §4.5.1 (Figure
//! 4.18): every node sends its p-1 packets to the right as one message; each node keeps
//! the first packet of what it receives and forwards the rest. Model time eq. 4.7:
//! `T = (t_s + t_w m p/2)(p-1)`.

use bytes::Bytes;
use hypercube_topology::{ginv, gray};

use crate::collectives::blocks::{call_and_hint, concat};
use crate::collectives::ctx::Ctx;
use crate::error::{Error, Result};

/// The ring exchange among `members` (relative ranks in ring order; this node is
/// `members[at]`): `items[j]` (each `item_len` bytes) goes to `members[j]`; returns the
/// item from each member by ring index.
pub(crate) fn ring_exchange(
    c: &Ctx<'_>,
    members: &[u32],
    at: usize,
    items: &[Bytes],
    item_len: usize,
) -> Result<Vec<Bytes>> {
    let n = members.len();
    let right = members[(at + 1) % n];
    let left = members[(at + n - 1) % n];
    let mut out = vec![Bytes::new(); n];
    out[at] = items[at].clone();
    let ahead: Vec<Bytes> = (1..n).map(|j| items[(at + j) % n].clone()).collect();
    let mut msg = concat(&ahead);
    for i in 1..n {
        let got = c.sendrecv(right, msg, left)?;
        if got.len() != item_len * (n - i) {
            let (call, hint) = call_and_hint("alltoall");
            return Err(Error::InvalidArgument(format!(
                "{call}: received {} bytes from node {left} where {} packets of {item_len} \
                 bytes were expected; every member must pass blocks of one length{hint}",
                got.len(),
                n - i
            )));
        }
        out[(at + n - i) % n] = got.slice(..item_len);
        msg = got.slice(item_len..);
    }
    Ok(out)
}

/// `blocks[t]` goes to relative rank t; returns the block from each relative rank.
pub(crate) fn alltoall(c: &Ctx<'_>, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
    let p = c.p();
    let items: Vec<Bytes> = (0..p)
        .map(|pos| blocks[gray(pos) as usize].clone())
        .collect();
    let got = ring_exchange(
        c,
        &(0..p).map(gray).collect::<Vec<_>>(),
        ginv(c.me) as usize,
        &items,
        blocks[0].len(),
    )?;
    let mut out = vec![Bytes::new(); p as usize];
    for (pos, b) in got.into_iter().enumerate() {
        out[gray(pos as u32) as usize] = b;
    }
    Ok(out)
}
