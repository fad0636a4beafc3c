//! One-to-all broadcast on **all-port** hardware: the message is cut into d parts, and
//! part i goes down a binomial tree (Grama Alg. 4.2) whose dimensions are taken in the
//! order i, i+1, …, i+d−1 (mod d). At every step the d parts cross d different
//! dimensions, so the root — and every node that holds parts — drives all of its links at
//! once: Johnsson & Ho's rotated spanning binomial trees ("Optimum broadcasting and
//! personalized communication in hypercubes", IEEE Trans. Computers 38(9), 1989; cited by
//! the Bhatt seed, §1).
//!
//! All-port time: `log p (d t_s + t_w m/d)` = `t_s (log p)² + t_w m` on the whole cube,
//! where Alg. 4.2 needs `(t_s + t_w m) log p`; the link bound is `t_w m/d` (reached only
//! by pipelining the parts, which this does not). One-port: `log p (d t_s + t_w m)`.

use bytes::{Bytes, BytesMut};

use crate::collectives::ctx::{bounds, Ctx};
use crate::error::{Error, Result};

/// Broadcast `data` (meaningful at `root`, a relative rank) of `len` bytes.
pub(crate) fn bcast(c: &Ctx<'_>, root: u32, data: Bytes, len: usize) -> Result<Bytes> {
    let d = c.k;
    if d == 0 {
        return Ok(data);
    }
    let v = c.me ^ root;
    if c.me == root && data.len() != len {
        return Err(Error::InvalidArgument(format!(
            "bcast: the root passed {} bytes for a broadcast of {len}",
            data.len()
        )));
    }
    let mut parts: Vec<Option<Bytes>> = (0..d)
        .map(|i| (c.me == root).then(|| data.slice(bounds(len, d, i))))
        .collect();
    for s in 0..d {
        let dim = |i: u32| (i + s) % d;
        // The dimensions part i has crossed before this step.
        let done = |i: u32| (0..s).fold(0u32, |m, t| m | 1 << ((i + t) % d));
        let mut recvs = Vec::new();
        let mut sends = Vec::new();
        for i in 0..d {
            let (mask, bit) = (done(i), 1u32 << dim(i));
            let partner = c.me ^ bit;
            if v & !mask == 0 {
                // This node holds part i: pass it across this step's dimension.
                let x = parts[i as usize].clone().ok_or_else(|| missing(i))?;
                sends.push(c.isend(partner, x)?);
            } else if v & !(mask | bit) == 0 {
                recvs.push((i, c.irecv(partner)?));
            }
        }
        for (i, r) in recvs {
            let got = r.wait()?.into_data();
            let want = bounds(len, d, i).len();
            if got.len() != want {
                return Err(Error::InvalidArgument(format!(
                    "bcast: received {} bytes of part {i} where {want} were expected; every \
                     member must pass the same length",
                    got.len()
                )));
            }
            parts[i as usize] = Some(got);
        }
        for w in sends {
            w.wait()?;
        }
    }
    if c.me == root {
        return Ok(data);
    }
    let mut out = BytesMut::with_capacity(len);
    for p in parts {
        out.extend_from_slice(&p.ok_or_else(|| {
            Error::InvalidArgument("bcast: a part did not reach this node".into())
        })?);
    }
    Ok(out.freeze())
}

/// A part this node should hold but does not (a bug, reported, not a panic).
pub(crate) fn missing(i: u32) -> Error {
    Error::InvalidArgument(format!(
        "all-port collective: part {i} is missing on a node that should pass it on (an \
         internal error)"
    ))
}
