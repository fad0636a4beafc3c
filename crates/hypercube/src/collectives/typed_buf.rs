//! [`TypedBuf`]: received elements viewed in place, in the message buffers they arrived
//! in — the typed result that costs what the byte form's does (no copy out). Returned by
//! the `*_buf` forms (`allgather_buf`, `alltoall_buf`, `bcast_buf`, `gather_buf`) and
//! [`crate::Node::recv_buf`].

use std::marker::PhantomData;
use std::sync::OnceLock;

use bytes::Bytes;

use super::element::{decode, encode_vec};
use super::pod::Pod;
use crate::error::Result;

/// Elements of `T` received in one or more parts (one per member for the gathering
/// collectives, by relative rank; one for a broadcast or a receive), viewed where they
/// arrived: [`TypedBuf::part`], [`TypedBuf::iter`], [`TypedBuf::get`] and indexing read
/// them without a copy.
///
/// It also dereferences to one `&[T]` of all elements in order: without a copy when there
/// is one part; else the parts are joined into a vector on the first use (one copy, made
/// once), as a `Vec`-returning form would have made. A part whose bytes are not aligned
/// for `T`, or (on a big-endian target) numbers that travel little-endian, are copied
/// once when the buffer is built (in the `osu --form buf` runs of `docs/perf/typed.md`,
/// `f32` over TCP, d = 3, 8 B to 1 MiB, every part arrived aligned).
///
/// ```
/// hypercube::local::run_local(2, |node| {
///     let me = node.mynode() as f64;
///     let all = node.cube().allgather_buf(vec![me, me + 0.5]).unwrap();
///     assert_eq!(all.part(3), &[3.0, 3.5][..]); // rank 3's block, in place
///     assert_eq!(all.iter().sum::<f64>(), 14.0);
///     assert_eq!(all[5], 2.5);
///     assert_eq!(&all[..2], &[0.0, 0.5][..]); // a slice: joined once (four parts)
/// });
/// ```
pub struct TypedBuf<T: Pod> {
    /// The parts, each aligned for `T` and a whole number of elements.
    parts: Vec<Bytes>,
    /// Element offset of each part, and the total at the end (`parts.len() + 1` entries).
    starts: Vec<usize>,
    /// All parts joined, made on the first dereference of a buffer of several parts.
    joined: OnceLock<Vec<T>>,
    _t: PhantomData<T>,
}

impl<T: Pod> TypedBuf<T> {
    /// A view of received parts: each must hold a whole number of elements (an
    /// [`crate::Error::InvalidArgument`] naming `what` otherwise); a misaligned part (or,
    /// on a big-endian target, numbers in little-endian) is copied into an aligned one.
    pub(crate) fn from_parts(parts: Vec<Bytes>, what: &str) -> Result<TypedBuf<T>> {
        let mut starts = Vec::with_capacity(parts.len() + 1);
        let mut n = 0;
        let mut out = Vec::with_capacity(parts.len());
        for b in parts {
            let b = if T::MEMORY_IS_WIRE && b.len() % T::WIRE_SIZE.max(1) == 0 && aligned::<T>(&b) {
                b
            } else {
                encode_vec(decode::<T>(&b, None, what)?).0
            };
            starts.push(n);
            n += b.len() / T::WIRE_SIZE.max(1);
            out.push(b);
        }
        starts.push(n);
        Ok(TypedBuf {
            parts: out,
            starts,
            joined: OnceLock::new(),
            _t: PhantomData,
        })
    }

    /// Number of elements in all parts.
    pub fn len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// No elements at all?
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of parts (one per member for `allgather_buf`, `alltoall_buf` and
    /// `gather_buf`, by relative rank; one for `bcast_buf` and `recv_buf`).
    pub fn parts(&self) -> usize {
        self.parts.len()
    }

    /// Part `j` (the block of relative rank `j` of a gathering collective), in place.
    ///
    /// # Panics
    /// If `j >= self.parts()`, as slice indexing does.
    pub fn part(&self, j: usize) -> &[T] {
        view(&self.parts[j])
    }

    /// The parts in order, in place.
    pub fn iter_parts(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.parts.iter().map(|b| view::<T>(b))
    }

    /// Every element in order, read in place (no join).
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.iter_parts().flatten()
    }

    /// Element `i` of all parts in order, read in place (no join).
    pub fn get(&self, i: usize) -> Option<&T> {
        if i >= self.len() {
            return None;
        }
        // The last part that starts at or before i (empty parts share a start).
        let j = self.starts.partition_point(|&s| s <= i) - 1;
        self.part(j).get(i - self.starts[j])
    }

    /// Whether the elements are one slice in place (dereferencing copies nothing).
    pub fn is_contiguous(&self) -> bool {
        self.parts.iter().filter(|b| !b.is_empty()).count() <= 1
    }

    /// Copy every element, in order, into `out` (which must be [`TypedBuf::len`] long).
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] if `out` has another length (nothing written).
    pub fn copy_to_slice(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len() {
            return Err(crate::error::Error::InvalidArgument(format!(
                "TypedBuf::copy_to_slice: out holds {} elements but the buffer {}",
                out.len(),
                self.len()
            )));
        }
        for (j, p) in self.iter_parts().enumerate() {
            out[self.starts[j]..self.starts[j + 1]].copy_from_slice(p);
        }
        Ok(())
    }

    /// Every element, in order, in a new vector (one copy).
    pub fn to_vec(&self) -> Vec<T> {
        let mut v = Vec::with_capacity(self.len());
        for p in self.iter_parts() {
            v.extend_from_slice(p);
        }
        v
    }

    /// Every element, in order, as a vector: the joined vector if one was made, else a
    /// copy.
    pub fn into_vec(mut self) -> Vec<T> {
        match self.joined.take() {
            Some(v) => v,
            None => self.to_vec(),
        }
    }
}

/// Is `b` aligned for `T`?
fn aligned<T>(b: &Bytes) -> bool {
    b.is_empty() || (b.as_ptr() as usize) % std::mem::align_of::<T>() == 0
}

/// The elements whose bytes are `b` (aligned, a whole number of elements: checked when the
/// buffer was built).
fn view<T: Pod>(b: &Bytes) -> &[T] {
    if b.is_empty() || T::WIRE_SIZE == 0 {
        return &[];
    }
    debug_assert!(aligned::<T>(b) && b.len() % T::WIRE_SIZE == 0);
    // SAFETY: `from_parts` kept only parts aligned for `T` holding a whole number of
    // elements; their bytes are a `T`'s memory (`MEMORY_IS_WIRE`) and every byte pattern
    // is a value (`T: Pod`); `Bytes` is immutable and outlives the borrow of `self`.
    unsafe { std::slice::from_raw_parts(b.as_ptr().cast::<T>(), b.len() / T::WIRE_SIZE) }
}

impl<T: Pod> std::ops::Deref for TypedBuf<T> {
    type Target = [T];
    /// All elements in order: in place when they are in one part, else joined once.
    fn deref(&self) -> &[T] {
        match self.parts.iter().filter(|b| !b.is_empty()).count() {
            0 => &[],
            1 => view(self.parts.iter().find(|b| !b.is_empty()).expect("one part")),
            _ => self.joined.get_or_init(|| self.to_vec()),
        }
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for TypedBuf<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter_parts()).finish()
    }
}

impl<T: Pod + PartialEq> PartialEq<[T]> for TypedBuf<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Pod + PartialEq> PartialEq<Vec<T>> for TypedBuf<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self == other[..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts of any alignment and emptiness read back as the elements they hold.
    #[test]
    fn parts_aligned_misaligned_and_empty() {
        let raw: Vec<u8> = (0..8u64).flat_map(|x| x.to_le_bytes()).collect();
        let all = Bytes::from(vec![0u8; 1].into_iter().chain(raw).collect::<Vec<u8>>());
        // Part 0 misaligned by one byte (copied), part 1 empty, part 2 aligned or not.
        let parts = vec![all.slice(1..25), Bytes::new(), all.slice(25..65)];
        let b = TypedBuf::<u64>::from_parts(parts, "test").unwrap();
        assert_eq!((b.len(), b.parts(), b.is_contiguous()), (8, 3, false));
        assert_eq!(b.part(0), &[0, 1, 2][..]);
        assert!(b.part(1).is_empty());
        assert_eq!(b.get(3), Some(&3));
        assert_eq!(b.get(8), None);
        assert_eq!(
            b.iter().copied().collect::<Vec<_>>(),
            (0..8).collect::<Vec<_>>()
        );
        assert_eq!(&b[2..5], &[2, 3, 4][..]);
        let mut out = [0u64; 8];
        b.copy_to_slice(&mut out).unwrap();
        assert_eq!(b, out.to_vec());
        assert!(b.copy_to_slice(&mut [0u64; 2]).is_err());
        assert_eq!(b.into_vec(), (0..8).collect::<Vec<_>>());
        // A part that is not a whole number of elements: an error, not a panic.
        assert!(TypedBuf::<u64>::from_parts(vec![Bytes::from(vec![0u8; 12])], "t").is_err());
        // One part: a slice without a copy.
        let one = TypedBuf::<u64>::from_parts(vec![Bytes::new(), all.slice(25..65)], "t");
        let one = one.unwrap();
        assert!(one.is_contiguous());
        assert_eq!(one.len(), 5);
        assert_eq!(one.first(), Some(&3));
    }
}
