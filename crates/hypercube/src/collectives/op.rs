//! How elements combine: the reduction operator [`Op`] (named operators where the element
//! type has them, user functions for any [`Pod`]).

use super::pod::{Builtin, Pod};
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
    /// caller checked the length with `element::check_len`.
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
