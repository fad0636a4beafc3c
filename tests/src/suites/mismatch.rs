//! Collectives called with lengths the members disagree on, written once for both
//! transports: `run` is called by every node of a cube — over TCP by the node program
//! `mismatch_suite` (`tests/tests/mismatch.rs`) and on threads by
//! `tests/tests/mismatch_local.rs`. One member (node 2, or node 1 on a 1-cube) passes
//! another number of elements than the others, in every operation whose members must pass
//! the same length, by every algorithm. Each member must return the right result or an
//! [`Error::InvalidArgument`] — never a wrong result, never another error (a peer "gone"
//! is what a hang becomes on threads), and quickly — and the cube must stay usable.
//!
//! The shapes that used to fail: the all-to-all by store-and-forward on a 3-cube with node 2
//! passing 2 elements per block where the others pass 4 gave nodes 1 and 5 a wrong result
//! and no error (node 3 passed on node 2's two short blocks as one block of the right
//! length); the ring and mesh all-to-alls, and every reduction, hung the members that had
//! not seen the odd length (the members that had stopped at once, and the others waited).

use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Result};
use hypercube::collectives::select::choose;
use hypercube::collectives::{Algorithm, Op, Operation, Subcube};
use hypercube::{Error, Node};

/// The checks `run` reports, in order.
pub const CHECK_NAMES: [&str; 10] = [
    "alltoall",
    "allreduce",
    "reduce",
    "reduce_scatter",
    "allgather",
    "gather",
    "bcast",
    "own argument",
    "across a threshold",
    "usable after",
];

/// How long one failing call may take on any member (it takes milliseconds; a hang is
/// what this catches).
const QUICK: Duration = Duration::from_secs(10);

/// The node that passes another length.
fn odd(p: u32) -> u32 {
    if p > 2 {
        2
    } else {
        1
    }
}

/// What one member got: `Ok(true)` the right result, `Ok(false)` an `InvalidArgument`
/// (its text returned through `text`), else the reason the suite fails.
fn judge<T: PartialEq + std::fmt::Debug>(
    what: &str,
    r: hypercube::Result<T>,
    want: impl FnOnce() -> T,
    t0: Instant,
    text: &mut String,
) -> Result<bool> {
    ensure!(
        t0.elapsed() < QUICK,
        "{what}: took {:?} (a hang)",
        t0.elapsed()
    );
    match r {
        Ok(v) => {
            let w = want();
            ensure!(
                v == w,
                "{what}: a wrong result and no error: {v:?}, not {w:?}"
            );
            Ok(true)
        }
        Err(Error::InvalidArgument(m)) => {
            *text = m;
            Ok(false)
        }
        Err(e) => bail!("{what}: another error than InvalidArgument: {e}"),
    }
}

/// Every check with blocks of 4 and 20 000 elements; the names of those passed.
pub fn run(node: &Node) -> Result<Vec<&'static str>> {
    run_sizes(node, &[4, 20_000])
}

/// Every check with `base` elements per block (the odd member passes half), for each of
/// `sizes`; the names of those passed (the last size's).
///
/// Over TCP, sizes above the eager limit (20 000 elements: 80 000 bytes of `u32`) send by
/// rendezvous: a member whose receive takes the failure notice instead of a partner's
/// message must still let that partner's send complete (the failed call's messages are
/// dropped, `Node::discard_call`), or both wait forever (issue 25).
pub fn run_sizes(node: &Node, sizes: &[usize]) -> Result<Vec<&'static str>> {
    let mut done = Vec::new();
    let cube = node.cube();
    let p = cube.size();
    let me = cube.rank();
    if p < 2 {
        return Ok(CHECK_NAMES.to_vec());
    }
    for &base in sizes {
        done.clear();
        let m = |r: u32| if r == odd(p) { base / 2 } else { base };
        let mut text = String::new();

        // All-to-all: every member receives the odd member's blocks, so every member fails.
        for alg in [
            Algorithm::Auto,
            Algorithm::StoreForward,
            Algorithm::Pairwise,
            Algorithm::Ecube,
            Algorithm::Ring,
            Algorithm::Mesh,
        ] {
            let what = format!("alltoall_slice {alg:?} m {base}");
            let data: Vec<u32> = (0..p)
                .flat_map(|t| (0..m(me)).map(move |i| me << 24 | t << 16 | i as u32))
                .collect();
            let t0 = Instant::now();
            let r = cube.with(alg).alltoall_slice(&data);
            let ok = judge(&what, r, Vec::new, t0, &mut text)?;
            ensure!(!ok, "{what}: completed on node {me}");
            ensure!(
                text.contains("alltoallv_slice"),
                "{what}: the error does not name alltoallv_slice: {text}"
            );
            let mut out = vec![0u32; data.len()];
            let t0 = Instant::now();
            let r = cube.with(alg).alltoall_into(&data, &mut out);
            ensure!(
                !judge(&what, r, || (), t0, &mut text)?,
                "{what}: into completed"
            );
        }
        done.push("alltoall");

        let ones = |r: u32| vec![1.0f64 + f64::from(r); m(r)];
        let sum = || vec![(1..=p).map(f64::from).sum::<f64>(); base];
        for alg in [
            Algorithm::Auto,
            Algorithm::Hypercube,
            Algorithm::ReduceScatterAllgather,
            Algorithm::Ring,
            Algorithm::AllPort,
        ] {
            let what = format!("allreduce {alg:?} m {base}");
            let t0 = Instant::now();
            let r = cube.with(alg).allreduce(&ones(me), Op::Sum);
            ensure!(!judge(&what, r, sum, t0, &mut text)?, "{what}: completed");
        }
        done.push("allreduce");

        for alg in [
            Algorithm::Auto,
            Algorithm::Hypercube,
            Algorithm::ReduceScatterGather,
        ] {
            let what = format!("reduce {alg:?} m {base}");
            let t0 = Instant::now();
            let r = cube.with(alg).reduce(0, &ones(me), Op::Sum);
            let want = || (me == 0).then(sum);
            judge(&what, r, want, t0, &mut text)?;
        }
        done.push("reduce");

        for alg in [
            Algorithm::Auto,
            Algorithm::Hypercube,
            Algorithm::Ring,
            Algorithm::AllPort,
        ] {
            let what = format!("reduce_scatter {alg:?} m {base}");
            let data = vec![1.0f64; m(me) * p as usize];
            let t0 = Instant::now();
            let r = cube.with(alg).reduce_scatter(&data, Op::Sum);
            let want = || vec![f64::from(p); base];
            ensure!(!judge(&what, r, want, t0, &mut text)?, "{what}: completed");
        }
        done.push("reduce_scatter");

        for alg in [
            Algorithm::Auto,
            Algorithm::Hypercube,
            Algorithm::Ring,
            Algorithm::Mesh,
            Algorithm::AllPort,
        ] {
            let what = format!("allgather_slice {alg:?} m {base}");
            let t0 = Instant::now();
            let r = cube.with(alg).allgather_slice(&vec![me; m(me)]);
            ensure!(
                !judge(&what, r, Vec::new, t0, &mut text)?,
                "{what}: completed"
            );
        }
        done.push("allgather");

        for alg in [Algorithm::Auto, Algorithm::Hypercube, Algorithm::Ecube] {
            let what = format!("gather_slice {alg:?} m {base}");
            let t0 = Instant::now();
            let r = cube.with(alg).gather_slice(1, &vec![me; m(me)]);
            // Only the root must fail; the others may have handed their block on.
            let ok = judge(&what, r, || None, t0, &mut text)?;
            ensure!(!(ok && me == 1), "{what}: the root completed");
        }
        done.push("gather");

        for alg in [
            Algorithm::Auto,
            Algorithm::Hypercube,
            Algorithm::ScatterAllgather,
        ] {
            // Every member but the odd one passes the root's length.
            let what = format!("bcast_slice {alg:?} m {base}");
            let root = 0;
            let data: Vec<u32> = if me == root {
                (0..base as u32).collect()
            } else {
                Vec::new()
            };
            let t0 = Instant::now();
            let r = cube.with(alg).bcast_slice(root, &data, m(me));
            let ok = judge(&what, r, || (0..base as u32).collect(), t0, &mut text)?;
            ensure!(!(ok && me == odd(p)), "{what}: the odd member completed");
        }
        done.push("bcast");

        // A member's own argument error (one block too many, or a length that does not
        // split into p blocks; the all-to-all's forms and the in-place allgather, which
        // checks its length the same way): it fails at once, and the others, already in
        // the call, fail by its notice naming it instead of waiting for it.
        for (form, alg) in [
            ("alltoall", Algorithm::Auto),
            ("alltoall_slice", Algorithm::Pairwise),
            ("alltoall_into", Algorithm::Pairwise),
            ("allgather_in_place", Algorithm::Auto),
        ] {
            let what = format!("{form} {alg:?} with a bad argument on node {}", odd(p));
            let extra = usize::from(me == odd(p));
            let mut data = vec![me; p as usize * 4 + extra];
            let t0 = Instant::now();
            let r = match form {
                "alltoall" => {
                    let blocks =
                        vec![hypercube::bytes::Bytes::from(vec![me as u8; 8]); p as usize + extra];
                    cube.with(alg).alltoall(&blocks).map(|_| ())
                }
                "alltoall_slice" => cube.with(alg).alltoall_slice(&data).map(|_| ()),
                "alltoall_into" => {
                    let mut out = vec![0; data.len()];
                    cube.with(alg).alltoall_into(&data, &mut out)
                }
                _ => cube.with(alg).allgather_in_place(&mut data),
            };
            ensure!(!judge(&what, r, || (), t0, &mut text)?, "{what}: completed");
            let origin = format!("node {}", cube.base() + odd(p));
            ensure!(
                me == odd(p) || text.contains(&origin),
                "{what}: the error does not name {origin}: {text}"
            );
        }
        done.push("own argument");

        // Lengths on either side of a size at which the automatic choice changes its
        // algorithm: the odd member runs another algorithm than the others, and still
        // every member returns an error or the right result, quickly.
        for op in [
            Operation::Allreduce,
            Operation::Allgather,
            Operation::Alltoall,
            Operation::Bcast,
        ] {
            let Some((small, large)) = threshold(op, cube.dim(), 8) else {
                continue;
            };
            let mm = |r: u32| if r == odd(p) { small } else { large };
            let what = format!("{op:?} Auto, {small} against {large} elements of 8 bytes");
            let t0 = Instant::now();
            match op {
                Operation::Allreduce => {
                    let r = cube.allreduce(&vec![1.0f64; mm(me)], Op::Sum);
                    let want = || vec![f64::from(p); large];
                    ensure!(!judge(&what, r, want, t0, &mut text)?, "{what}: completed");
                }
                Operation::Allgather => {
                    let r = cube.allgather_slice(&vec![u64::from(me); mm(me)]);
                    ensure!(
                        !judge(&what, r, Vec::new, t0, &mut text)?,
                        "{what}: completed"
                    );
                }
                Operation::Alltoall => {
                    let r = cube.alltoall_slice(&vec![u64::from(me); mm(me) * p as usize]);
                    ensure!(
                        !judge(&what, r, Vec::new, t0, &mut text)?,
                        "{what}: completed"
                    );
                }
                _ => {
                    let data: Vec<u64> = if me == 0 { vec![7; large] } else { Vec::new() };
                    let r = cube.bcast_slice(0, &data, mm(me));
                    let ok = judge(&what, r, || vec![7u64; large], t0, &mut text)?;
                    ensure!(!(ok && me == odd(p)), "{what}: the odd member completed");
                }
            }
        }
        done.push("across a threshold");

        usable(&cube)?;
        done.push("usable after");
    }
    Ok(done)
}

/// The cube still works: an all-reduce and an all-to-all with equal lengths.
fn usable(cube: &Subcube<'_>) -> Result<()> {
    let p = cube.size();
    let me = cube.rank();
    let s = cube.allreduce(&[1u64, u64::from(me)], Op::Sum)?;
    ensure!(s == [u64::from(p), u64::from(p * (p - 1) / 2)], "{s:?}");
    let data: Vec<u32> = (0..p).map(|t| me * 100 + t).collect();
    let got = cube.alltoall_slice(&data)?;
    ensure!(
        got == (0..p).map(|s| s * 100 + me).collect::<Vec<_>>(),
        "{got:?}"
    );
    Ok(())
}

/// Two element counts (of `elem` bytes), the second at most 5/4 of the first, for which
/// the automatic choice of `op` on a subcube of dimension `k` picks different algorithms;
/// `None` where it picks one algorithm from 1 element to 2^17.
pub fn threshold(op: Operation, k: u32, elem: usize) -> Option<(usize, usize)> {
    let pick = |n: usize| choose(op, Algorithm::Auto, k, n * elem, true).ok();
    let mut n = 1usize;
    while n < 1 << 17 {
        let next = (n * 5 / 4).max(n + 1);
        if pick(n) != pick(next) {
            return Some((n, next));
        }
        n = next;
    }
    None
}
