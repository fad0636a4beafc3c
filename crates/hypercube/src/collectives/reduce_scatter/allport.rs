//! All-to-all reduction on **all-port** hardware: the reverse of `allgather/allport.rs`.
//! Every block is cut into d parts, and part i runs Grama's Alg. 4.8 (recursive halving)
//! with its dimension order rotated by i — dimensions i, i+1, …, i+d−1 (mod d) — so that
//! at every step the d parts use d different links of every node (Johnsson & Ho's rotated
//! spanning binomial trees, "Optimum broadcasting and personalized communication in
//! hypercubes", IEEE Trans. Computers 38(9), 1989; cited by the Bhatt seed, §1).
//!
//! Step s moves `2^(d−1−s)` pieces of `m/(p d)` bytes over each link: the all-port time is
//! `t_s (log p)² + t_w (m/p)(p − 1)/d`, the link bound, where Alg. 4.8 needs
//! `t_w (m/p)(p − 1)`. The rotated orders combine the terms out of rank order, so this
//! needs a commutative ⊕ (the choice and an explicit request check it).

use bytes::Bytes;

use crate::base::parts::Parts;
use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode_vec, Op};
use crate::collectives::lend::Lender;
use crate::collectives::pod::Pod;
use crate::collectives::reduce_scatter::hypercube::lost;
use crate::error::Result;

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
///
/// Copies: the first step sends its pieces straight from `data`, lent to the transport
/// ([`Ctx::lend`], as `hypercube.rs` does), and writes `mine ⊕ received` for each piece it
/// keeps into a vector of its own; later steps send those vectors as they are and combine
/// into them. (A first version copied all of `data` into the pieces' vectors before the
/// first step.)
pub(crate) fn reduce_scatter<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    if c.k == 0 {
        return Ok(data.to_vec());
    }
    c.lend(|lender| rotated(c, data, op, lender))
}

/// The d rotated halvings, the first step's pieces lent from `data`.
fn rotated<'a, T: Pod>(
    c: &Ctx<'_>,
    data: &'a [T],
    op: Op<'_, T>,
    lender: &Lender<'a>,
) -> Result<Vec<T>> {
    let (n, p, d) = (data.len(), c.p(), c.k);
    // piece(j, i): part i of block j, as a range of `data`.
    let piece = |j: u32, i: u32| {
        let b = bounds(n, p, j);
        let r = bounds(b.len(), d, i);
        b.start + r.start..b.start + r.end
    };
    // acc[i][j]: the partial sum of piece (j, i) while this node holds it (`None` before
    // the first step: still this node's own values, in `data`).
    let mut acc: Vec<Vec<Option<Vec<T>>>> =
        (0..d).map(|_| (0..p).map(|_| None).collect()).collect();
    for s in 0..d {
        let dim = |i: u32| (i + s) % d;
        // The pieces of part i still held: blocks that agree with this node on the
        // dimensions part i has already halved over.
        let done = |i: u32| (0..s).fold(0u32, |m, t| m | 1 << ((i + t) % d));
        let ids = |i: u32, keep: bool| -> Vec<u32> {
            let (mask, bit) = (done(i), 1u32 << dim(i));
            (0..p)
                .filter(|j| j & mask == c.me & mask && ((j & bit) == (c.me & bit)) == keep)
                .collect()
        };
        // Every receive takes a failure notice in place of its message, the first step's
        // too: a member whose length made it choose another algorithm (the automatic
        // choice prices each member's own length) never sends it (`collectives/ctx.rs`).
        let recvs = (0..d)
            .map(|i| c.irecv(c.me ^ (1 << dim(i))))
            .collect::<Result<Vec<_>>>()?;
        let mut sends = Vec::with_capacity(d as usize);
        for i in 0..d {
            let mut parts: Vec<Bytes> = Vec::new();
            for j in ids(i, false) {
                parts.push(match acc[i as usize][j as usize].take() {
                    Some(v) => encode_vec(v).0,
                    None if s == 0 => lender.lend_elems(&data[piece(j, i)]),
                    None => return Err(lost(j)),
                });
            }
            sends.push(c.isend(c.me ^ (1 << dim(i)), Parts::from(parts))?);
        }
        // In the first step every message is taken before an error returns (a lent one
        // left unreceived would keep its sender waiting); later, the first error returns.
        // A failure notice returns at once in any step: this member has left the call, no
        // other receive of it can complete, and what arrives of it, lent or not, is
        // dropped (`Ctx::has_left`).
        let mut failed = None;
        for (i, r) in (0..d).zip(recvs) {
            let keep = ids(i, true);
            let expected: usize = keep.iter().map(|&j| piece(j, i).len()).sum();
            let got = match r.wait().and_then(|m| {
                let got = m.into_data();
                check_len::<T>(&got, expected, "reduce_scatter").map(|()| got)
            }) {
                Ok(got) => got,
                Err(e) if s == 0 && !c.has_left() => {
                    failed.get_or_insert(e);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let partner = c.me ^ (1 << dim(i));
            let mut off = 0;
            for j in keep {
                let range = piece(j, i);
                let len = range.len();
                let theirs = &got[off * T::WIRE_SIZE..(off + len) * T::WIRE_SIZE];
                let slot = &mut acc[i as usize][j as usize];
                match slot {
                    Some(a) => op.combine_bytes(a, theirs, partner > c.me),
                    None if s == 0 => {
                        let mut v = Vec::with_capacity(len);
                        op.combine_into(&mut v, &data[range], theirs, partner > c.me);
                        *slot = Some(v);
                    }
                    None => return Err(lost(j)),
                }
                off += len;
            }
        }
        for w in sends {
            w.wait()?;
        }
        if let Some(e) = failed {
            return Err(e);
        }
    }
    let mut out = Vec::with_capacity(bounds(n, p, c.me).len());
    for part in &mut acc {
        out.extend(part[c.me as usize].take().ok_or_else(|| lost(c.me))?);
    }
    Ok(out)
}
