//! All-to-one reduction on **all-port** hardware: the broadcast of `broadcast/allport.rs`
//! run backwards. The vector is cut into d parts, and part i is reduced up a binomial tree
//! (Grama Alg. 4.3) whose dimensions are taken in the order i+d−1, …, i+1, i (mod d), so
//! that at every step the d parts cross d different links of every node (Johnsson & Ho's
//! rotated spanning binomial trees, "Optimum broadcasting and personalized communication
//! in hypercubes", IEEE Trans. Computers 38(9), 1989; cited by the Bhatt seed, §1).
//!
//! All-port time `log p (d t_s + t_w m/d)`, where Alg. 4.3 needs `(t_s + t_w m) log p`.
//! The rotated trees combine partial results out of rank order: a commutative ⊕ only.

use crate::collectives::broadcast::allport::missing;
use crate::collectives::ctx::{bounds, Ctx};
use crate::collectives::element::{check_len, encode, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// Every node's `data` → the reduction at relative rank `root`.
pub(crate) fn reduce<T: Pod>(
    c: &Ctx<'_>,
    root: u32,
    data: &[T],
    op: Op<'_, T>,
) -> Result<Option<Vec<T>>> {
    let (n, d) = (data.len(), c.k);
    if d == 0 {
        return Ok(Some(data.to_vec()));
    }
    let v = c.me ^ root;
    // acc[i]: this node's partial result of part i, while it still has it.
    let mut acc: Vec<Option<Vec<T>>> = (0..d)
        .map(|i| Some(data[bounds(n, d, i)].to_vec()))
        .collect();
    for s in (0..d).rev() {
        let dim = |i: u32| (i + s) % d;
        // The dimensions part i crosses after this step (the broadcast's earlier ones).
        let before = |i: u32| (0..s).fold(0u32, |m, t| m | 1 << ((i + t) % d));
        let mut recvs = Vec::new();
        let mut sends = Vec::new();
        for i in 0..d {
            let (mask, bit) = (before(i), 1u32 << dim(i));
            let partner = c.me ^ bit;
            if v & !(mask | bit) != 0 {
                continue; // part i has left this node already
            }
            if v & bit != 0 {
                let x = acc[i as usize].take().ok_or_else(|| missing(i))?;
                sends.push(c.isend(partner, encode(&x))?);
            } else {
                recvs.push((i, c.irecv(partner)?));
            }
        }
        for (i, r) in recvs {
            let got = r.wait()?.into_data();
            if let Some(a) = acc[i as usize].as_mut() {
                check_len::<T>(&got, a.len(), "reduce")?;
                op.combine_bytes(a, &got, true);
            }
        }
        for w in sends {
            w.wait()?;
        }
    }
    if c.me != root {
        return Ok(None);
    }
    Ok(Some(acc.into_iter().flatten().flatten().collect()))
}
