//! Prefix sums on the hypercube — Grama Alg. 4.9 (the all-reduce pattern, adding to the
//! result only what comes from lower ranks); model time as eq. 4.5:
//! `T = (t_s + t_w m) log p`. Incoming partial sums from lower ranks are the left operand,
//! so a non-commutative ⊕ is combined in rank order.
//!
//! As the book notes under Fig. 4.13, some received messages do not contribute to the
//! result. In the last step the outgoing buffer is not needed any more, so the lower node
//! of each pair only sends and the upper one only receives: the last step moves half the
//! bytes and saves a combine pass (at p = 2 the whole scan is one one-way message).

use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, decode, encode, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// Inclusive (`x_0 ⊕ … ⊕ x_me`) or exclusive (`x_0 ⊕ … ⊕ x_{me-1}`, `None` at rank 0).
pub(crate) fn scan<T: Pod>(
    c: &Ctx<'_>,
    data: Vec<T>,
    op: Op<'_, T>,
    inclusive: bool,
) -> Result<Option<Vec<T>>> {
    let mut result = inclusive.then(|| data.clone());
    let mut msg = data;
    for i in 0..c.k {
        let partner = c.me ^ (1 << i);
        let last = i + 1 == c.k;
        if last && partner > c.me {
            c.send(partner, encode(&msg))?;
            break;
        }
        let got = if last {
            c.recv(partner)?
        } else {
            c.sendrecv(partner, encode(&msg), partner)?
        };
        check_len::<T>(&got, msg.len(), "scan")?;
        if partner < c.me {
            if !last {
                op.combine_bytes(&mut msg, &got, false);
            }
            result = Some(match result {
                Some(mut r) => {
                    op.combine_bytes(&mut r, &got, false);
                    r
                }
                None => decode(&got, Some(msg.len()), "scan")?,
            });
        } else {
            op.combine_bytes(&mut msg, &got, true);
        }
    }
    Ok(result)
}
