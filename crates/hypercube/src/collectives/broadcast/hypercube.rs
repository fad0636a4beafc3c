//! One-to-all broadcast on the hypercube — Grama Alg. 4.1 (source 0) and Alg. 4.2 (any
//! source, by relabelling `virtual = id XOR source`); model time eq. 4.1:
//! `T = (t_s + t_w m) log p`.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::{Error, Result};

/// Broadcast `data` (meaningful at `root`, a relative rank) of `len` bytes.
pub(crate) fn bcast(c: &Ctx<'_>, root: u32, data: Bytes, len: usize) -> Result<Bytes> {
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
            if got.len() != len {
                return Err(Error::InvalidArgument(format!(
                    "bcast: received {} bytes but this node expects {len}; every member must \
                     pass the same length",
                    got.len()
                )));
            }
            x = Some(got);
        }
    }
    x.ok_or_else(|| Error::InvalidArgument("bcast: no data reached this node".into()))
}
