//! Circular q-shift (Grama §4.6; `MPI_Sendrecv` on a periodic `MPI_Cart_shift`).

mod ecube;
pub(crate) mod gray_ring;

use bytes::Bytes;

use super::ctx::Ctx;
use super::select::{choose, not_implemented, Algorithm, Operation};
use super::shift_order::ShiftOrder;
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// Circular q-shift: every member passes `data` (all of one length m); the data of the
    /// node at index x in `order` goes to index x + q (mod p); returns what arrived.
    /// Negative q shifts the other way. Direct e-cube sends (eq. 4.12) or, in
    /// [`ShiftOrder::Ring`] only, power-of-two shifts on the ring (eq. 4.11).
    pub fn shift(&self, data: Bytes, q: i64, order: ShiftOrder) -> Result<Bytes> {
        super::ctx::check_dim(self.node, self.dim)?;
        let p = self.size() as i64;
        let qn = q.rem_euclid(p) as u32;
        // Not `Subcube::start`: the order is checked before the call draws its tag.
        let mut alg = choose(Operation::Shift, self.alg, self.dim, data.len(), true)?;
        if alg == Algorithm::GrayRing && order != ShiftOrder::Ring && self.alg == Algorithm::Auto {
            // The automatic choice (GrayRing costs nothing at p = 1) must fit the order.
            alg = Algorithm::Ecube;
        }
        if alg == Algorithm::GrayRing && order != ShiftOrder::Ring {
            return Err(Error::InvalidArgument(
                "shift: the GrayRing algorithm shifts along the ring order only".into(),
            ));
        }
        let c = Ctx::new(self.node, self.dim)?.variant(alg);
        c.guard(match alg {
            Algorithm::Ecube => ecube::shift(&c, data, qn, order),
            Algorithm::GrayRing => gray_ring::shift(&c, data, qn),
            other => Err(not_implemented(Operation::Shift, other)),
        })
    }
}
