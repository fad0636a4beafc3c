//! Node program for the cross-process collective tests: every operation of
//! `hypercube::collectives`, with every algorithm, on the whole cube and on a subcube,
//! checked against a reference each node computes from the same pseudo-random data.
//! Prints `OK <op> <scope>` per operation; any mismatch exits non-zero.

use anyhow::{ensure, Context, Result};
use bytes::Bytes;
use hypercube::collectives::{Algorithm, Op, ShiftOrder, Subcube};
use hypercube::topology::{ginv, gray};
use hypercube::Node;

fn rnd(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn bytes_of(seed: u64, len: usize) -> Bytes {
    (0..len)
        .map(|i| rnd(seed * 1000 + i as u64) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// Affine maps x ↦ a·x + b (mod 2^32) packed in a u64: associative, not commutative.
fn affine(l: u64, r: u64) -> u64 {
    let (a1, b1) = (l >> 32, l & 0xFFFF_FFFF);
    let (a2, b2) = (r >> 32, r & 0xFFFF_FFFF);
    ((a1.wrapping_mul(a2) & 0xFFFF_FFFF) << 32)
        | (a2.wrapping_mul(b1).wrapping_add(b2) & 0xFFFF_FFFF)
}

fn fold<T: Copy>(xs: &[Vec<T>], f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut acc = xs[0].clone();
    for x in &xs[1..] {
        for (a, &b) in acc.iter_mut().zip(x) {
            *a = f(*a, b);
        }
    }
    acc
}

struct Scope {
    name: &'static str,
    p: usize,
    me: usize,
    base: u32,
}

impl Scope {
    fn seed(&self, r: usize) -> u64 {
        (self.base as u64 + r as u64) * 7 + self.p as u64
    }
    fn ok(&self, op: &str) {
        println!("OK {op} {}", self.name);
    }
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let d = node.cubedim();
    run(&node, node.cube(), "cube")?;
    run(&node, node.subcube(d.saturating_sub(1)), "subcube")?;
    node.finalize()?;
    Ok(())
}

fn run(node: &Node, sc: Subcube<'_>, name: &'static str) -> Result<()> {
    let s = Scope {
        name,
        p: sc.size() as usize,
        me: sc.rank() as usize,
        base: sc.base(),
    };
    let (p, me, base) = (s.p, s.me, s.base);
    let root = p - 1;
    let long = 100_000; // above the eager limit: exercises rendezvous transfers

    for (alg, len) in [
        (Algorithm::Hypercube, 33),
        (Algorithm::ScatterAllgather, long),
    ] {
        let data = if me == root {
            bytes_of(s.seed(root), len)
        } else {
            Bytes::new()
        };
        let got = sc.with(alg).bcast(base + root as u32, data, len)?;
        ensure!(got == bytes_of(s.seed(root), len), "bcast {alg:?}");
    }
    s.ok("bcast");

    let n = 3 * p + 1;
    let aff: Vec<Vec<u64>> = (0..p)
        .map(|r| {
            (0..n)
                .map(|i| rnd(s.seed(r) + i as u64) | (1 << 32))
                .collect()
        })
        .collect();
    let ints: Vec<Vec<i64>> = (0..p)
        .map(|r| {
            (0..n)
                .map(|i| (rnd(s.seed(r) * 3 + i as u64) % 100) as i64)
                .collect()
        })
        .collect();
    let comp = fold(&aff, affine);
    let sum = fold(&ints, i64::wrapping_add);
    let f = &affine as &dyn Fn(u64, u64) -> u64;
    for alg in [Algorithm::Hypercube, Algorithm::ReduceScatterGather] {
        let got = sc.with(alg).reduce(base, &aff[me], Op::Fn(f))?;
        ensure!(got == (me == 0).then(|| comp.clone()), "reduce {alg:?}");
    }
    s.ok("reduce");
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ReduceScatterAllgather,
        Algorithm::Ring,
    ] {
        ensure!(
            sc.with(alg).allreduce(&ints[me], Op::Sum)? == sum,
            "allreduce {alg:?}"
        );
    }
    let big: Vec<f64> = (0..long / 8).map(|i| (i % 17) as f64).collect();
    let got = sc
        .with(Algorithm::ReduceScatterAllgather)
        .allreduce(&big, Op::Sum)?;
    ensure!(
        got.iter().zip(&big).all(|(g, b)| *g == b * p as f64),
        "allreduce long"
    );
    s.ok("allreduce");
    for alg in [Algorithm::Hypercube, Algorithm::Ring] {
        let got = sc.with(alg).reduce_scatter(&ints[me], Op::Sum)?;
        ensure!(
            got == sum[me * n / p..(me + 1) * n / p],
            "reduce_scatter {alg:?}"
        );
    }
    s.ok("reduce_scatter");
    for alg in [Algorithm::Hypercube, Algorithm::Chain] {
        let sa = sc.with(alg);
        ensure!(
            sa.scan(&aff[me], Op::Fn(f))? == fold(&aff[..=me], affine),
            "scan {alg:?}"
        );
        ensure!(
            sa.exscan(&aff[me], Op::Fn(f))? == (me > 0).then(|| fold(&aff[..me], affine)),
            "exscan {alg:?}"
        );
    }
    // Several 64 KiB segments of the chain, and the automatic choice at 1 MiB.
    let long: Vec<Vec<u64>> = (0..p)
        .map(|r| {
            (0..(1 << 17) + 3)
                .map(|i| rnd(s.seed(r) + 3 * i as u64) | (1 << 32))
                .collect()
        })
        .collect();
    for alg in [Algorithm::Chain, Algorithm::Auto] {
        ensure!(
            sc.with(alg).scan(&long[me], Op::Fn(f))? == fold(&long[..=me], affine),
            "long scan {alg:?}"
        );
    }
    s.ok("scan");

    let m = 9;
    let blocks: Vec<Bytes> = (0..p).map(|j| bytes_of(s.seed(j) + 5, m)).collect();
    let want: Vec<Bytes> = (0..p).map(|j| bytes_of(s.seed(j), m)).collect();
    let wantv: Vec<Bytes> = (0..p).map(|j| bytes_of(s.seed(j), j % 5)).collect();
    // A 3-hop block of 200 KiB (rendezvous) through the e-cube scatter and gather too.
    let big: Vec<Bytes> = (0..p).map(|j| bytes_of(s.seed(j) + 9, 200 << 10)).collect();
    for alg in [Algorithm::Hypercube, Algorithm::Ecube, Algorithm::Auto] {
        let sa = sc.with(alg);
        let got = sa.scatter(
            base + root as u32,
            if me == root { &blocks } else { &[] },
            m,
        )?;
        ensure!(got == blocks[me], "scatter {alg:?}");
        let got = sa.scatter(base, if me == 0 { &big } else { &[] }, 200 << 10)?;
        ensure!(got == big[me], "long scatter {alg:?}");
        let got = sa.gather(base + root as u32, want[me].clone())?;
        ensure!(got == (me == root).then(|| want.clone()), "gather {alg:?}");
        let got = sa.gather(base, big[me].clone())?;
        ensure!(got == (me == 0).then(|| big.clone()), "long gather {alg:?}");
        let got = sa.gatherv(base, wantv[me].clone())?;
        ensure!(got == (me == 0).then(|| wantv.clone()), "gatherv {alg:?}");
    }
    s.ok("scatter");
    s.ok("gather");
    s.ok("gatherv");
    for alg in [Algorithm::Hypercube, Algorithm::Ring, Algorithm::Mesh] {
        ensure!(
            sc.with(alg).allgather(want[me].clone())? == want,
            "allgather {alg:?}"
        );
        ensure!(
            sc.with(alg).allgatherv(wantv[me].clone())? == wantv,
            "allgatherv {alg:?}"
        );
    }
    s.ok("allgather");
    s.ok("allgatherv");

    let mine: Vec<Bytes> = (0..p).map(|t| bytes_of(s.seed(me) + t as u64, m)).collect();
    let want: Vec<Bytes> = (0..p)
        .map(|src| bytes_of(s.seed(src) + me as u64, m))
        .collect();
    for alg in [
        Algorithm::StoreForward,
        Algorithm::Pairwise,
        Algorithm::Ring,
        Algorithm::Mesh,
    ] {
        ensure!(sc.with(alg).alltoall(&mine)? == want, "alltoall {alg:?}");
    }
    s.ok("alltoall");
    let minev: Vec<Bytes> = (0..p)
        .map(|t| bytes_of(s.seed(me) + t as u64, (me + t) % 4))
        .collect();
    let wantv: Vec<Bytes> = (0..p)
        .map(|src| bytes_of(s.seed(src) + me as u64, (src + me) % 4))
        .collect();
    ensure!(sc.alltoallv(&minev)? == wantv, "alltoallv");
    s.ok("alltoallv");

    for q in [1i64, -3, p as i64 / 2] {
        let got = sc
            .with(Algorithm::Ecube)
            .shift(bytes_of(s.seed(me), m), q, ShiftOrder::Rank)?;
        let src = (me as i64 - q).rem_euclid(p as i64) as usize;
        ensure!(got == bytes_of(s.seed(src), m), "shift rank {q}");
        for alg in [Algorithm::Ecube, Algorithm::GrayRing] {
            let got = sc
                .with(alg)
                .shift(bytes_of(s.seed(me), m), q, ShiftOrder::Ring)?;
            let pos = (ginv(me as u32) as i64 - q).rem_euclid(p as i64) as u32;
            ensure!(
                got == bytes_of(s.seed(gray(pos) as usize), m),
                "shift ring {q} {alg:?}"
            );
        }
    }
    s.ok("shift");
    sc.barrier().context("barrier")?;
    s.ok("barrier");
    let _ = node;
    Ok(())
}
