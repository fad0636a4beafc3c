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

use crate::base::parts::Parts;
use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode_vec, Op};
use crate::collectives::pod::Pod;
use crate::collectives::reduce_scatter::hypercube::lost;
use crate::error::Result;

/// The whole vector `data` on every node → block `bounds(n, p, me)` of the reduction.
pub(crate) fn reduce_scatter<T: Pod>(c: &Ctx<'_>, data: &[T], op: Op<'_, T>) -> Result<Vec<T>> {
    let (n, p, d) = (data.len(), c.p(), c.k);
    if d == 0 {
        return Ok(data.to_vec());
    }
    // piece(j, i): part i of block j, as a range of `data`.
    let piece = |j: u32, i: u32| {
        let b = bounds(n, p, j);
        let r = bounds(b.len(), d, i);
        b.start + r.start..b.start + r.end
    };
    // acc[i][j]: the partial sum of piece (j, i) while this node holds it.
    let mut acc: Vec<Vec<Option<Vec<T>>>> = (0..d)
        .map(|i| (0..p).map(|j| Some(data[piece(j, i)].to_vec())).collect())
        .collect();
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
        let recvs = (0..d)
            .map(|i| c.irecv(c.me ^ (1 << dim(i))))
            .collect::<Result<Vec<_>>>()?;
        let mut sends = Vec::with_capacity(d as usize);
        for i in 0..d {
            let mut parts = Vec::new();
            for j in ids(i, false) {
                let v = acc[i as usize][j as usize].take().ok_or_else(|| lost(j))?;
                parts.push(encode_vec(v).0);
            }
            sends.push(c.isend(c.me ^ (1 << dim(i)), Parts::from(parts))?);
        }
        for (i, r) in (0..d).zip(recvs) {
            let keep = ids(i, true);
            let got = r.wait()?.into_data();
            let expected: usize = keep.iter().map(|&j| piece(j, i).len()).sum();
            check_len::<T>(&got, expected, "reduce_scatter")?;
            let partner = c.me ^ (1 << dim(i));
            let mut off = 0;
            for j in keep {
                let len = piece(j, i).len();
                let a = acc[i as usize][j as usize]
                    .as_mut()
                    .ok_or_else(|| lost(j))?;
                op.combine_bytes(
                    a,
                    &got[off * T::WIRE_SIZE..(off + len) * T::WIRE_SIZE],
                    partner > c.me,
                );
                off += len;
            }
        }
        for w in sends {
            w.wait()?;
        }
    }
    let mut out = Vec::with_capacity(bounds(n, p, c.me).len());
    for part in &mut acc {
        out.extend(part[c.me as usize].take().ok_or_else(|| lost(c.me))?);
    }
    Ok(out)
}
