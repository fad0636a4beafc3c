//! The reductions (Grama 4.1–4.3): reduce, allreduce, reduce-scatter and scan with a
//! commutative and a non-commutative operator, and every element type.

use anyhow::{ensure, Result};
use hypercube::collectives::{Algorithm, Element, Op};
use hypercube::Error;

use super::data::*;
use super::{Scope, LONG};

/// The reducing checks' data: 2p + 3 elements per member.
struct Vectors {
    ints: Vec<Vec<i64>>,
    floats: Vec<Vec<f64>>,
    aff: Vec<Vec<u64>>,
}

impl Vectors {
    fn of(s: &Scope<'_>) -> Vectors {
        let n = 2 * s.p + 3;
        Vectors {
            ints: (0..s.p).map(|r| vec_i64(s.seed(r), n)).collect(),
            floats: (0..s.p).map(|r| vec_f64(s.seed(r), n)).collect(),
            aff: (0..s.p).map(|r| vec_affine(s.seed(r), n)).collect(),
        }
    }

    fn sum(&self) -> Vec<i64> {
        fold_upto(self.ints.len(), |r| self.ints[r].clone(), i64::wrapping_add).unwrap()
    }

    /// The composition of the affine maps of ranks 0..upto.
    fn comp(&self, upto: usize) -> Option<Vec<u64>> {
        fold_upto(upto, |r| self.aff[r].clone(), affine)
    }
}

const AFFINE: &dyn Fn(u64, u64) -> u64 = &affine;

pub(super) fn reduce(s: &Scope<'_>) -> Result<()> {
    let v = Vectors::of(s);
    let (sum, comp) = (v.sum(), v.comp(s.p).unwrap());
    for alg in [Algorithm::Hypercube, Algorithm::ReduceScatterGather] {
        for &root in &s.roots {
            let got = s
                .with(alg)
                .reduce(s.node_of(root), &v.ints[s.me], Op::Sum)?;
            ensure!(
                got == s.at_root(root, || sum.clone()),
                "{alg:?} sum root {root}"
            );
            let got = s
                .with(alg)
                .reduce(s.node_of(root), &v.aff[s.me], Op::Fn(AFFINE))?;
            ensure!(
                got == s.at_root(root, || comp.clone()),
                "{alg:?} affine root {root}"
            );
        }
    }
    // The all-port reduction combines out of rank order: commutative operators only.
    for &root in &s.roots {
        let got = s
            .with(Algorithm::AllPort)
            .reduce(s.node_of(root), &v.ints[s.me], Op::Sum)?;
        ensure!(
            got == s.at_root(root, || sum.clone()),
            "AllPort sum root {root}"
        );
        let refused =
            s.with(Algorithm::AllPort)
                .reduce(s.node_of(root), &v.aff[s.me], Op::Fn(AFFINE));
        ensure!(
            s.p == 1 || matches!(refused, Err(Error::InvalidArgument(_))),
            "AllPort with a non-commutative operator: {refused:?}"
        );
    }
    Ok(())
}

pub(super) fn allreduce(s: &Scope<'_>) -> Result<()> {
    let v = Vectors::of(s);
    let (sum, comp) = (v.sum(), v.comp(s.p).unwrap());
    let max = fold_upto(s.p, |r| v.floats[r].clone(), f64::max).unwrap();
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ReduceScatterAllgather,
        Algorithm::Ring,
        Algorithm::AllPort,
        Algorithm::Auto,
    ] {
        let sa = s.with(alg);
        ensure!(sa.allreduce(&v.ints[s.me], Op::Sum)? == sum, "{alg:?} sum");
        ensure!(
            sa.allreduce(&v.floats[s.me], Op::Max)? == max,
            "{alg:?} max"
        );
        let got = sa.allreduce(&v.aff[s.me], Op::Fn(AFFINE));
        if !matches!(alg, Algorithm::Ring | Algorithm::AllPort) {
            ensure!(got? == comp, "{alg:?} affine");
        } else if s.p > 1 {
            // The ring and the rotated orders reorder operands: a non-commutative
            // operator is refused.
            ensure!(
                matches!(got, Err(Error::InvalidArgument(_))),
                "{alg:?} with a non-commutative operator: {got:?}"
            );
        }
    }
    // A long vector (rendezvous transfers).
    let big: Vec<f64> = (0..LONG / 8).map(|i| (i % 17) as f64).collect();
    for alg in [Algorithm::ReduceScatterAllgather, Algorithm::AllPort] {
        let got = s.with(alg).allreduce(&big, Op::Sum)?;
        ensure!(
            got.len() == big.len() && got.iter().zip(&big).all(|(g, b)| *g == b * s.p as f64),
            "long vector {alg:?}"
        );
    }
    Ok(())
}

pub(super) fn reduce_scatter(s: &Scope<'_>) -> Result<()> {
    let v = Vectors::of(s);
    let (sum, comp) = (v.sum(), v.comp(s.p).unwrap());
    let mine = part(sum.len(), s.p, s.me);
    for alg in [Algorithm::Hypercube, Algorithm::Ring, Algorithm::AllPort] {
        let got = s.with(alg).reduce_scatter(&v.ints[s.me], Op::Sum)?;
        ensure!(got == sum[mine.clone()], "{alg:?} sum");
    }
    let got = s.sc.reduce_scatter(&v.aff[s.me], Op::Fn(AFFINE))?;
    ensure!(got == comp[mine], "affine");
    Ok(())
}

pub(super) fn scan(s: &Scope<'_>) -> Result<()> {
    let v = Vectors::of(s);
    let (ex, incl) = (v.comp(s.me), v.comp(s.me + 1).unwrap());
    let min = fold_upto(s.me + 1, |r| v.ints[r].clone(), i64::min).unwrap();
    for alg in [Algorithm::Hypercube, Algorithm::Chain, Algorithm::Auto] {
        let sa = s.with(alg);
        ensure!(
            sa.scan(&v.aff[s.me], Op::Fn(AFFINE))? == incl,
            "{alg:?} affine"
        );
        ensure!(
            sa.exscan(&v.aff[s.me], Op::Fn(AFFINE))? == ex,
            "{alg:?} exscan affine"
        );
        ensure!(sa.scan(&v.ints[s.me], Op::Min)? == min, "{alg:?} min");
    }
    // The chain sends 64 KiB segments: several of them and a partial one (1 MiB + 24 bytes,
    // where the automatic choice is the chain too), of 8-byte and of 1-byte elements. The
    // long vectors repeat with a prime period (no divisor of a segment's element count), so
    // that the references cost p·period, not p·n, on each node.
    let n = (1 << 17) + 3;
    let long = |r: usize| vec_affine(s.seed(r) + 5, 8191);
    let ex = fold_upto(s.me, long, affine).map(|v| repeat(&v, n));
    let incl = repeat(&fold_upto(s.me + 1, long, affine).unwrap(), n);
    let mine = repeat(&long(s.me), n);
    for alg in [Algorithm::Chain, Algorithm::Auto] {
        ensure!(
            s.with(alg).scan(&mine, Op::Fn(AFFINE))? == incl,
            "{alg:?} long affine"
        );
    }
    ensure!(
        s.with(Algorithm::Chain).exscan(&mine, Op::Fn(AFFINE))? == ex,
        "Chain long exscan affine"
    );
    let n = 2 * 65536 + 7;
    let bytes = |r: usize| bytes_of(s.seed(r) + 6, 4093).to_vec(); // one period
    let max = repeat(&fold_upto(s.me + 1, bytes, u8::max).unwrap(), n);
    ensure!(
        s.with(Algorithm::Chain)
            .scan(&repeat(&bytes(s.me), n), Op::Max)?
            == max,
        "Chain long max of bytes"
    );
    Ok(())
}

/// An allreduce of one element per member, `x(rank)`, against the left fold with `f`.
pub(super) fn all_of<T: Element + PartialEq>(
    s: &Scope<'_>,
    op: Op<'_, T>,
    x: impl Fn(usize) -> T,
    f: impl Fn(T, T) -> T,
) -> Result<()> {
    let want = (1..s.p).fold(x(0), |a, r| f(a, x(r)));
    let what = format!("{} {op:?}", std::any::type_name::<T>());
    let got = s.sc.allreduce(&[x(s.me)], op)?;
    ensure!(got == [want], "{what}: {got:?}, expected {want:?}");
    Ok(())
}

/// Every element type with the built-in operators (integers wrap) and a commutative one.
pub(super) fn element_types(s: &Scope<'_>) -> Result<()> {
    all_of(s, Op::Sum, |r| r as i8 - 2, i8::wrapping_add)?;
    all_of(s, Op::Prod, |r| r as u8 + 1, u8::wrapping_mul)?;
    all_of(s, Op::Max, |r| r as i16, i16::max)?;
    all_of(s, Op::Min, |r| r as u16 + 3, u16::min)?;
    all_of(s, Op::Sum, |r| r as i32 * 1000, i32::wrapping_add)?;
    all_of(s, Op::Sum, |r| r as u32, u32::wrapping_add)?;
    all_of(s, Op::Min, |r| -(r as i64), i64::min)?;
    all_of(s, Op::Sum, |_| u64::MAX, u64::wrapping_add)?;
    all_of(s, Op::Prod, |r| r as i128 - 1, i128::wrapping_mul)?;
    all_of(s, Op::Max, |r| u128::MAX - r as u128, u128::max)?;
    all_of(s, Op::Sum, |_| 0.5f32, |a, b| a + b)?;
    let g = |a: f64, b: f64| a + b + 1.0;
    all_of(s, Op::Commutative(&g), |r| r as f64, g)
}
