//! The all-to-all operations (Grama 4.2, 4.5, 4.6): allgather(v), alltoall(v), the
//! circular shift in both orders, and the barrier.

use anyhow::{ensure, Result};
use bytes::Bytes;
use hypercube::collectives::{Algorithm, ShiftOrder};
use hypercube::topology::{ginv, gray};

use super::data::*;
use super::rooted::M;
use super::Scope;

/// The algorithms of allgather and allgatherv.
pub(super) const ALLGATHER_ALGS: [Algorithm; 4] = [
    Algorithm::Hypercube,
    Algorithm::Ring,
    Algorithm::Mesh,
    Algorithm::AllPort,
];

pub(super) fn allgather(s: &Scope<'_>) -> Result<()> {
    let want: Vec<Bytes> = (0..s.p).map(|j| bytes_of(s.seed(j), M)).collect();
    for alg in ALLGATHER_ALGS {
        ensure!(
            s.with(alg).allgather(want[s.me].clone())? == want,
            "{alg:?}"
        );
    }
    Ok(())
}

pub(super) fn allgatherv(s: &Scope<'_>) -> Result<()> {
    let want: Vec<Bytes> = (0..s.p).map(|j| bytes_of(s.seed(j), j % 5)).collect();
    for alg in ALLGATHER_ALGS {
        ensure!(
            s.with(alg).allgatherv(want[s.me].clone())? == want,
            "{alg:?}"
        );
    }
    Ok(())
}

/// The block from `src` to `dst` in the all-to-all checks.
pub(super) fn a2a_block(s: &Scope<'_>, src: usize, dst: usize, len: usize) -> Bytes {
    bytes_of(s.seed(src) + dst as u64, len)
}

pub(super) fn alltoall(s: &Scope<'_>) -> Result<()> {
    let mine: Vec<Bytes> = (0..s.p).map(|t| a2a_block(s, s.me, t, M)).collect();
    let want: Vec<Bytes> = (0..s.p).map(|f| a2a_block(s, f, s.me, M)).collect();
    for alg in [
        Algorithm::StoreForward,
        Algorithm::Pairwise,
        Algorithm::Ecube,
        Algorithm::Ring,
        Algorithm::Mesh,
    ] {
        ensure!(s.with(alg).alltoall(&mine)? == want, "{alg:?}");
    }
    Ok(())
}

/// This member's blocks of an all-to-all whose block from `a` to `b` is `len(a, b)` bytes,
/// and the blocks it must receive.
fn v_blocks(s: &Scope<'_>, len: impl Fn(usize, usize) -> usize) -> (Vec<Bytes>, Vec<Bytes>) {
    let mine = (0..s.p)
        .map(|t| a2a_block(s, s.me, t, len(s.me, t)))
        .collect();
    let want = (0..s.p)
        .map(|f| a2a_block(s, f, s.me, len(f, s.me)))
        .collect();
    (mine, want)
}

pub(super) fn alltoallv(s: &Scope<'_>) -> Result<()> {
    let (mine, want) = v_blocks(s, |a, b| (a + b) % 4);
    ensure!(s.sc.alltoallv(&mine)? == want, "wrong blocks");
    for alg in [Algorithm::Ecube, Algorithm::Planned] {
        ensure!(
            s.with(alg).alltoallv(&mine)? == want,
            "wrong blocks ({alg:?})"
        );
    }
    // Long blocks, some empty, to a few members: with HYPERCUBE_PLAN_MIN_PART small, the
    // planned routes cut them into parts over several paths.
    let (mine, want) = v_blocks(s, |a, b| {
        if (a ^ b) % 3 == 1 {
            5000 + 37 * a + b
        } else {
            0
        }
    });
    for alg in [Algorithm::Auto, Algorithm::Pairwise, Algorithm::Planned] {
        ensure!(
            s.with(alg).alltoallv(&mine)? == want,
            "wrong long blocks ({alg:?})"
        );
    }
    Ok(())
}

pub(super) fn shift(s: &Scope<'_>) -> Result<()> {
    let p = s.p as i64;
    // Position on the shifted sequence, and the rank at a position.
    let pos = |order: ShiftOrder, r: usize| match order {
        ShiftOrder::Rank => r as i64,
        ShiftOrder::Ring => i64::from(ginv(r as u32)),
    };
    let at = |order: ShiftOrder, i: i64| match order {
        ShiftOrder::Rank => i as usize,
        ShiftOrder::Ring => gray(i as u32) as usize,
    };
    for q in [1i64, 3, -1, -3, -5, p / 2, 0] {
        for (order, alg) in [
            (ShiftOrder::Rank, Algorithm::Ecube),
            (ShiftOrder::Ring, Algorithm::Ecube),
            (ShiftOrder::Ring, Algorithm::GrayRing),
        ] {
            let got = s.with(alg).shift(bytes_of(s.seed(s.me), M), q, order)?;
            let src = at(order, (pos(order, s.me) - q).rem_euclid(p));
            ensure!(got == bytes_of(s.seed(src), M), "{q} {order:?} {alg:?}");
        }
    }
    Ok(())
}

pub(super) fn barrier(s: &Scope<'_>) -> Result<()> {
    for alg in [Algorithm::Auto, Algorithm::Hypercube, Algorithm::Tree] {
        s.with(alg).barrier()?;
    }
    Ok(())
}
