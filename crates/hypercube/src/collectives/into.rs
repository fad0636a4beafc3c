//! The `*_into` forms of the typed collectives: MPI's buffer semantics. The caller passes
//! the memory the result goes into (`&mut [T]`, the length of which says how many elements
//! every member expects), so a loop that calls a collective again and again allocates
//! nothing: the received message buffers are copied once into the caller's memory, as the
//! `Vec`-returning forms copy them once into a new vector.
//!
//! A buffer of the wrong length on one member is an [`Error::InvalidArgument`] on that
//! member **after** it took part in the exchange, so that no other member waits for it;
//! the others fail too where what they receive does not fit.

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::allgather::Own;
use super::blocks::Unit;
use super::element::{decode_blocks_into, decode_into, encode, Op};
use super::pod::{as_bytes, as_bytes_mut, Pod};
use super::typed::equal_blocks;
use super::Subcube;
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// [`Subcube::bcast_slice`] into the caller's memory (`MPI_Bcast`): the root's `buf`
    /// is sent, every other member's `buf` is overwritten with it. Every member passes a
    /// `buf` of the same length.
    pub fn bcast_into<T: Pod>(&self, root: NodeId, buf: &mut [T]) -> Result<()> {
        Unit::of::<T>("bcast_into", None).during(|| {
            let at_root = self.node.mynode() == root;
            if super::typed::lands::<T>() {
                let bytes = as_bytes_mut(buf);
                let (out, len) = (bytes.as_mut_ptr(), bytes.len());
                // SAFETY: `buf` is borrowed mutably for the call; the root's is only read
                // (`data`), the others' only written (`out`).
                return unsafe {
                    let data = if at_root {
                        std::slice::from_raw_parts(out, len)
                    } else {
                        &[]
                    };
                    self.bcast_to(root, data, out, len)
                };
            }
            let bytes = if at_root { encode(buf) } else { Bytes::new() };
            let got = self.bcast(root, bytes, std::mem::size_of_val(buf))?;
            if !at_root {
                decode_into(&got, buf, "bcast_into")?;
            }
            Ok(())
        })
    }

    /// [`Subcube::scatter_slice`] into the caller's memory (`MPI_Scatter`): the root passes
    /// `out.len()` elements per member in `data` (`out.len() · size()` in all, in relative
    /// rank order; the others pass `&[]`), and every member's `out` receives its block.
    pub fn scatter_into<T: Pod>(&self, root: NodeId, data: &[T], out: &mut [T]) -> Result<()> {
        Unit::of::<T>("scatter_into", None).during(|| {
            let got = self.scatter_typed(root, data, out.len(), "scatter_into")?;
            decode_into(&got, out, "scatter_into")
        })
    }

    /// [`Subcube::gather_slice`] into the caller's memory (`MPI_Gather`): every member
    /// passes `data` of one common length; the root's `out` (`data.len() · size()`
    /// elements) receives them all in relative rank order. The others' `out` is not used
    /// (pass `&mut []`).
    pub fn gather_into<T: Pod>(&self, root: NodeId, data: &[T], out: &mut [T]) -> Result<()> {
        Unit::of::<T>("gather_into", Some("gatherv_slice")).during(|| {
            if let Some(blocks) = self.gather(root, encode(data))? {
                self.fits(out.len(), data.len() * blocks.len(), "gather_into")?;
                decode_blocks_into(&blocks, out, "gather_into")?;
            }
            Ok(())
        })
    }

    /// [`Subcube::allgather_slice`] into the caller's memory (`MPI_Allgather`): `out`
    /// (`data.len() · size()` elements) receives every member's `data`, in relative rank
    /// order.
    pub fn allgather_into<T: Pod>(&self, data: &[T], out: &mut [T]) -> Result<()> {
        Unit::of::<T>("allgather_into", Some("allgatherv_slice")).during(|| {
            if self.landable::<T>(data.len()) == Some(out.len()) {
                // SAFETY: `out` is borrowed mutably for the call, and is exactly
                // `size() · data.len()` elements.
                return unsafe {
                    self.allgather_to(Own::From(as_bytes(data)), as_bytes_mut(out).as_mut_ptr())
                };
            }
            let blocks = self.allgather(encode(data))?;
            self.fits(out.len(), data.len() * blocks.len(), "allgather_into")?;
            decode_blocks_into(&blocks, out, "allgather_into")
        })
    }

    /// [`Subcube::allgather_into`] with this member's block already in its place
    /// (`MPI_Allgather` with `MPI_IN_PLACE`): `buf` holds `size()` blocks of one length,
    /// this member's at its relative rank, and receives every other member's block in
    /// theirs. Where the blocks are received in place (blocks of 64 KiB or more over TCP, see
    /// [`Subcube::allgather_into`]) nothing is copied at all: this member's block is sent
    /// from `buf` as it lies.
    ///
    /// ```
    /// # hypercube::local::run_local(2, |node| {
    /// let cube = node.cube();
    /// let n = 3;
    /// let mut buf = vec![0u32; n * cube.size() as usize];
    /// let me = cube.rank() as usize;
    /// buf[me * n..(me + 1) * n].fill(me as u32 + 1);
    /// cube.allgather_in_place(&mut buf).unwrap();
    /// assert_eq!(buf, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]);
    /// # });
    /// ```
    #[doc(alias = "MPI_IN_PLACE")]
    pub fn allgather_in_place<T: Pod>(&self, buf: &mut [T]) -> Result<()> {
        Unit::of::<T>("allgather_in_place", Some("allgatherv_slice")).during(|| {
            self.split_check(buf.len(), "allgather_in_place")?;
            let p = self.size() as usize;
            let (n, me) = (buf.len() / p, self.rank() as usize);
            if self.landable::<T>(n) == Some(buf.len()) {
                let bytes = as_bytes_mut(buf);
                let own = bytes.len() / p;
                // SAFETY: `buf` is borrowed mutably for the call and holds exactly
                // `size()` blocks; this member's is there (the caller's promise).
                return unsafe { self.allgather_to(Own::InPlace(own), bytes.as_mut_ptr()) };
            }
            let blocks = self.allgather(encode(&buf[me * n..(me + 1) * n]))?;
            self.fits(buf.len(), n * blocks.len(), "allgather_in_place")?;
            decode_blocks_into(&blocks, buf, "allgather_in_place")
        })
    }

    /// [`Subcube::alltoall_slice`] into the caller's memory (`MPI_Alltoall`): `data` holds
    /// `size()` blocks of one length, block j going to relative rank j; `out` (as long as
    /// `data`) receives the blocks sent to this member, in relative rank order.
    pub fn alltoall_into<T: Pod>(&self, data: &[T], out: &mut [T]) -> Result<()> {
        Unit::of::<T>("alltoall_into", Some("alltoallv_slice")).during(|| {
            self.split_check(data.len(), "alltoall_into")?;
            let p = self.size() as usize;
            if self.landable::<T>(data.len()).is_some() && out.len() == data.len() {
                let m = std::mem::size_of_val(data) / p;
                // SAFETY: `out` is borrowed mutably for the call and as long as `data`.
                return unsafe {
                    self.alltoall_to(as_bytes(data), m, as_bytes_mut(out).as_mut_ptr())
                };
            }
            let blocks = equal_blocks(encode(data), p);
            let got = self.alltoall(&blocks)?;
            drop(blocks);
            self.fits(out.len(), data.len(), "alltoall_into")?;
            decode_blocks_into(&got, out, "alltoall_into")
        })
    }

    /// [`Subcube::reduce`] into the caller's memory (`MPI_Reduce`): the root's `out` (as
    /// long as `data`) receives the reduction; the others' `out` is not used (pass
    /// `&mut []`). The reduction is computed in the algorithm's own vector and copied.
    pub fn reduce_into<T: Pod>(
        &self,
        root: NodeId,
        data: &[T],
        out: &mut [T],
        op: Op<'_, T>,
    ) -> Result<()> {
        if let Some(r) = self.reduce(root, data, op)? {
            self.fits(out.len(), r.len(), "reduce_into")?;
            out.copy_from_slice(&r);
        }
        Ok(())
    }

    /// [`Subcube::allreduce`] into the caller's memory (`MPI_Allreduce`): `out` (as long
    /// as `data`) receives the reduction. With reduce-scatter + all-gather (the automatic
    /// choice for long vectors) the result lands in `out` as it arrives; with the other
    /// algorithms it is computed in the algorithm's own vector and copied.
    pub fn allreduce_into<T: Pod>(&self, data: &[T], out: &mut [T], op: Op<'_, T>) -> Result<()> {
        self.allreduce_to(data, out, op)
    }

    /// [`Subcube::reduce_scatter`] into the caller's memory (`MPI_Reduce_scatter_block`
    /// when `size()` divides `data.len()`): `out` receives this member's block of the
    /// reduction (elements `j·n/p .. (j+1)·n/p` for relative rank j, n = `data.len()`).
    pub fn reduce_scatter_into<T: Pod>(
        &self,
        data: &[T],
        out: &mut [T],
        op: Op<'_, T>,
    ) -> Result<()> {
        let r = self.reduce_scatter(data, op)?;
        self.fits(out.len(), r.len(), "reduce_scatter_into")?;
        out.copy_from_slice(&r);
        Ok(())
    }

    /// The caller's buffer holds `len` elements where the result has `need`.
    pub(crate) fn fits(&self, len: usize, need: usize, what: &str) -> Result<()> {
        if len != need {
            return Err(Error::InvalidArgument(format!(
                "{what}: out holds {len} elements but the result has {need}; pass a buffer of \
                 {need} elements (the call completed on every member, nothing was written)"
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::collectives::{Algorithm, Op};
    use crate::local::run_local;

    /// Every `*_into` form gives what its `Vec` form gives, on every algorithm that
    /// applies; a buffer of the wrong length is an error that hangs nobody.
    #[test]
    fn into_forms_match_vec_forms() {
        for alg in [
            Algorithm::Auto,
            Algorithm::Hypercube,
            Algorithm::Ring,
            Algorithm::Mesh,
        ] {
            run_local(2, move |node| {
                let me = node.mynode();
                let all = node.cube();
                let cube = all.with(alg);
                let p = 4;
                let mine: Vec<u32> = (0..12).map(|k| k * 10 + me).collect();
                let mut out = vec![0u32; 12 * p];
                if cube.allgather_into(&mine, &mut out).is_ok() {
                    assert_eq!(out, all.allgather_slice(&mine).unwrap());
                }
                let mut buf = vec![0u32; 12 * p];
                buf[me as usize * 12..][..12].copy_from_slice(&mine);
                if cube.allgather_in_place(&mut buf).is_ok() {
                    assert_eq!(buf, all.allgather_slice(&mine).unwrap());
                }
                assert!(cube.allgather_in_place(&mut [0u32; 6]).is_err());
                let mut out = vec![0u32; 12];
                if cube.alltoall_into(&mine, &mut out).is_ok() {
                    assert_eq!(out, all.alltoall_slice(&mine).unwrap());
                }
            });
        }
        run_local(2, |node| {
            let me = node.mynode();
            let cube = node.cube();
            let mine: Vec<f64> = (0..8).map(|k| f64::from(k * 10 + me)).collect();
            let mut buf = if me == 2 { mine.clone() } else { vec![0.0; 8] };
            cube.bcast_into(2, &mut buf).unwrap();
            assert_eq!(
                buf,
                (0..8).map(|k| f64::from(k * 10 + 2)).collect::<Vec<_>>()
            );
            let mut out = vec![0.0; 2];
            cube.scatter_into(1, &mine, &mut out).unwrap();
            assert_eq!(out, cube.scatter_slice(1, &mine, 2).unwrap());
            let mut out = if me == 3 { vec![0.0; 32] } else { Vec::new() };
            cube.gather_into(3, &mine, &mut out).unwrap();
            let want = cube.gather_slice(3, &mine).unwrap();
            if me == 3 {
                assert_eq!(Some(out), want);
            }
            let mut out = vec![0.0; 8];
            cube.allreduce_into(&mine, &mut out, Op::Sum).unwrap();
            assert_eq!(out, cube.allreduce(&mine, Op::Sum).unwrap());
            let mut out = if me == 0 { vec![0.0; 8] } else { Vec::new() };
            cube.reduce_into(0, &mine, &mut out, Op::Max).unwrap();
            let want = cube.reduce(0, &mine, Op::Max).unwrap();
            if me == 0 {
                assert_eq!(Some(out), want);
            }
            let mut out = vec![0.0; 2];
            cube.reduce_scatter_into(&mine, &mut out, Op::Sum).unwrap();
            assert_eq!(out, cube.reduce_scatter(&mine, Op::Sum).unwrap());
            // A buffer of the wrong length on one member: an error there, and no hang.
            let mut out = vec![0.0; if me == 1 { 31 } else { 32 }];
            let r = cube.allgather_into(&mine, &mut out);
            assert_eq!(r.is_err(), me == 1, "{r:?}");
            if let Err(e) = r {
                assert!(e.to_string().contains("out holds 31 elements"), "{e}");
            }
            // The cube is still usable afterwards.
            let mut buf = [me];
            cube.bcast_into(0, &mut buf).unwrap();
            assert_eq!(buf, [0]);
        });
    }
}
