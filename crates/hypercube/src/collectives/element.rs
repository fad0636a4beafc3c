//! How numbers travel: [`Element`] (the primitives, little-endian) and the encoding and
//! length checks of element vectors shared by the reducing and typed collectives. The
//! operators are in `op.rs`, plain data in `pod.rs`.

use bytes::{Bytes, BytesMut};

use super::pod::Pod;
use crate::error::{Error, Result};

pub use super::op::Op;

/// A primitive numeric type that travels as little-endian bytes: `f64 f32 i8..i128 u8..u128`.
/// The element of the iPSC GOP and the numbers among the collectives' [`Pod`] elements
/// (every `Element` is a `Pod`, so code generic over `T: Element` can call the reductions).
/// Integer `Sum` and `Prod` wrap on overflow (they never panic).
pub trait Element: Pod + PartialOrd + std::fmt::Debug {
    /// Bytes per element on the wire.
    const SIZE: usize;
    /// Append the little-endian bytes of `self`.
    fn put_le(self, out: &mut BytesMut);
    /// Read one element from exactly `SIZE` little-endian bytes.
    fn get_le(bytes: &[u8]) -> Self;
    /// Write the little-endian bytes of `self` into exactly `SIZE` bytes.
    fn write_le(self, out: &mut [u8]);
    /// `a + b` (wrapping for integers).
    fn sum(a: Self, b: Self) -> Self;
    /// `a * b` (wrapping for integers).
    fn prod(a: Self, b: Self) -> Self;
    /// The larger of `a` and `b` (floats: a NaN loses, as `f64::max`).
    fn max_of(a: Self, b: Self) -> Self;
    /// The smaller of `a` and `b` (floats: a NaN loses, as `f64::min`).
    fn min_of(a: Self, b: Self) -> Self;
    /// Append the little-endian bytes of every element of `xs` to `out`.
    fn extend_le(xs: &[Self], out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + xs.len() * Self::SIZE, 0);
        for (o, &x) in out[start..].chunks_exact_mut(Self::SIZE).zip(xs) {
            x.write_le(o);
        }
    }
    /// Append the elements whose little-endian bytes are `bytes` (a multiple of `SIZE`)
    /// to `out`.
    fn extend_from_le(bytes: &[u8], out: &mut Vec<Self>) {
        out.extend(bytes.chunks_exact(Self::SIZE).map(Self::get_le));
    }
}

/// One implementation for every primitive; only the four combining functions differ
/// (wrapping for integers, IEEE for floats).
macro_rules! element {
    (
        sum: |$sa:ident, $sb:ident| $sum:expr,
        prod: |$pa:ident, $pb:ident| $prod:expr,
        max: |$xa:ident, $xb:ident| $max:expr,
        min: |$na:ident, $nb:ident| $min:expr;
        $($t:ty),*
    ) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn put_le(self, out: &mut BytesMut) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn get_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
            #[inline(always)]
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline(always)]
            fn sum($sa: Self, $sb: Self) -> Self {
                $sum
            }
            #[inline(always)]
            fn prod($pa: Self, $pb: Self) -> Self {
                $prod
            }
            #[inline(always)]
            fn max_of($xa: Self, $xb: Self) -> Self {
                $max
            }
            #[inline(always)]
            fn min_of($na: Self, $nb: Self) -> Self {
                $min
            }
            #[cfg(target_endian = "little")]
            fn extend_le(xs: &[Self], out: &mut Vec<u8>) {
                // SAFETY: a primitive number has no padding bytes, so its memory is
                // initialized bytes, which on a little-endian target are its encoding.
                let bytes = unsafe {
                    std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), std::mem::size_of_val(xs))
                };
                out.extend_from_slice(bytes);
            }
            #[cfg(target_endian = "little")]
            fn extend_from_le(bytes: &[u8], out: &mut Vec<Self>) {
                let n = bytes.len() / std::mem::size_of::<$t>();
                out.reserve(n);
                // SAFETY: `out` has room for `n` more elements; every bit pattern is a
                // valid primitive number and little-endian bytes are its memory, so
                // copying `n * SIZE` bytes initializes exactly the next `n` elements.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr(),
                        out.as_mut_ptr().add(out.len()).cast::<u8>(),
                        n * std::mem::size_of::<$t>(),
                    );
                    out.set_len(out.len() + n);
                }
            }
        }
    )*};
}
element!(
    sum: |a, b| a.wrapping_add(b),
    prod: |a, b| a.wrapping_mul(b),
    max: |a, b| Ord::max(a, b),
    min: |a, b| Ord::min(a, b);
    i8, i16, i32, i64, i128, u8, u16, u32, u64, u128
);
element!(
    sum: |a, b| a + b,
    prod: |a, b| a * b,
    max: |a, b| a.max(b),
    min: |a, b| a.min(b);
    f32, f64
);

/// Encode elements as their wire bytes (one copy).
pub(crate) fn encode<T: Pod>(xs: &[T]) -> Bytes {
    let mut b = Vec::with_capacity(xs.len() * T::WIRE_SIZE);
    T::extend_wire(xs, &mut b);
    Bytes::from(b)
}

/// An owned vector of plain data whose memory is its wire encoding, as message bytes.
struct PodVec<T: Pod>(std::sync::Arc<Vec<T>>);

impl<T: Pod> AsRef<[u8]> for PodVec<T> {
    fn as_ref(&self) -> &[u8] {
        super::pod::as_bytes(&self.0)
    }
}

/// An owned vector as message bytes, without copying when its memory is its wire
/// encoding ([`Pod::MEMORY_IS_WIRE`]: always on little-endian targets); otherwise encoded
/// (one copy). The vector stays alive, shared with the returned handle, for as long as the
/// transport or a receiver (over the in-process transport, which hands the bytes over
/// without copying them) holds the bytes — not only for the call — so no borrowed memory is
/// ever exposed. [`take_back`] recovers it when nobody else does.
pub(crate) fn encode_vec<T: Pod>(xs: Vec<T>) -> (Bytes, Option<std::sync::Arc<Vec<T>>>) {
    if T::MEMORY_IS_WIRE {
        let shared = std::sync::Arc::new(xs);
        (Bytes::from_owner(PodVec(shared.clone())), Some(shared))
    } else {
        (encode(&xs), None)
    }
}

/// The vector given to [`encode_vec`] back: without a copy when no message bytes refer to
/// it any more, else a copy (`bytes`, the handle [`encode_vec`] returned, is dropped first;
/// it is the encoded form that is decoded in the big-endian case).
pub(crate) fn take_back<T: Pod>(
    shared: Option<std::sync::Arc<Vec<T>>>,
    bytes: Bytes,
) -> Result<Vec<T>> {
    match shared {
        Some(a) => {
            drop(bytes);
            Ok(std::sync::Arc::try_unwrap(a).unwrap_or_else(|a| (*a).clone()))
        }
        None => decode(&bytes, None, "take_back"),
    }
}

/// A received length that is not what this node expected, in elements of `T` (and in the
/// words of the typed call running, with its v-variant, when there is one).
pub(crate) fn length_error<T: Pod>(what: &str, got: usize, expected: Option<usize>) -> Error {
    let unit = super::blocks::Unit::current().unwrap_or(super::blocks::Unit::of::<T>("", None));
    let expected = match expected {
        Some(1) => "1 element was expected".to_string(),
        Some(n) => format!("{n} elements were expected"),
        None => "a whole number of elements was expected".to_string(),
    };
    Error::InvalidArgument(format!(
        "{what}: received {} where {expected}: every member must pass the same number of \
         elements{}",
        unit.count(got),
        unit.v_hint()
    ))
}

/// Decode little-endian bytes; `expected` elements if given (a clear error otherwise).
pub(crate) fn decode<T: Pod>(b: &[u8], expected: Option<usize>, what: &str) -> Result<Vec<T>> {
    if b.len().checked_rem(T::WIRE_SIZE) != Some(0)
        || expected.is_some_and(|n| n * T::WIRE_SIZE != b.len())
    {
        return Err(length_error::<T>(what, b.len(), expected));
    }
    let mut out = Vec::with_capacity(b.len() / T::WIRE_SIZE);
    T::extend_from_wire(b, &mut out);
    Ok(out)
}

/// Decode blocks into one vector of `expected` elements (one copy, no joined buffer).
pub(crate) fn decode_blocks<T: Pod>(
    blocks: &[Bytes],
    expected: usize,
    what: &str,
) -> Result<Vec<T>> {
    let total: usize = blocks.iter().map(Bytes::len).sum();
    if total != expected * T::WIRE_SIZE
        || blocks
            .iter()
            .any(|b| b.len().checked_rem(T::WIRE_SIZE) != Some(0))
    {
        return Err(length_error::<T>(what, total, Some(expected)));
    }
    let mut out = Vec::with_capacity(expected);
    for b in blocks {
        T::extend_from_wire(b, &mut out);
    }
    Ok(out)
}

/// Decode exactly `out.len()` elements into `out` (the caller's memory; the same error as
/// [`decode`] for another length).
pub(crate) fn decode_into<T: Pod>(b: &[u8], out: &mut [T], what: &str) -> Result<()> {
    check_len::<T>(b, out.len(), what)?;
    T::copy_from_wire(b, out);
    Ok(())
}

/// Decode blocks, joined, into exactly `out.len()` elements of the caller's memory (one
/// copy; the same error as [`decode_blocks`] for another total).
pub(crate) fn decode_blocks_into<T: Pod>(
    blocks: &[Bytes],
    out: &mut [T],
    what: &str,
) -> Result<()> {
    let total: usize = blocks.iter().map(Bytes::len).sum();
    if total != out.len() * T::WIRE_SIZE
        || blocks
            .iter()
            .any(|b| b.len().checked_rem(T::WIRE_SIZE) != Some(0))
    {
        return Err(length_error::<T>(what, total, Some(out.len())));
    }
    let mut off = 0;
    for b in blocks {
        let n = b.len() / T::WIRE_SIZE;
        T::copy_from_wire(b, &mut out[off..off + n]);
        off += n;
    }
    Ok(())
}

/// Check that `b` holds exactly `n` elements of `T` (the same error as [`decode`]).
pub(crate) fn check_len<T: Pod>(b: &[u8], n: usize, what: &str) -> Result<()> {
    if b.len() != n * T::WIRE_SIZE {
        return Err(length_error::<T>(what, b.len(), Some(n)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reduction's length error counts elements of the caller's type, not bytes.
    #[test]
    fn length_errors_count_elements() {
        let e = check_len::<f64>(&[0u8; 16], 3, "allreduce").unwrap_err();
        let e = e.to_string();
        assert!(e.contains("allreduce: received 2 elements of f64"), "{e}");
        assert!(e.contains("3 elements were expected"), "{e}");
        let e = decode::<u32>(&[0u8; 6], None, "recv_slice").unwrap_err();
        assert!(
            e.to_string().contains("not a whole number of 4-byte u32"),
            "{e}"
        );
    }
}
