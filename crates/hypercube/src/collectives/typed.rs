//! Typed forms of the data-moving collectives: slices of plain data ([`Pod`]) in, vectors
//! out. Each calls the byte form — so every algorithm of the byte form applies, chosen the
//! same way — and builds its result vector straight from the received message buffers
//! (one copy out, which the byte form's caller pays too when it turns bytes into numbers).
//!
//! On the way in, a `*_slice` form copies the borrowed slice once into a message buffer:
//! the transport may keep the bytes after the call returns (an eager send still queued on
//! a socket; over the in-process transport, the receiver's result itself), so a borrowed
//! slice is never exposed. The `*_vec` forms (`bcast_vec`, `allgather_vec`,
//! `alltoall_vec`) take an owned vector instead and send its memory as it is (no copy on
//! little-endian targets), keeping it alive for as long as any message refers to it.
//! Counts are in elements.
//!
//! What a mismatch between members is caught as: lengths are checked in bytes, so another
//! number of elements, or elements of another size, is an [`Error::InvalidArgument`]; two
//! `Pod` types of the **same size** (`u64` here, `f64` there) are not told apart — the
//! bytes are read as the receiver's type. Carrying a type fingerprint would cost an extra
//! part per message and a check per block; the serde forms carry one
//! ([`Error::TypeMismatch`]).

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::allgather::Own;
use super::blocks::Unit;
use super::broadcast::Head;
use super::element::{decode, decode_blocks, encode, encode_vec, take_back};
use super::lend::given;
use super::pod::{as_bytes, Pod};
use super::typed_buf::TypedBuf;
use super::{ShiftOrder, Subcube};
use crate::error::{Error, Result};

/// Can values of `T` be received in place (`node/landing.rs`): is a value's memory its
/// wire encoding?
pub(crate) fn lands<T: Pod>() -> bool {
    T::MEMORY_IS_WIRE && std::mem::size_of::<T>() > 0
}

/// A new vector of `n` elements whose memory `fill` writes, all of it when it returns
/// `Ok` (it is not zeroed first: the received bytes land in it once).
pub(crate) fn filled_vec<T: Pod>(
    n: usize,
    fill: impl FnOnce(*mut u8) -> Result<()>,
) -> Result<Vec<T>> {
    let bytes = n.checked_mul(std::mem::size_of::<T>());
    if bytes.map_or(true, |b| b > isize::MAX as usize) {
        return Err(Error::InvalidArgument(format!(
            "{n} elements of {} do not fit in memory",
            std::any::type_name::<T>()
        )));
    }
    let mut v = Vec::<T>::with_capacity(n);
    fill(v.as_mut_ptr().cast::<u8>())?;
    // SAFETY: `fill` wrote all `n · size_of::<T>()` bytes (its contract on `Ok`), and a
    // `Pod` value is valid for every byte pattern.
    unsafe { v.set_len(n) };
    Ok(v)
}

impl Subcube<'_> {
    /// The number of elements of a result of `size()` blocks of `count` elements, if the
    /// typed forms can receive it in place (`node/landing.rs`): where a value's memory is
    /// its wire encoding, and the total fits in memory.
    pub(crate) fn landable<T: Pod>(&self, count: usize) -> Option<usize> {
        if !lands::<T>() {
            return None;
        }
        let n = count.checked_mul(self.size() as usize)?;
        n.checked_mul(std::mem::size_of::<T>())?;
        Some(n)
    }

    /// The typed allgather into a new vector, received in place, where `T` can be
    /// ([`Subcube::landable`]); `None` otherwise.
    fn allgather_landed<T: Pod>(&self, data: &[T]) -> Option<Result<Vec<T>>> {
        let n = self.landable::<T>(data.len())?;
        // SAFETY: `allgather_to` writes all of the `n` elements' memory on `Ok`.
        Some(filled_vec(n, |out| unsafe {
            self.allgather_to(Own::From(as_bytes(data)), out)
        }))
    }

    /// The typed all-to-all into a new vector (as long as `data`, which splits into
    /// `size()` blocks), received in place where `T` can be; `None` otherwise.
    fn alltoall_landed<T: Pod>(&self, data: &[T]) -> Option<Result<Vec<T>>> {
        self.landable::<T>(data.len())?;
        let m = std::mem::size_of_val(data) / self.size() as usize;
        // SAFETY: `alltoall_to` writes all of the result's memory on `Ok`.
        Some(filled_vec(data.len(), |out| unsafe {
            self.alltoall_to(as_bytes(data), m, out)
        }))
    }

    /// [`Subcube::bcast`] of `len` elements: every member returns the root's `data` (the
    /// others pass `&[]`). Every member passes the same `root` and `len`; for a value of
    /// unknown size use [`Subcube::bcast_value`].
    pub fn bcast_slice<T: Pod>(&self, root: NodeId, data: &[T], len: usize) -> Result<Vec<T>> {
        Unit::of::<T>("bcast_slice", None).during(|| {
            let at_root = self.node.mynode() == root;
            if at_root && data.len() != len {
                return Err(self.refuse(Error::InvalidArgument(format!(
                    "bcast_slice: the root passed {} elements but len = {len}",
                    data.len()
                ))));
            }
            if !at_root && lands::<T>() {
                // SAFETY: `bcast_to` writes all of the result's memory on `Ok`.
                return filled_vec(len, |out| unsafe {
                    self.bcast_to(root, &[], out, len * T::WIRE_SIZE)
                });
            }
            if at_root && lands::<T>() {
                // SAFETY: the root's `out` is not used.
                unsafe {
                    self.bcast_to(
                        root,
                        as_bytes(data),
                        std::ptr::null_mut(),
                        len * T::WIRE_SIZE,
                    )?
                };
                return Ok(data.to_vec());
            }
            let bytes = if at_root { encode(data) } else { Bytes::new() };
            let got = self.bcast(root, bytes, len * T::WIRE_SIZE)?;
            if at_root {
                // The root's result is its own data: no decoding of its own message.
                return Ok(data.to_vec());
            }
            decode(&got, Some(len), "bcast_slice")
        })
    }

    /// Broadcast the root's vector, of any length: the root passes its vector and gets it
    /// back, the others pass an empty one (`Vec::new()`) and get a copy — no member but the
    /// root knows the length. The root sends the vector's memory without copying it (and
    /// gets it back without a copy when the transport no longer holds its bytes when the
    /// call ends). A short vector (where the automatic choice is Alg. 4.2) travels with a
    /// head byte in one broadcast; a longer one costs one 9-byte broadcast of its length
    /// before the data (as [`Subcube::bcast_value`]); when every member knows the length,
    /// [`Subcube::bcast_slice`] or [`Subcube::bcast_into`] do without it.
    pub fn bcast_vec<T: Pod>(&self, root: NodeId, data: Vec<T>) -> Result<Vec<T>> {
        Unit::of::<T>("bcast_vec", None).during(|| {
            if self.node.mynode() == root {
                let (bytes, shared) = encode_vec(data);
                if let Head::Len(n) = self.bcast_head_or_data(root, Some(&bytes), String::new)? {
                    drop(self.bcast(root, bytes.clone(), n)?);
                }
                return take_back(shared, bytes);
            }
            let bytes_len = match self.bcast_head_or_data(root, None, String::new)? {
                Head::Data(b) => return decode(&b, None, "bcast_vec"),
                Head::Len(n) => n,
            };
            let len = bytes_len / T::WIRE_SIZE.max(1);
            if len * T::WIRE_SIZE != bytes_len {
                // Another element size at the root: take part, then report it.
                let got = self.bcast(root, Bytes::new(), bytes_len)?;
                return decode(&got, None, "bcast_vec");
            }
            if lands::<T>() {
                // SAFETY: `bcast_to` writes all of the result's memory on `Ok`.
                return filled_vec(len, |out| unsafe {
                    self.bcast_to(root, &[], out, bytes_len)
                });
            }
            let got = self.bcast(root, Bytes::new(), bytes_len)?;
            decode(&got, Some(len), "bcast_vec")
        })
    }

    /// [`Subcube::scatter`] of a slice: the root passes `count` elements per member,
    /// `count · size()` in all, in relative rank order (as `MPI_Scatter`); every member
    /// returns its `count` elements. The others pass `&[]`; every member passes the same
    /// `root` and `count`.
    pub fn scatter_slice<T: Pod>(&self, root: NodeId, data: &[T], count: usize) -> Result<Vec<T>> {
        Unit::of::<T>("scatter_slice", None).during(|| {
            let got = self.scatter_typed(root, data, count, "scatter_slice")?;
            decode(&got, Some(count), "scatter_slice")
        })
    }

    /// [`Subcube::gather`] of slices of one common length: `root` returns them all, joined
    /// in relative rank order (`Some`), the others `None`.
    pub fn gather_slice<T: Pod>(&self, root: NodeId, data: &[T]) -> Result<Option<Vec<T>>> {
        Unit::of::<T>("gather_slice", Some("gatherv_slice")).during(|| {
            match self.gather(root, encode(data))? {
                Some(blocks) => Ok(Some(decode_blocks(
                    &blocks,
                    data.len() * blocks.len(),
                    "gather_slice",
                )?)),
                None => Ok(None),
            }
        })
    }

    /// [`Subcube::gatherv`] of slices of any lengths: `root` returns each member's slice,
    /// by relative rank.
    pub fn gatherv_slice<T: Pod>(&self, root: NodeId, data: &[T]) -> Result<Option<Vec<Vec<T>>>> {
        match self.gatherv(root, encode(data))? {
            Some(blocks) => Ok(Some(decode_each(&blocks, "gatherv_slice")?)),
            None => Ok(None),
        }
    }

    /// [`Subcube::allgather`] of slices of one common length: every member returns them
    /// all, joined in relative rank order.
    pub fn allgather_slice<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        Unit::of::<T>("allgather_slice", Some("allgatherv_slice")).during(|| {
            if let Some(r) = self.allgather_landed(data) {
                return r;
            }
            let blocks = self.allgather(encode(data))?;
            decode_blocks(&blocks, data.len() * blocks.len(), "allgather_slice")
        })
    }

    /// [`Subcube::allgather_slice`] of an owned vector, sent without copying it (the
    /// typed form that costs what the byte form does, but for the one copy into the result).
    pub fn allgather_vec<T: Pod>(&self, data: Vec<T>) -> Result<Vec<T>> {
        Unit::of::<T>("allgather_vec", Some("allgatherv_slice")).during(|| {
            if let Some(r) = self.allgather_landed(&data) {
                return r;
            }
            let n = data.len();
            let (bytes, _shared) = encode_vec(data);
            let blocks = self.allgather(bytes)?;
            decode_blocks(&blocks, n * blocks.len(), "allgather_vec")
        })
    }

    /// [`Subcube::allgatherv`] of slices of any lengths: every member returns each
    /// member's slice, by relative rank.
    pub fn allgatherv_slice<T: Pod>(&self, data: &[T]) -> Result<Vec<Vec<T>>> {
        decode_each(&self.allgatherv(encode(data))?, "allgatherv_slice")
    }

    /// [`Subcube::alltoall`] of a slice: `data` holds `count · size()` elements, block j
    /// (elements `j·count .. (j+1)·count`) going to relative rank j; returns the blocks
    /// received, joined in relative rank order (as `MPI_Alltoall`).
    pub fn alltoall_slice<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        Unit::of::<T>("alltoall_slice", Some("alltoallv_slice")).during(|| {
            self.split_check(data.len(), "alltoall_slice")?;
            if let Some(r) = self.alltoall_landed(data) {
                return r;
            }
            self.alltoall_bytes::<T>(encode(data), data.len(), "alltoall_slice")
        })
    }

    /// [`Subcube::alltoall_slice`] of an owned vector, sent without copying it (and, since
    /// the call owns it, without waiting for the neighbours to acknowledge it:
    /// `lend::given`).
    pub fn alltoall_vec<T: Pod>(&self, data: Vec<T>) -> Result<Vec<T>> {
        Unit::of::<T>("alltoall_vec", Some("alltoallv_slice")).during(|| {
            self.split_check(data.len(), "alltoall_vec")?;
            let n = data.len();
            let (bytes, shared) = encode_vec(data);
            if let Some(mine) = &shared {
                let landed = given(&bytes, || self.alltoall_landed(&mine[..]));
                if let Some(r) = landed {
                    return r;
                }
            }
            self.alltoall_bytes::<T>(bytes, n, "alltoall_vec")
        })
    }

    /// [`Subcube::allgather_vec`] with the result viewed where it arrived: a
    /// [`TypedBuf`] of one part per member (by relative rank) that reads the message
    /// buffers in place — no copy in (the vector's memory is sent) and none out, the cost
    /// of the byte form.
    pub fn allgather_buf<T: Pod>(&self, data: Vec<T>) -> Result<TypedBuf<T>> {
        Unit::of::<T>("allgather_buf", Some("allgatherv_slice")).during(|| {
            let n = data.len();
            let (bytes, _shared) = encode_vec(data);
            let blocks = self.allgather(bytes)?;
            check_total::<T>(&blocks, n * blocks.len(), "allgather_buf")?;
            TypedBuf::from_parts(blocks, "allgather_buf")
        })
    }

    /// [`Subcube::alltoall_vec`] with the result viewed where it arrived: a [`TypedBuf`]
    /// of one part per member (what relative rank j sent here is part j).
    pub fn alltoall_buf<T: Pod>(&self, data: Vec<T>) -> Result<TypedBuf<T>> {
        Unit::of::<T>("alltoall_buf", Some("alltoallv_slice")).during(|| {
            self.split_check(data.len(), "alltoall_buf")?;
            let n = data.len();
            let p = self.size() as usize;
            let (all, _shared) = encode_vec(data);
            let blocks = equal_blocks(all, p);
            let got = self.alltoall(&blocks)?;
            check_total::<T>(&got, n, "alltoall_buf")?;
            TypedBuf::from_parts(got, "alltoall_buf")
        })
    }

    /// [`Subcube::bcast_slice`] of an owned vector with the result viewed where it
    /// arrived (one part): the root passes its vector of `len` elements (sent without a
    /// copy) and gets a view of it; the others pass `Vec::new()`. Every member passes the
    /// same `root` and `len`.
    pub fn bcast_buf<T: Pod>(&self, root: NodeId, data: Vec<T>, len: usize) -> Result<TypedBuf<T>> {
        Unit::of::<T>("bcast_buf", None).during(|| {
            let at_root = self.node.mynode() == root;
            if at_root && data.len() != len {
                return Err(self.refuse(Error::InvalidArgument(format!(
                    "bcast_buf: the root passed {} elements but len = {len}",
                    data.len()
                ))));
            }
            let bytes = if at_root {
                encode_vec(data).0
            } else {
                Bytes::new()
            };
            let got = self.bcast(root, bytes, len * T::WIRE_SIZE)?;
            check_total::<T>(std::slice::from_ref(&got), len, "bcast_buf")?;
            TypedBuf::from_parts(vec![got], "bcast_buf")
        })
    }

    /// [`Subcube::gather_slice`] with the result viewed where it arrived: `root` returns a
    /// [`TypedBuf`] of one part per member (by relative rank), the others `None`.
    pub fn gather_buf<T: Pod>(&self, root: NodeId, data: Vec<T>) -> Result<Option<TypedBuf<T>>> {
        Unit::of::<T>("gather_buf", Some("gatherv_slice")).during(|| {
            let n = data.len();
            match self.gather(root, encode_vec(data).0)? {
                Some(blocks) => {
                    check_total::<T>(&blocks, n * blocks.len(), "gather_buf")?;
                    Ok(Some(TypedBuf::from_parts(blocks, "gather_buf")?))
                }
                None => Ok(None),
            }
        })
    }

    /// The typed scatter: the root's `data` (`count · size()` elements, checked) cut into
    /// `count`-element blocks; returns this member's block, as bytes.
    pub(crate) fn scatter_typed<T: Pod>(
        &self,
        root: NodeId,
        data: &[T],
        count: usize,
        what: &str,
    ) -> Result<Bytes> {
        let p = self.size() as usize;
        let blocks = if self.node.mynode() == root {
            if data.len() != count * p {
                return Err(self.refuse(Error::InvalidArgument(format!(
                    "{what}: the root passed {} elements for {p} members of {count}; pass \
                     {count} · {p}",
                    data.len()
                ))));
            }
            equal_blocks(encode(data), p)
        } else {
            Vec::new()
        };
        self.scatter(root, &blocks, count * T::WIRE_SIZE)
    }

    /// `n` elements must split into `size()` equal blocks.
    pub(super) fn split_check(&self, n: usize, what: &str) -> Result<()> {
        let p = self.size() as usize;
        if p == 0 || n % p != 0 {
            return Err(self.refuse(Error::InvalidArgument(format!(
                "{what}: {n} elements do not split into {p} equal blocks"
            ))));
        }
        Ok(())
    }

    /// The typed all-to-all of `n` elements encoded as `all`: split without copying.
    fn alltoall_bytes<T: Pod>(&self, all: Bytes, n: usize, what: &str) -> Result<Vec<T>> {
        let p = self.size() as usize;
        let blocks = equal_blocks(all, p);
        let got = self.alltoall(&blocks)?;
        decode_blocks(&got, n, what)
    }

    /// [`Subcube::alltoallv`] of slices: `blocks[j]` (any length) goes to relative rank
    /// j; returns what each member sent to this one, by relative rank.
    pub fn alltoallv_slice<T: Pod, B: AsRef<[T]>>(&self, blocks: &[B]) -> Result<Vec<Vec<T>>> {
        let bytes: Vec<Bytes> = blocks.iter().map(|b| encode(b.as_ref())).collect();
        decode_each(&self.alltoallv(&bytes)?, "alltoallv_slice")
    }

    /// [`Subcube::shift`] of a slice (every member passes the same number of elements).
    pub fn shift_slice<T: Pod>(&self, data: &[T], q: i64, order: ShiftOrder) -> Result<Vec<T>> {
        Unit::of::<T>("shift_slice", None).during(|| {
            let got = self.shift(encode(data), q, order)?;
            decode(&got, Some(data.len()), "shift_slice")
        })
    }
}

/// `all` cut into `p` blocks of equal length (views, no copy; `p` divides the length).
pub(crate) fn equal_blocks(all: Bytes, p: usize) -> Vec<Bytes> {
    let b = all.len() / p.max(1);
    (0..p).map(|j| all.slice(j * b..(j + 1) * b)).collect()
}

/// The blocks hold `expected` elements of `T` in all (the error of a typed length
/// mismatch otherwise).
fn check_total<T: Pod>(blocks: &[Bytes], expected: usize, what: &str) -> Result<()> {
    let total: usize = blocks.iter().map(Bytes::len).sum();
    if total != expected * T::WIRE_SIZE {
        return Err(super::element::length_error::<T>(
            what,
            total,
            Some(expected),
        ));
    }
    Ok(())
}

/// Decode every block on its own (a whole number of elements each).
fn decode_each<T: Pod>(blocks: &[Bytes], what: &str) -> Result<Vec<Vec<T>>> {
    blocks.iter().map(|b| decode(b, None, what)).collect()
}

#[cfg(test)]
mod tests {
    use crate::collectives::TypedBuf;
    use crate::local::run_local;

    /// The owned-vector forms give what the slice forms give, on every algorithm.
    #[test]
    fn vec_forms_match_slice_forms() {
        run_local(2, |node| {
            let me = node.mynode();
            let cube = node.cube();
            let mine: Vec<u32> = (0..1000).map(|k| k * 10 + me).collect();
            assert_eq!(
                cube.allgather_vec(mine.clone()).unwrap(),
                cube.allgather_slice(&mine).unwrap()
            );
            assert_eq!(
                cube.alltoall_vec(mine.clone()).unwrap(),
                cube.alltoall_slice(&mine).unwrap()
            );
            let root = 2;
            let data = if me == root { mine.clone() } else { Vec::new() };
            let got = cube.bcast_vec(root, data).unwrap();
            assert_eq!(got, (0..1000).map(|k| k * 10 + root).collect::<Vec<u32>>());
            let got = cube.bcast_slice(root, if me == root { &mine } else { &[] }, 1000);
            assert_eq!(
                got.unwrap(),
                (0..1000).map(|k| k * 10 + root).collect::<Vec<u32>>()
            );
            // The views give what the vectors give.
            let want = cube.allgather_slice(&mine).unwrap();
            let got = cube.allgather_buf(mine.clone()).unwrap();
            assert_eq!((got.parts(), got.to_vec()), (4, want.clone()));
            assert_eq!(got.part(2), &want[2000..3000]);
            assert_eq!(&got[..], &want[..]);
            let got = cube.alltoall_buf(mine.clone()).unwrap();
            assert_eq!(got, cube.alltoall_slice(&mine).unwrap());
            let data = if me == root { mine.clone() } else { Vec::new() };
            let got = cube.bcast_buf(root, data, 1000).unwrap();
            assert!(got.is_contiguous());
            assert_eq!(
                &got[..],
                &(0..1000).map(|k| k * 10 + root).collect::<Vec<u32>>()[..]
            );
            let got = cube.gather_buf(1, mine.clone()).unwrap();
            let want = cube.gather_slice(1, &mine).unwrap();
            assert_eq!(got.map(TypedBuf::into_vec), want);
            // A member with another length: an error in elements.
            let n = if me == 3 { 999 } else { 1000 };
            let e = cube.allgather_buf(vec![1u32; n]).unwrap_err().to_string();
            assert!(e.contains("allgather_buf") && e.contains("element"), "{e}");
            // An empty vector at the root: every member returns it.
            let none = cube.bcast_vec(1, Vec::<u64>::new()).unwrap();
            assert!(none.is_empty());
        });
    }
}
