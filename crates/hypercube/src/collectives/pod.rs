//! How an element travels: [`Pod`], plain data sent as its bytes. How elements combine is
//! the reduction operator's business ([`crate::collectives::Op`]); the built-in operators
//! a type supports are the one thing it declares here (`builtin`), so a user struct is
//! reduced with a user function and the primitives keep their arithmetic.
//!
//! [`Loc`] is the value-and-index pair of MPI's `MAXLOC`/`MINLOC`.

use std::mem::size_of;

/// A built-in reduction a [`Pod`] type may support (the named variants of
/// [`crate::collectives::Op`], without the user functions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `a + b` (wrapping for integers).
    Sum,
    /// `a * b` (wrapping for integers).
    Prod,
    /// The larger (floats: a NaN loses).
    Max,
    /// The smaller (floats: a NaN loses).
    Min,
    /// Bitwise and (integers).
    BAnd,
    /// Bitwise or (integers).
    BOr,
    /// Bitwise exclusive or (integers).
    BXor,
    /// Logical and: 1 if both are non-zero, else 0 (integers).
    LAnd,
    /// Logical or: 1 if either is non-zero, else 0 (integers).
    LOr,
    /// The [`Loc`] with the larger value; on equal values the smaller index (MPI `MAXLOC`).
    MaxLoc,
    /// The [`Loc`] with the smaller value; on equal values the smaller index (MPI `MINLOC`).
    MinLoc,
}

/// Plain old data: a `Copy` type whose bytes are its value, sent as those bytes by the
/// typed collectives (`allgather_slice`, `bcast_slice`, ...) and the reductions
/// (`allreduce`, `reduce`, `scan`, ...) with no manual encoding.
///
/// Implemented for every primitive number (`f32 f64 i8..i128 u8..u128`, which travel
/// little-endian and support the arithmetic [`Builtin`]s), for arrays of `Pod` and for
/// [`Loc`]. A struct of your own qualifies when it is `#[repr(C)]` (or `#[repr(transparent)]`),
/// `Copy`, made of `Pod` fields **with no padding bytes**, and holds no pointers:
///
/// ```
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// struct Particle { x: f64, y: f64, mass: f64, id: u64 }
/// // SAFETY: repr(C), four 8-byte fields: no padding, every bit pattern is valid.
/// unsafe impl hypercube::collectives::Pod for Particle {}
/// ```
///
/// Such a type travels as its memory bytes, so every rank must share the byte order
/// (always true on one host and on a homogeneous cluster). It supports no built-in
/// operator: reduce it with [`crate::collectives::Op::Fn`] or
/// [`crate::collectives::Op::Commutative`].
///
/// # Safety
/// Every byte of a value must be initialized (no padding) and every byte pattern of
/// `size_of::<Self>()` bytes must be a valid value (no `bool`, `char`, references, enums
/// with invalid discriminants, ...). The provided methods rely on it; overriding them is
/// for the crate's own types.
pub unsafe trait Pod: Copy + Send + Sync + 'static {
    /// Bytes per element on the wire.
    #[doc(hidden)]
    const WIRE_SIZE: usize = size_of::<Self>();

    /// Whether the memory of a value is its wire encoding (true but for the primitive
    /// numbers on a big-endian target, which travel little-endian): then an owned vector
    /// is sent as it is, without a copy (`allgather_vec`, `alltoall_vec`, `bcast_vec`).
    #[doc(hidden)]
    const MEMORY_IS_WIRE: bool = true;

    /// The built-in reduction `op` applied to `a ⊕ b`, or `None` if the type has none
    /// by that name (the default: only user functions apply).
    #[doc(hidden)]
    #[inline(always)]
    fn builtin(op: Builtin, a: Self, b: Self) -> Option<Self> {
        let _ = (op, a, b);
        None
    }

    /// Read one element from exactly `WIRE_SIZE` bytes.
    #[doc(hidden)]
    #[inline(always)]
    fn read_wire(bytes: &[u8]) -> Self {
        assert_eq!(bytes.len(), size_of::<Self>());
        // SAFETY: `Self: Pod` (every byte pattern is a value); the read is unaligned.
        unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<Self>()) }
    }

    /// Write the bytes of `self` into exactly `WIRE_SIZE` bytes.
    #[doc(hidden)]
    #[inline(always)]
    fn write_wire(self, out: &mut [u8]) {
        out.copy_from_slice(as_bytes(std::slice::from_ref(&self)));
    }

    /// Append the bytes of every element of `xs` to `out`.
    #[doc(hidden)]
    fn extend_wire(xs: &[Self], out: &mut Vec<u8>) {
        out.extend_from_slice(as_bytes(xs));
    }

    /// Append the elements whose bytes are `bytes` (a multiple of `WIRE_SIZE`) to `out`.
    #[doc(hidden)]
    fn extend_from_wire(bytes: &[u8], out: &mut Vec<Self>) {
        let n = bytes.len() / size_of::<Self>().max(1);
        out.reserve(n);
        // SAFETY: `out` has room for `n` more elements, every byte pattern is a value
        // (`Self: Pod`), so copying `n * WIRE_SIZE` bytes initializes exactly the next `n`.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr().add(out.len()).cast::<u8>(),
                n * size_of::<Self>(),
            );
            out.set_len(out.len() + n);
        }
    }

    /// Overwrite `out` with the elements whose bytes are `bytes` (exactly
    /// `out.len() * WIRE_SIZE` of them).
    #[doc(hidden)]
    fn copy_from_wire(bytes: &[u8], out: &mut [Self]) {
        assert_eq!(bytes.len(), std::mem::size_of_val(out));
        // SAFETY: `out` is `bytes.len()` bytes of `Self`s, every byte pattern of which is a
        // value (`Self: Pod`); the two do not overlap (`out` is borrowed mutably).
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                out.as_mut_ptr().cast::<u8>(),
                bytes.len(),
            );
        }
    }
}

/// The memory of a slice of plain data as bytes.
pub(crate) fn as_bytes<T: Pod>(xs: &[T]) -> &[u8] {
    // SAFETY: `T: Pod` has no padding, so all `size_of_val(xs)` bytes are initialized.
    unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<u8>(), std::mem::size_of_val(xs)) }
}

/// `bytes` as the elements they encode, in place, where that is possible: `T`'s memory is
/// its wire encoding, the bytes are a whole number of elements and aligned for `T`. `None`
/// otherwise (the caller reads element by element with [`Pod::read_wire`]).
pub(crate) fn as_elems<T: Pod>(bytes: &[u8]) -> Option<&[T]> {
    let size = size_of::<T>();
    if !T::MEMORY_IS_WIRE
        || size == 0
        || T::WIRE_SIZE != size
        || bytes.len() % size != 0
        || bytes.as_ptr().align_offset(std::mem::align_of::<T>()) != 0
    {
        return None;
    }
    // SAFETY: the bytes are initialized, aligned for `T`, a whole number of `T`s, and
    // every byte pattern is a `T` (`T: Pod`); the view borrows them immutably.
    Some(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) })
}

/// The memory of a mutable slice of plain data as bytes (any bytes written are values).
pub(crate) fn as_bytes_mut<T: Pod>(xs: &mut [T]) -> &mut [u8] {
    // SAFETY: `T: Pod` has no padding (all bytes initialized) and accepts every byte
    // pattern, so any bytes written through the view leave valid values.
    unsafe {
        std::slice::from_raw_parts_mut(xs.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(xs))
    }
}

/// Integers: wrapping arithmetic (as [`crate::collectives::Element`]) plus the bitwise and
/// logical operators.
macro_rules! pod_int {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive integer has no padding and accepts every bit pattern.
        unsafe impl Pod for $t {
            #[inline(always)]
            fn builtin(op: Builtin, a: Self, b: Self) -> Option<Self> {
                Some(match op {
                    Builtin::Sum => a.wrapping_add(b),
                    Builtin::Prod => a.wrapping_mul(b),
                    Builtin::Max => Ord::max(a, b),
                    Builtin::Min => Ord::min(a, b),
                    Builtin::BAnd => a & b,
                    Builtin::BOr => a | b,
                    Builtin::BXor => a ^ b,
                    Builtin::LAnd => <$t>::from(a != 0 && b != 0),
                    Builtin::LOr => <$t>::from(a != 0 || b != 0),
                    Builtin::MaxLoc | Builtin::MinLoc => return None,
                })
            }
            pod_le!($t);
        }
    )*};
}

/// Floats: IEEE arithmetic (as [`crate::collectives::Element`]).
macro_rules! pod_float {
    ($($t:ty),*) => {$(
        // SAFETY: a primitive float has no padding and accepts every bit pattern.
        unsafe impl Pod for $t {
            #[inline(always)]
            fn builtin(op: Builtin, a: Self, b: Self) -> Option<Self> {
                Some(match op {
                    Builtin::Sum => a + b,
                    Builtin::Prod => a * b,
                    Builtin::Max => a.max(b),
                    Builtin::Min => a.min(b),
                    _ => return None,
                })
            }
            pod_le!($t);
        }
    )*};
}

/// A primitive travels little-endian on every target (the encoding of
/// [`crate::collectives::Element`]); on a little-endian target that is its memory, so the
/// provided (memory-copy) vector methods apply as they are.
macro_rules! pod_le {
    ($t:ty) => {
        const MEMORY_IS_WIRE: bool = cfg!(target_endian = "little");
        #[inline(always)]
        fn read_wire(bytes: &[u8]) -> Self {
            let mut b = [0u8; size_of::<$t>()];
            b.copy_from_slice(bytes);
            <$t>::from_le_bytes(b)
        }
        #[inline(always)]
        fn write_wire(self, out: &mut [u8]) {
            out.copy_from_slice(&self.to_le_bytes());
        }
        #[cfg(target_endian = "big")]
        fn extend_wire(xs: &[Self], out: &mut Vec<u8>) {
            out.extend(xs.iter().flat_map(|x| x.to_le_bytes()));
        }
        #[cfg(target_endian = "big")]
        fn extend_from_wire(bytes: &[u8], out: &mut Vec<Self>) {
            out.extend(bytes.chunks_exact(size_of::<$t>()).map(Self::read_wire));
        }
        #[cfg(target_endian = "big")]
        fn copy_from_wire(bytes: &[u8], out: &mut [Self]) {
            assert_eq!(bytes.len(), std::mem::size_of_val(out));
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(size_of::<$t>())) {
                *o = Self::read_wire(b);
            }
        }
    };
}

pod_int!(i8, i16, i32, i64, i128, u8, u16, u32, u64, u128);
pod_float!(f32, f64);

// SAFETY: an array of plain data has no padding between elements and accepts every
// bit pattern its elements accept. (Travels as memory bytes.)
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}

/// A value and its index: the element of [`Builtin::MaxLoc`] / [`Builtin::MinLoc`]
/// (MPI's `MAXLOC` and `MINLOC`; ties go to the smaller index). The value is a primitive
/// number and the index an integer **of the value's size**, so that the pair has no
/// padding: `Loc<f64, u64>` (the default index), `Loc<f32, u32>`, `Loc<i64, i64>`, ...
/// ([`LocIndex`] lists the pairs). Another pair is refused where it is written:
///
/// ```compile_fail
/// # use hypercube::collectives::Loc;
/// let rank: u32 = 3; // node.mynode() is a u32
/// let best = Loc::new(1.5f64, rank); // error: u32 is not an index for an f64 value
/// ```
///
/// ```
/// # use hypercube::collectives::Loc;
/// let rank: u32 = 3;
/// let best = Loc::new(1.5f64, u64::from(rank)); // Loc<f64, u64>
/// let small = Loc::new(1.5f32, rank); // Loc<f32, u32>
/// # let _ = (best, small);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Default)]
#[repr(C)]
pub struct Loc<V, I = u64> {
    /// The value compared.
    pub value: V,
    /// Where it came from (a rank, a global index, ...).
    pub index: I,
}

impl<V, I: LocIndex<V>> Loc<V, I> {
    /// A value and its index (an integer of the value's size, see [`LocIndex`]).
    pub fn new(value: V, index: I) -> Loc<V, I> {
        Loc { value, index }
    }
}

/// The integer types that can index a value of type `V` in a [`Loc`]: those of `V`'s
/// size (`u64`/`i64` for `f64`, `i64` and `u64`; `u32`/`i32` for `f32`, `i32` and `u32`;
/// alike for 8, 16 and 128 bits), so that `Loc<V, I>` has no padding and travels as its
/// bytes. Sealed: implemented here for every such pair.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot index a `{V}` value in a Loc: the index must have the value's size",
    label = "an index of another size than the value",
    note = "use an integer of the value's size: Loc<f64, u64> (`u64::from(node.mynode())`), \
            Loc<f32, u32>, Loc<i64, i64>, ..."
)]
pub trait LocIndex<V>: Pod + PartialOrd + sealed::Sealed<V> {}

mod sealed {
    /// Only this module's pairs are [`super::LocIndex`]es.
    pub trait Sealed<V> {}
}

/// `LocIndex<V>` for every integer `I` of `V`'s size (one line per size class).
macro_rules! loc_index {
    ($([$($v:ty),*] by [$($i:ty),*];)*) => {$(
        loc_index!(@each [$($v),*] [$($i),*]);
    )*};
    (@each [$($v:ty),*] $is:tt) => {$(
        loc_index!(@one $v $is);
    )*};
    (@one $v:ty [$($i:ty),*]) => {$(
        impl sealed::Sealed<$v> for $i {}
        impl LocIndex<$v> for $i {}
    )*};
}

loc_index! {
    [i8, u8] by [i8, u8];
    [i16, u16] by [i16, u16];
    [f32, i32, u32] by [i32, u32];
    [f64, i64, u64] by [i64, u64];
    [i128, u128] by [i128, u128];
}

// SAFETY: `repr(C)` of a primitive value and an integer of the same size (`LocIndex`):
// no padding, every bit pattern valid.
unsafe impl<V: Pod + PartialOrd, I: LocIndex<V>> Pod for Loc<V, I> {
    #[inline(always)]
    fn builtin(op: Builtin, a: Self, b: Self) -> Option<Self> {
        let wins = match op {
            Builtin::MaxLoc => a.value > b.value,
            Builtin::MinLoc => a.value < b.value,
            _ => return None,
        };
        let loses = match op {
            Builtin::MaxLoc => a.value < b.value,
            _ => a.value > b.value,
        };
        Some(if wins {
            a
        } else if loses || b.index < a.index {
            b
        } else {
            a
        })
    }
}
