//! Circular q-shift sent directly — Grama §4.6.2: with e-cube routing, every shift's
//! messages have congestion-free paths (Problem 4.22), so each node sends once. Model time
//! eq. 4.12: `T = t_s + t_w m` (over TCP the message is stored and forwarded at each hop
//! of its route, at most log p − γ(q) of them).

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::collectives::shift_order::ShiftOrder;
use crate::error::Result;

/// The data of index x goes to index x + q (mod p) in `order`.
pub(crate) fn shift(c: &Ctx<'_>, data: Bytes, q: u32, order: ShiftOrder) -> Result<Bytes> {
    if q == 0 {
        return Ok(data);
    }
    let p = c.p();
    let x = order.index(c.me);
    let dest = order.node((x + q) % p);
    let src = order.node((x + p - q) % p);
    c.sendrecv(dest, data, src)
}
