//! Element types and reduction operators for the reducing collectives.

use bytes::{Bytes, BytesMut};

use super::pod::{Builtin, Pod};
use crate::error::{Error, Result};

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

/// Encode [`Element`]s as little-endian bytes (GOP).
pub(crate) fn encode_le<T: Element>(xs: &[T]) -> Bytes {
    let mut b = Vec::with_capacity(xs.len() * T::SIZE);
    T::extend_le(xs, &mut b);
    Bytes::from(b)
}

/// Encode elements as their wire bytes (one copy).
pub(crate) fn encode<T: Pod>(xs: &[T]) -> Bytes {
    let mut b = Vec::with_capacity(xs.len() * T::WIRE_SIZE);
    T::extend_wire(xs, &mut b);
    Bytes::from(b)
}

/// Decode little-endian bytes; `expected` elements if given (a clear error otherwise).
pub(crate) fn decode<T: Pod>(b: &[u8], expected: Option<usize>, what: &str) -> Result<Vec<T>> {
    if b.len().checked_rem(T::WIRE_SIZE) != Some(0)
        || expected.is_some_and(|n| n * T::WIRE_SIZE != b.len())
    {
        return Err(Error::InvalidArgument(format!(
            "{what}: received {} bytes where {} elements of {} bytes were expected; every \
             participant must pass the same number of elements",
            b.len(),
            expected.map_or_else(|| "whole".to_string(), |n| n.to_string()),
            T::WIRE_SIZE
        )));
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
        return Err(Error::InvalidArgument(format!(
            "{what}: received {total} bytes where {expected} elements of {} bytes were \
             expected; every participant must pass the same number of elements",
            T::WIRE_SIZE
        )));
    }
    let mut out = Vec::with_capacity(expected);
    for b in blocks {
        T::extend_from_wire(b, &mut out);
    }
    Ok(out)
}

/// Check that `b` holds exactly `n` elements of `T` (the same error as [`decode`]).
pub(crate) fn check_len<T: Pod>(b: &[u8], n: usize, what: &str) -> Result<()> {
    if b.len() != n * T::WIRE_SIZE {
        return Err(Error::InvalidArgument(format!(
            "{what}: received {} bytes where {n} elements of {} bytes were expected; every \
             participant must pass the same number of elements",
            b.len(),
            T::WIRE_SIZE
        )));
    }
    Ok(())
}

/// An associative reduction operator ⊕. Results combine contributions in rank order
/// (`x_0 ⊕ x_1 ⊕ … ⊕ x_{p-1}`), so a non-commutative [`Op::Fn`] is handled correctly by
/// every algorithm that accepts it; the ring and mesh reductions reorder terms and accept
/// only commutative operators.
///
/// The element type says how a value travels ([`Pod`]); the operator says how two combine.
/// The named operators apply where the type has them: `Sum Prod Max Min` for every
/// primitive number, the bitwise and logical ones for integers, `MaxLoc`/`MinLoc` for
/// [`crate::collectives::Loc`]. Any other [`Pod`] type (a struct of your own) is reduced
/// with [`Op::Fn`] or [`Op::Commutative`]; a named operator the type lacks is an
/// [`Error::InvalidArgument`] on every member, before anything is sent.
///
/// The iPSC GOP's [`crate::ipsc::Op`] converts into this one (`Op::from`), and
/// [`Op::from_seed_char`] reads the seed's `'+' '*' 'M' 'm'`.
#[derive(Clone, Copy)]
pub enum Op<'a, T> {
    /// Element-wise sum (wrapping for integers).
    Sum,
    /// Element-wise product (wrapping for integers; the GOP seed's `'*'`, once `Product`).
    Prod,
    /// Element-wise maximum.
    Max,
    /// Element-wise minimum.
    Min,
    /// A user operator, associative but possibly not commutative: `f(a, b)` with `a` from
    /// the lower ranks.
    Fn(&'a dyn Fn(T, T) -> T),
    /// A user operator that is associative and commutative.
    Commutative(&'a dyn Fn(T, T) -> T),
    /// Bitwise and (`MPI_BAND`; integers).
    BAnd,
    /// Bitwise or (`MPI_BOR`; integers).
    BOr,
    /// Bitwise exclusive or (`MPI_BXOR`; integers).
    BXor,
    /// Logical and: 1 if both are non-zero, else 0 (`MPI_LAND`; integers).
    LAnd,
    /// Logical or: 1 if either is non-zero, else 0 (`MPI_LOR`; integers).
    LOr,
    /// The [`crate::collectives::Loc`] with the largest value, the smallest index among
    /// equal values (`MPI_MAXLOC`).
    MaxLoc,
    /// The [`crate::collectives::Loc`] with the smallest value, the smallest index among
    /// equal values (`MPI_MINLOC`).
    MinLoc,
}

impl<T> std::fmt::Debug for Op<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Op::Sum => "Sum",
            Op::Prod => "Prod",
            Op::Max => "Max",
            Op::Min => "Min",
            Op::Fn(_) => "Fn",
            Op::Commutative(_) => "Commutative",
            Op::BAnd => "BAnd",
            Op::BOr => "BOr",
            Op::BXor => "BXor",
            Op::LAnd => "LAnd",
            Op::LOr => "LOr",
            Op::MaxLoc => "MaxLoc",
            Op::MinLoc => "MinLoc",
        })
    }
}

impl<T> Op<'_, T> {
    /// The seed's GOP operation character: `'+'`, `'*'`, `'M'` or `'m'`.
    pub fn from_seed_char(c: char) -> Option<Self> {
        crate::ipsc::Op::from_seed_char(c).map(Op::from)
    }

    /// The built-in operator this is, or `None` for a user function.
    fn builtin(&self) -> Option<Builtin> {
        Some(match self {
            Op::Sum => Builtin::Sum,
            Op::Prod => Builtin::Prod,
            Op::Max => Builtin::Max,
            Op::Min => Builtin::Min,
            Op::BAnd => Builtin::BAnd,
            Op::BOr => Builtin::BOr,
            Op::BXor => Builtin::BXor,
            Op::LAnd => Builtin::LAnd,
            Op::LOr => Builtin::LOr,
            Op::MaxLoc => Builtin::MaxLoc,
            Op::MinLoc => Builtin::MinLoc,
            Op::Fn(_) | Op::Commutative(_) => return None,
        })
    }
}

impl<T> From<crate::ipsc::Op> for Op<'_, T> {
    /// GOP's operations: `Sum → Sum`, `Prod` (`'*'`, once `Product`) `→ Prod`,
    /// `Max → Max`, `Min → Min`.
    fn from(op: crate::ipsc::Op) -> Self {
        match op {
            crate::ipsc::Op::Sum => Op::Sum,
            crate::ipsc::Op::Prod => Op::Prod,
            crate::ipsc::Op::Max => Op::Max,
            crate::ipsc::Op::Min => Op::Min,
        }
    }
}

impl<T: Pod> Op<'_, T> {
    /// `a ⊕ b`.
    ///
    /// # Panics
    /// If `T` has no built-in operator of this name (the collectives check that first,
    /// see [`Op::check`]).
    #[inline]
    pub fn apply(&self, a: T, b: T) -> T {
        match self {
            Op::Fn(f) | Op::Commutative(f) => f(a, b),
            named => {
                let Some(op) = named.builtin() else {
                    unreachable!()
                };
                match T::builtin(op, a, b) {
                    Some(x) => x,
                    None => panic!("{}", Self::unsupported(op)),
                }
            }
        }
    }

    /// Does `T` support this operator? An [`Error::InvalidArgument`] naming the type if
    /// not (user functions apply to every type but a zero-sized one).
    pub fn check(&self) -> Result<()> {
        if T::WIRE_SIZE == 0 {
            return Err(Error::InvalidArgument(format!(
                "cannot reduce elements of the zero-sized type {}",
                std::any::type_name::<T>()
            )));
        }
        match self.builtin() {
            Some(op) if probe::<T>(op).is_none() => {
                Err(Error::InvalidArgument(Self::unsupported(op)))
            }
            _ => Ok(()),
        }
    }

    fn unsupported(op: Builtin) -> String {
        format!(
            "Op::{op:?} does not apply to elements of type {}: the named operators apply to \
             primitive numbers (bitwise and logical ones to integers, MaxLoc/MinLoc to Loc); \
             reduce other types with Op::Fn or Op::Commutative",
            std::any::type_name::<T>()
        )
    }

    /// May the terms be reordered?
    pub fn is_commutative(&self) -> bool {
        !matches!(self, Op::Fn(_))
    }

    /// Append `mine[i] ⊕ other[i]` (`other ⊕ mine` unless `other_is_higher`) to `out`:
    /// one pass that reads both and writes the result, for a first step that must not
    /// modify the caller's vector.
    pub(crate) fn combine_into(
        &self,
        out: &mut Vec<T>,
        mine: &[T],
        other: &[u8],
        other_is_higher: bool,
    ) {
        fn each<T: Pod>(out: &mut Vec<T>, mine: &[T], other: &[u8], f: impl Fn(T, T) -> T) {
            out.extend(
                mine.iter()
                    .zip(other.chunks_exact(T::WIRE_SIZE))
                    .map(|(&a, b)| f(a, T::read_wire(b))),
            );
        }
        match self {
            Op::Sum => each(out, mine, other, |a, b| {
                T::builtin(Builtin::Sum, a, b).unwrap_or(a)
            }),
            Op::Prod => each(out, mine, other, |a, b| {
                T::builtin(Builtin::Prod, a, b).unwrap_or(a)
            }),
            _ => {
                if other_is_higher {
                    each(out, mine, other, |a, b| self.apply(a, b));
                } else {
                    each(out, mine, other, |a, b| self.apply(b, a));
                }
            }
        }
    }

    /// `acc := acc ⊕ other` if `other_is_higher`, else `acc := other ⊕ acc` (rank order),
    /// with `other` read straight from received little-endian bytes (no decoded copy). The
    /// caller checked the length with [`check_len`].
    pub(crate) fn combine_bytes(&self, acc: &mut [T], other: &[u8], other_is_higher: bool) {
        fn each<T: Pod>(acc: &mut [T], other: &[u8], f: impl Fn(T, T) -> T) {
            for (a, b) in acc.iter_mut().zip(other.chunks_exact(T::WIRE_SIZE)) {
                *a = f(*a, T::read_wire(b));
            }
        }
        match self {
            Op::Sum => each(acc, other, |a, b| {
                T::builtin(Builtin::Sum, a, b).unwrap_or(a)
            }),
            Op::Prod => each(acc, other, |a, b| {
                T::builtin(Builtin::Prod, a, b).unwrap_or(a)
            }),
            _ => {
                if other_is_higher {
                    each(acc, other, |a, b| self.apply(a, b));
                } else {
                    each(acc, other, |a, b| self.apply(b, a));
                }
            }
        }
    }
}

/// `T::builtin(op, ..)` on a zeroed pair: whether `T` has the operator at all.
fn probe<T: Pod>(op: Builtin) -> Option<T> {
    // SAFETY: `T: Pod` accepts every bit pattern, all-zero included.
    let z: T = unsafe { std::mem::zeroed() };
    T::builtin(op, z, z)
}
