//! One-to-all broadcast on the hypercube — Grama Alg. 4.1 (source 0) and Alg. 4.2 (any
//! source, by relabelling `virtual = id XOR source`); model time eq. 4.1:
//! `T = (t_s + t_w m) log p`.

use bytes::Bytes;

use crate::base::parts::Parts;
use crate::collectives::ctx::Ctx;
use crate::error::{Error, Result};

/// Broadcast `data` (meaningful at `root`, a relative rank) of `len` bytes.
pub(crate) fn bcast(c: &Ctx<'_>, root: u32, data: Bytes, len: usize) -> Result<Bytes> {
    tree(c, root, Parts::One(data), Some(len)).map(Parts::into_bytes)
}

/// [`bcast`] of a message whose length only the root knows (`broadcast/unsized_len.rs`): the
/// members take what comes. The root's message may be in parts (a head and the caller's
/// data, sent without joining them); every other member gets one buffer.
pub(crate) fn bcast_any_len(c: &Ctx<'_>, root: u32, data: Parts) -> Result<Parts> {
    tree(c, root, data, None)
}

/// Alg. 4.2; a received message of another length than `len` (if given) is an error.
fn tree(c: &Ctx<'_>, root: u32, data: Parts, len: Option<usize>) -> Result<Parts> {
    let v = c.me ^ root;
    let mut x = if c.me == root { Some(data) } else { None };
    for i in (0..c.k).rev() {
        let low = (1u32 << i) - 1; // mask of Alg. 4.2 line 6: the lower i bits
        if v & low != 0 {
            continue;
        }
        let partner = (v ^ (1 << i)) ^ root;
        if v & (1 << i) == 0 {
            if let Some(x) = &x {
                c.send(partner, x.clone())?;
            }
        } else {
            let got = c.recv(partner)?;
            if let Some(len) = len.filter(|&l| l != got.len()) {
                return Err(wrong_length(got.len(), len));
            }
            x = Some(Parts::One(got));
        }
    }
    x.ok_or_else(nothing_came)
}

/// A message of `got` bytes where every member passed `len`.
fn wrong_length(got: usize, len: usize) -> Error {
    Error::InvalidArgument(format!(
        "bcast: received {got} bytes but this node expects {len}; every member must pass the \
         same length"
    ))
}

/// No step brought this node the data (the members disagree on the root or the subcube).
fn nothing_came() -> Error {
    Error::InvalidArgument("bcast: no data reached this node".into())
}

/// [`bcast`] between the caller's memories: at `root` the `len` bytes of `data` are sent,
/// lent as they are (`lend.rs`); every other member receives them into `out`
/// (`node/landing.rs`: over TCP straight from the socket) and passes them on from there.
///
/// # Safety
/// At every member but the root, `out .. out + len` must be writable and not otherwise
/// used until this returns (the root's `out` is not used).
pub(crate) unsafe fn bcast_landing(
    c: &Ctx<'_>,
    root: u32,
    data: &[u8],
    out: *mut u8,
    len: usize,
) -> Result<()> {
    let v = c.me ^ root;
    c.lend(|l| {
        let mut x: Option<&[u8]> = (c.me == root).then_some(data);
        for i in (0..c.k).rev() {
            if v & ((1u32 << i) - 1) != 0 {
                continue;
            }
            let partner = (v ^ (1 << i)) ^ root;
            if v & (1 << i) == 0 {
                if let Some(x) = x {
                    c.send(partner, l.lend(x))?;
                }
            } else {
                // SAFETY: `out` is this member's (the caller's contract); the receive is
                // waited for here.
                if let Some(got) = unsafe { c.irecv_landing(partner, (out, len))? }.wait()? {
                    return Err(wrong_length(got.len(), len));
                }
                // SAFETY: written whole by the receive, and only read from now on.
                x = Some(unsafe { std::slice::from_raw_parts(out, len) });
            }
        }
        x.map(|_| ()).ok_or_else(nothing_came)
    })
}
