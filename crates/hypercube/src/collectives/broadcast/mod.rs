//! One-to-all broadcast (`MPI_Bcast`, Grama §4.1 and §4.7.1).

pub(crate) mod allport;
pub(crate) mod hypercube;
mod scatter_allgather;
mod unsized_len;

pub(crate) use unsized_len::Head;

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::ctx::{rel_root, Ctx};
use super::select::{not_implemented, Algorithm, Operation};
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// One-to-all broadcast: every member returns the `len_bytes` bytes that `root` passed
    /// as `data` (other members' `data` is ignored; pass `Bytes::new()`). Every member must
    /// pass the same `root` and `len_bytes`, which selects the algorithm: Alg. 4.2
    /// (eq. 4.1) or scatter + all-to-all broadcast (eq. 4.13).
    #[doc(alias = "MPI_Bcast")]
    pub fn bcast(&self, root: NodeId, data: Bytes, len_bytes: usize) -> Result<Bytes> {
        let r = rel_root(self.node, self.dim, root)?;
        if self.node.mynode() == root && data.len() != len_bytes {
            return Err(Error::InvalidArgument(format!(
                "bcast: the root passed {} bytes but len_bytes = {len_bytes}",
                data.len()
            )));
        }
        let (alg, c) = self.start(Operation::Bcast, len_bytes, true)?;
        bcast_bytes(alg, &c, r, data, len_bytes)
    }

    /// [`Subcube::bcast`] between the caller's memories (the typed forms' core): the root
    /// passes its `len` bytes as `data` (its `out` is not used), every other member receives
    /// them into `out`. With the hypercube algorithm and at least
    /// [`BCAST_LAND_FROM`](super::BCAST_LAND_FROM) bytes the message lands in `out` and is passed on
    /// from there (`hypercube::bcast_landing`);
    /// otherwise the byte form's result is copied into `out`.
    ///
    /// # Safety
    /// At every member but the root, `out .. out + len` must be writable and not otherwise
    /// used until this returns; when it returns `Ok`, every byte of it has been written.
    pub(crate) unsafe fn bcast_to(
        &self,
        root: NodeId,
        data: &[u8],
        out: *mut u8,
        len: usize,
    ) -> Result<()> {
        let r = rel_root(self.node, self.dim, root)?;
        let at_root = self.node.mynode() == root;
        if at_root && data.len() != len {
            return Err(Error::InvalidArgument(format!(
                "bcast: the root passed {} bytes but len_bytes = {len}",
                data.len()
            )));
        }
        let (alg, c) = self.start(Operation::Bcast, len, true)?;
        if alg == Algorithm::Hypercube && len >= super::BCAST_LAND_FROM {
            // SAFETY: forwarded.
            return c.guard(unsafe { hypercube::bcast_landing(&c, r, data, out, len) });
        }
        let bytes = if at_root {
            Bytes::copy_from_slice(data)
        } else {
            Bytes::new()
        };
        let got = bcast_bytes(alg, &c, r, bytes, len)?;
        if !at_root {
            // SAFETY: `got` is `len` bytes (checked by the algorithms), `out` this member's.
            unsafe { std::ptr::copy_nonoverlapping(got.as_ptr(), out, len) };
        }
        Ok(())
    }
}

/// The byte form's algorithms.
fn bcast_bytes(alg: Algorithm, c: &Ctx<'_>, r: u32, data: Bytes, len: usize) -> Result<Bytes> {
    c.guard(match alg {
        Algorithm::Hypercube => hypercube::bcast(c, r, data, len),
        Algorithm::AllPort => allport::bcast(c, r, data, len),
        Algorithm::ScatterAllgather => scatter_allgather::bcast(c, r, data, len),
        other => Err(not_implemented(Operation::Bcast, other)),
    })
}
