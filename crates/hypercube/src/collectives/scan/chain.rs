//! Prefix sums along the chain of ranks 0 → 1 → … → p−1, pipelined in segments.
//!
//! Relative rank j receives the prefix `x_0 ⊕ … ⊕ x_{j-1}` from j − 1, one segment at a
//! time, combines it with its own segment and passes `x_0 ⊕ … ⊕ x_j` on to j + 1 before
//! it takes the next segment. This is the linear-array view of prefix sums (Grama §4.3
//! computes `s_k` on the node labelled k; §4.1.1/§4.2.1 treat the linear array) pipelined
//! as the book pipelines successive broadcasts on a ring (§4.2, the discussion after
//! eq. 4.4): with `S` segments of `m/S` bytes the model time is
//! `T = (p − 2 + S)(t_s + t_w m/S)` for p ≥ 2.
//!
//! Its point is the volume: the chain moves `m · Σ_j hamming(j, j+1)` bytes through the
//! links (e-cube routes; ≈ 2m(p − 1)), against `m p log p` for Alg. 4.9. When ranks share
//! fewer cores than there are ranks, the bytes are the time, and the selection
//! ([`crate::collectives::select`]) picks this algorithm for long vectors.

use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode, Op};
use crate::collectives::pod::Pod;
use crate::collectives::select::machine;
use crate::error::Result;

/// Inclusive (`x_0 ⊕ … ⊕ x_me`) or exclusive (`x_0 ⊕ … ⊕ x_{me-1}`, `None` at rank 0).
pub(crate) fn scan<T: Pod>(
    c: &Ctx<'_>,
    mut data: Vec<T>,
    op: Op<'_, T>,
    inclusive: bool,
) -> Result<Option<Vec<T>>> {
    let (p, me, n) = (c.p(), c.me, data.len());
    // S near-equal segments (of at most 64 KiB, one eager message each, but where ranks
    // share the cores: `Machine::chain_segments`), the S of the model time.
    let segs = machine().chain_segments(c.k, std::mem::size_of_val(&data[..])) as u32;
    let mut exclusive: Vec<T> = Vec::new();
    if !inclusive && me > 0 {
        exclusive.reserve_exact(n);
    }
    let mut sends = Vec::new();
    for s in 0..segs {
        let r = bounds(n, segs, s);
        if me > 0 {
            let got = c.recv(me - 1)?;
            check_len::<T>(&got, r.len(), "scan")?;
            if !inclusive {
                T::extend_from_wire(&got, &mut exclusive);
            }
            // The prefix of the lower ranks is the left operand.
            op.combine_bytes(&mut data[r.clone()], &got, false);
        }
        if me + 1 < p {
            sends.push(c.isend(me + 1, encode(&data[r]))?);
        }
    }
    for s in sends {
        s.wait()?;
    }
    Ok(if inclusive {
        Some(data)
    } else {
        (me > 0).then_some(exclusive)
    })
}
