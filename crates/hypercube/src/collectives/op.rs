//! How elements combine: the reduction operator [`Op`] (named operators where the element
//! type has them, user functions for any [`Pod`]).

use super::pod::{as_elems, Builtin, Pod};
use crate::error::{Error, Result};

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

/// Runs `$call` (a closure-like `|f| expr` over the element function `f`) with the named
/// operator `$op`'s function, the operator fixed at compile time in each arm so that the
/// loop inside is specialized to it (one `match` per call, not per element).
macro_rules! by_builtin {
    ($op:expr, |$f:ident| $call:expr) => {{
        macro_rules! with {
            ($b:ident) => {{
                let $f = |a: T, b: T| T::builtin(Builtin::$b, a, b).unwrap_or(a);
                $call
            }};
        }
        match $op {
            Op::Sum => with!(Sum),
            Op::Prod => with!(Prod),
            Op::Max => with!(Max),
            Op::Min => with!(Min),
            Op::BAnd => with!(BAnd),
            Op::BOr => with!(BOr),
            Op::BXor => with!(BXor),
            Op::LAnd => with!(LAnd),
            Op::LOr => with!(LOr),
            Op::MaxLoc => with!(MaxLoc),
            Op::MinLoc => with!(MinLoc),
            Op::Fn(_) | Op::Commutative(_) => unreachable!("user functions are matched first"),
        }
    }};
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
        /// `f(mine[i], other[i])` appended, `other` read in place where its bytes are
        /// aligned elements (a loop the compiler turns into vector instructions), else
        /// element by element from the bytes.
        #[inline(always)]
        fn each<T: Pod>(out: &mut Vec<T>, mine: &[T], other: &[u8], f: impl Fn(T, T) -> T) {
            match as_elems::<T>(other) {
                Some(o) => out.extend(mine.iter().zip(o).map(|(&a, &b)| f(a, b))),
                None => out.extend(
                    mine.iter()
                        .zip(other.chunks_exact(T::WIRE_SIZE))
                        .map(|(&a, b)| f(a, T::read_wire(b))),
                ),
            }
        }
        match self {
            Op::Fn(g) | Op::Commutative(g) => {
                if other_is_higher {
                    each(out, mine, other, g);
                } else {
                    each(out, mine, other, |a, b| g(b, a));
                }
            }
            // The named operators are commutative (MaxLoc and MinLoc break ties by index).
            named => by_builtin!(named, |f| each(out, mine, other, f)),
        }
    }

    /// `acc := acc ⊕ other` if `other_is_higher`, else `acc := other ⊕ acc` (rank order),
    /// with `other` read straight from received little-endian bytes (no decoded copy). The
    /// caller checked the length with `element::check_len`.
    pub(crate) fn combine_bytes(&self, acc: &mut [T], other: &[u8], other_is_higher: bool) {
        /// `acc[i] := f(acc[i], other[i])`, as in `combine_into`'s `each`.
        #[inline(always)]
        fn each<T: Pod>(acc: &mut [T], other: &[u8], f: impl Fn(T, T) -> T) {
            match as_elems::<T>(other) {
                Some(o) => {
                    for (a, &b) in acc.iter_mut().zip(o) {
                        *a = f(*a, b);
                    }
                }
                None => {
                    for (a, b) in acc.iter_mut().zip(other.chunks_exact(T::WIRE_SIZE)) {
                        *a = f(*a, T::read_wire(b));
                    }
                }
            }
        }
        match self {
            Op::Fn(g) | Op::Commutative(g) => {
                if other_is_higher {
                    each(acc, other, g);
                } else {
                    each(acc, other, |a, b| g(b, a));
                }
            }
            named => by_builtin!(named, |f| each(acc, other, f)),
        }
    }
}

/// `T::builtin(op, ..)` on a zeroed pair: whether `T` has the operator at all.
fn probe<T: Pod>(op: Builtin) -> Option<T> {
    // SAFETY: `T: Pod` accepts every bit pattern, all-zero included.
    let z: T = unsafe { std::mem::zeroed() };
    T::builtin(op, z, z)
}

#[cfg(test)]
mod tests {
    use super::Op;
    use crate::collectives::pod::{as_bytes, as_elems, Loc};

    /// The bytes of `xs` at an offset of one byte in a buffer of their own: misaligned
    /// for every element wider than a byte.
    fn misaligned(xs: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8];
        v.extend_from_slice(xs);
        v
    }

    /// Both paths — bytes read in place as elements (aligned) and element by element
    /// (misaligned) — give `apply`'s result, in rank order for a non-commutative function.
    fn check<T: crate::collectives::Pod + PartialEq + std::fmt::Debug>(
        op: Op<'_, T>,
        mine: &[T],
        other: &[T],
    ) {
        let bytes = as_bytes(other);
        let shifted = misaligned(bytes);
        let unaligned = &shifted[1..];
        assert!(as_elems::<T>(bytes).is_some());
        if std::mem::align_of::<T>() > 1 {
            assert!(as_elems::<T>(unaligned).is_none());
        }
        for higher in [true, false] {
            let want: Vec<T> = mine
                .iter()
                .zip(other)
                .map(|(&a, &b)| {
                    if higher {
                        op.apply(a, b)
                    } else {
                        op.apply(b, a)
                    }
                })
                .collect();
            for b in [bytes, unaligned] {
                let mut out = Vec::new();
                op.combine_into(&mut out, mine, b, higher);
                assert_eq!(out, want, "combine_into {op:?} higher={higher}");
                let mut acc = mine.to_vec();
                op.combine_bytes(&mut acc, b, higher);
                assert_eq!(acc, want, "combine_bytes {op:?} higher={higher}");
            }
        }
    }

    #[test]
    fn combining_in_place_and_from_bytes_agree_with_apply() {
        let a: Vec<f32> = (0..37).map(|i| i as f32 * 0.5 - 3.0).collect();
        let b: Vec<f32> = (0..37).map(|i| 7.0 - i as f32 * 0.25).collect();
        for op in [Op::Sum, Op::Prod, Op::Max, Op::Min] {
            check(op, &a, &b);
        }
        let x: Vec<u64> = (0..19).map(|i| i * 0x1234_5678_9abc).collect();
        let y: Vec<u64> = (0..19).map(|i| !i << 3).collect();
        for op in [Op::Sum, Op::BXor, Op::LAnd, Op::Min] {
            check(op, &x, &y);
        }
        // Not commutative: the order of the arguments shows.
        let sub = |a: i32, b: i32| a.wrapping_mul(3).wrapping_sub(b);
        check(Op::Fn(&sub), &[1, 2, 3, 4, 5], &[10, 20, 30, 40, 50]);
        let l: Vec<Loc<f64>> = (0..9u64).map(|i| Loc::new((i % 4) as f64, i)).collect();
        let r: Vec<Loc<f64>> = (0..9u64).map(|i| Loc::new((i % 3) as f64, 8 - i)).collect();
        check(Op::MaxLoc, &l, &r);
        check(Op::MinLoc, &l, &r);
    }
}
