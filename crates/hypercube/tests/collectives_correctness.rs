//! Every collective, every algorithm, on cubes of dimension 0..=6 and on subcubes, against
//! sequential references computed from the same pseudo-random data on every node.

use bytes::Bytes;
use hypercube::collectives::{Algorithm, Op, ShiftOrder, Subcube};
use hypercube::transport::local::run_local;
use hypercube::{Error, Node};

/// Deterministic pseudo-random numbers (splitmix64).
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

fn vec_i64(seed: u64, n: usize) -> Vec<i64> {
    (0..n)
        .map(|i| (rnd(seed * 7919 + i as u64) % 1000) as i64 - 500)
        .collect()
}

fn vec_f64(seed: u64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (rnd(seed * 31 + i as u64) % 10_000) as f64 / 7.0)
        .collect()
}

/// Affine maps x ↦ a·x + b (mod 2^32) packed as (a << 32) | b; composition "first the left
/// operand, then the right" is associative but not commutative.
fn affine(l: u64, r: u64) -> u64 {
    let (a1, b1) = (l >> 32, l & 0xFFFF_FFFF);
    let (a2, b2) = (r >> 32, r & 0xFFFF_FFFF);
    let a = a1.wrapping_mul(a2) & 0xFFFF_FFFF;
    let b = (a2.wrapping_mul(b1).wrapping_add(b2)) & 0xFFFF_FFFF;
    (a << 32) | b
}

fn vec_affine(seed: u64, n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| rnd(seed * 131 + i as u64) | (1 << 32))
        .collect()
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

fn part(n: usize, p: usize, j: usize) -> std::ops::Range<usize> {
    (j * n / p)..((j + 1) * n / p)
}

/// Runs every operation on the subcube of dimension k and checks it on this node.
fn check_node(node: &Node, k: u32, round: u64) {
    let sc = node.subcube(k);
    let p = sc.size() as usize;
    let me = sc.rank() as usize;
    let base = sc.base();
    let seed = |r: usize| round * 100_000 + (base as u64 + r as u64) * 97 + k as u64;
    let roots = [0usize, p - 1, (rnd(round) as usize) % p];

    // Broadcast.
    for (alg, len) in [
        (Algorithm::Hypercube, 13),
        (Algorithm::ScatterAllgather, 101),
        (Algorithm::Auto, 0),
    ] {
        for &root in &roots {
            let data = if me == root {
                bytes_of(seed(root), len)
            } else {
                Bytes::new()
            };
            let got = sc.with(alg).bcast(base + root as u32, data, len).unwrap();
            assert_eq!(got, bytes_of(seed(root), len), "bcast {alg:?} root {root}");
        }
    }

    // Reduce, allreduce, reduce_scatter, scan, exscan.
    let n = 2 * p + 3;
    let ints: Vec<Vec<i64>> = (0..p).map(|r| vec_i64(seed(r), n)).collect();
    let floats: Vec<Vec<f64>> = (0..p).map(|r| vec_f64(seed(r), n)).collect();
    let aff: Vec<Vec<u64>> = (0..p).map(|r| vec_affine(seed(r), n)).collect();
    let sum = fold(&ints, i64::wrapping_add);
    let max = fold(&floats, f64::max);
    let comp = fold(&aff, affine);
    let f = &affine as &dyn Fn(u64, u64) -> u64;
    for alg in [Algorithm::Hypercube, Algorithm::ReduceScatterGather] {
        for &root in &roots {
            let r = sc
                .with(alg)
                .reduce(base + root as u32, &ints[me], Op::Sum)
                .unwrap();
            assert_eq!(r, (me == root).then(|| sum.clone()), "reduce {alg:?} sum");
            let r = sc
                .with(alg)
                .reduce(base + root as u32, &aff[me], Op::Fn(f))
                .unwrap();
            assert_eq!(
                r,
                (me == root).then(|| comp.clone()),
                "reduce {alg:?} affine root {root}"
            );
        }
    }
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ReduceScatterAllgather,
        Algorithm::Ring,
        Algorithm::Auto,
    ] {
        assert_eq!(
            sc.with(alg).allreduce(&ints[me], Op::Sum).unwrap(),
            sum,
            "allreduce {alg:?}"
        );
        assert_eq!(
            sc.with(alg).allreduce(&floats[me], Op::Max).unwrap(),
            max,
            "allreduce {alg:?} max"
        );
        if alg != Algorithm::Ring {
            assert_eq!(
                sc.with(alg).allreduce(&aff[me], Op::Fn(f)).unwrap(),
                comp,
                "allreduce {alg:?} affine"
            );
        } else if p > 1 {
            assert!(matches!(
                sc.with(alg).allreduce(&aff[me], Op::Fn(f)),
                Err(Error::InvalidArgument(_))
            ));
        }
    }
    for alg in [Algorithm::Hypercube, Algorithm::Ring] {
        let got = sc.with(alg).reduce_scatter(&ints[me], Op::Sum).unwrap();
        assert_eq!(got, sum[part(n, p, me)].to_vec(), "reduce_scatter {alg:?}");
    }
    let got = sc.reduce_scatter(&aff[me], Op::Fn(f)).unwrap();
    assert_eq!(got, comp[part(n, p, me)].to_vec(), "reduce_scatter affine");
    let prefix = fold(&aff[..=me], affine);
    for alg in [Algorithm::Hypercube, Algorithm::Chain, Algorithm::Auto] {
        let sa = sc.with(alg);
        assert_eq!(
            sa.scan(&aff[me], Op::Fn(f)).unwrap(),
            prefix,
            "scan {alg:?}"
        );
        let ex = sa.exscan(&aff[me], Op::Fn(f)).unwrap();
        assert_eq!(
            ex,
            (me > 0).then(|| fold(&aff[..me], affine)),
            "exscan {alg:?}"
        );
        assert_eq!(
            sa.scan(&ints[me], Op::Min).unwrap(),
            fold(&ints[..=me], i64::min),
            "scan min {alg:?}"
        );
    }

    // Scatter, gather, gatherv.
    let m = 5;
    for (&root, alg) in roots
        .iter()
        .flat_map(|r| [(r, Algorithm::Hypercube), (r, Algorithm::Ecube)])
    {
        let sa = sc.with(alg);
        let blocks: Vec<Bytes> = (0..p).map(|j| bytes_of(seed(root) + j as u64, m)).collect();
        let mine = sa
            .scatter(
                base + root as u32,
                if me == root { &blocks } else { &[] },
                m,
            )
            .unwrap();
        assert_eq!(mine, blocks[me], "scatter {alg:?} root {root}");
        let all = sa
            .gather(base + root as u32, bytes_of(seed(me), m))
            .unwrap();
        let want: Vec<Bytes> = (0..p).map(|j| bytes_of(seed(j), m)).collect();
        assert_eq!(
            all,
            (me == root).then(|| want.clone()),
            "gather {alg:?} root {root}"
        );
        let all = sa
            .gatherv(base + root as u32, bytes_of(seed(me), me))
            .unwrap();
        let want: Vec<Bytes> = (0..p).map(|j| bytes_of(seed(j), j)).collect();
        assert_eq!(
            all,
            (me == root).then_some(want),
            "gatherv {alg:?} root {root}"
        );
    }

    // Allgather, allgatherv.
    let want: Vec<Bytes> = (0..p).map(|j| bytes_of(seed(j), m)).collect();
    let wantv: Vec<Bytes> = (0..p).map(|j| bytes_of(seed(j), j % 4)).collect();
    for alg in [Algorithm::Hypercube, Algorithm::Ring, Algorithm::Mesh] {
        assert_eq!(
            sc.with(alg).allgather(want[me].clone()).unwrap(),
            want,
            "allgather {alg:?}"
        );
        assert_eq!(
            sc.with(alg).allgatherv(wantv[me].clone()).unwrap(),
            wantv,
            "allgatherv {alg:?}"
        );
    }

    // Alltoall, alltoallv: block from s to t is bytes_of(seed(s) + t).
    let mine: Vec<Bytes> = (0..p).map(|t| bytes_of(seed(me) + t as u64, m)).collect();
    let want: Vec<Bytes> = (0..p).map(|s| bytes_of(seed(s) + me as u64, m)).collect();
    for alg in [
        Algorithm::StoreForward,
        Algorithm::Pairwise,
        Algorithm::Ring,
        Algorithm::Mesh,
    ] {
        assert_eq!(
            sc.with(alg).alltoall(&mine).unwrap(),
            want,
            "alltoall {alg:?}"
        );
    }
    let minev: Vec<Bytes> = (0..p)
        .map(|t| bytes_of(seed(me) + t as u64, (me + t) % 3))
        .collect();
    let wantv: Vec<Bytes> = (0..p)
        .map(|s| bytes_of(seed(s) + me as u64, (s + me) % 3))
        .collect();
    assert_eq!(sc.alltoallv(&minev).unwrap(), wantv, "alltoallv");

    // Shifts in both orders and directions.
    let pos = |order: ShiftOrder, x: usize| match order {
        ShiftOrder::Rank => x,
        ShiftOrder::Ring => hypercube::topology::ginv(x as u32) as usize,
    };
    let at = |order: ShiftOrder, i: usize| match order {
        ShiftOrder::Rank => i,
        ShiftOrder::Ring => hypercube::topology::gray(i as u32) as usize,
    };
    for q in [1i64, 3, -1, -5, p as i64 / 2, 0] {
        for (order, alg) in [
            (ShiftOrder::Rank, Algorithm::Ecube),
            (ShiftOrder::Ring, Algorithm::Ecube),
            (ShiftOrder::Ring, Algorithm::GrayRing),
        ] {
            let got = sc.with(alg).shift(bytes_of(seed(me), m), q, order).unwrap();
            let src = at(
                order,
                (pos(order, me) as i64 - q).rem_euclid(p as i64) as usize,
            );
            assert_eq!(got, bytes_of(seed(src), m), "shift {q} {order:?} {alg:?}");
        }
    }
    sc.barrier().unwrap();
}

fn check(d: u32, ks: &[u32]) {
    run_local(d, |node| {
        for (round, &k) in ks.iter().enumerate() {
            check_node(&node, k, round as u64 + 1);
        }
    });
}

#[test]
fn whole_cube_d0_to_d4() {
    for d in 0..=4 {
        check(d, &[d]);
    }
}

#[test]
fn whole_cube_d5_d6() {
    check(5, &[5]);
    check(6, &[6]);
}

/// The chain scan sends 64 KiB segments: vectors of several segments (and a partial one),
/// of 1-byte and 8-byte elements, with a non-commutative operator.
#[test]
fn chain_scan_across_segments() {
    for d in 0..=4u32 {
        run_local(d, |node| {
            let me = node.mynode() as usize;
            let p = node.numnodes() as usize;
            let n = 3 * 8192 + 5;
            let aff: Vec<Vec<u64>> = (0..p).map(|r| vec_affine(r as u64 + 9, n)).collect();
            let f = &affine as &dyn Fn(u64, u64) -> u64;
            let c = node.cube().with(Algorithm::Chain);
            assert_eq!(
                c.scan(&aff[me], Op::Fn(f)).unwrap(),
                fold(&aff[..=me], affine)
            );
            assert_eq!(
                c.exscan(&aff[me], Op::Fn(f)).unwrap(),
                (me > 0).then(|| fold(&aff[..me], affine))
            );
            let bytes: Vec<Vec<u8>> = (0..p)
                .map(|r| (0..2 * 65536 + 7).map(|i| (i * 7 + r) as u8).collect())
                .collect();
            assert_eq!(
                c.scan(&bytes[me], Op::Max).unwrap(),
                fold(&bytes[..=me], u8::max)
            );
        });
    }
}

#[test]
fn subcubes() {
    check(3, &[0, 1, 2]);
    check(4, &[3, 1]);
    check(5, &[2]);
}

#[test]
fn bad_arguments_are_errors_not_panics() {
    run_local(2, |node| {
        let me = node.mynode();
        // A root outside the caller's subcube.
        let sub: Subcube<'_> = node.subcube(1);
        let outside = me ^ 2;
        assert!(matches!(
            sub.bcast(outside, Bytes::new(), 0),
            Err(Error::InvalidNode { .. })
        ));
        assert!(matches!(
            sub.reduce(outside, &[1i32], Op::Sum),
            Err(Error::InvalidNode { .. })
        ));
        assert!(matches!(
            node.cube().gather(9, Bytes::new()),
            Err(Error::InvalidNode { .. })
        ));
        // A subcube larger than the cube.
        assert!(matches!(
            node.subcube(3).allreduce(&[1u8], Op::Sum),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            node.subcube(3).barrier(),
            Err(Error::InvalidArgument(_))
        ));
        // An algorithm that does not implement the operation.
        assert!(matches!(
            node.cube()
                .with(Algorithm::Pairwise)
                .allgather(Bytes::new()),
            Err(Error::InvalidArgument(_))
        ));
        // Wrong block counts and lengths.
        assert!(matches!(
            node.cube().alltoall(&[Bytes::new()]),
            Err(Error::InvalidArgument(_))
        ));
        let uneven: Vec<Bytes> = (0..4).map(|i| Bytes::from(vec![0u8; i])).collect();
        assert!(matches!(
            node.cube().alltoall(&uneven),
            Err(Error::InvalidArgument(_))
        ));
        // Lengths that differ between members: every member gets an error.
        let n = 1 + (me as usize & 1);
        assert!(matches!(
            node.cube().allreduce(&vec![1.0f32; n], Op::Sum),
            Err(Error::InvalidArgument(_))
        ));
        node.cube().barrier().unwrap();
        // Scatter: blocks that are not block_len long fail at the root (here each node is
        // the root of its own 0-cube); a member that passes another block_len than the
        // root gets an error naming the length it received, the others their blocks.
        let blocks: Vec<Bytes> = (0..4).map(|_| Bytes::from(vec![7u8; 3])).collect();
        assert!(matches!(
            node.subcube(0).scatter(me, &blocks[..1], 4),
            Err(Error::InvalidArgument(_))
        ));
        for alg in [Algorithm::Hypercube, Algorithm::Ecube] {
            let mine = if me == 0 { &blocks[..] } else { &[] };
            let len = if me == 2 { 5 } else { 3 };
            let got = node.cube().with(alg).scatter(0, mine, len);
            if me == 2 {
                assert!(matches!(got, Err(Error::InvalidArgument(ref s)) if s.contains("3 bytes")));
            } else {
                assert_eq!(got.unwrap(), blocks[0]);
            }
        }
        // Gather with blocks of different lengths: the root says so (the others' sends
        // complete).
        for alg in [Algorithm::Hypercube, Algorithm::Ecube] {
            let got = node
                .cube()
                .with(alg)
                .gather(0, Bytes::from(vec![1u8; 2 + (me as usize == 3) as usize]));
            if me == 0 {
                assert!(
                    matches!(got, Err(Error::InvalidArgument(_))),
                    "{alg:?}: {got:?}"
                );
            }
        }
        node.cube().barrier().unwrap();
        // Still usable afterwards.
        assert_eq!(node.cube().allreduce(&[1u16], Op::Sum).unwrap(), vec![4]);
    });
}

#[test]
fn every_element_type() {
    run_local(2, |node| {
        let c = node.cube();
        let r = node.mynode();
        assert_eq!(c.allreduce(&[r as i8 - 2], Op::Sum).unwrap(), vec![-2]);
        assert_eq!(c.allreduce(&[r as u8 + 1], Op::Prod).unwrap(), vec![24]);
        assert_eq!(c.allreduce(&[r as i16], Op::Max).unwrap(), vec![3]);
        assert_eq!(c.allreduce(&[r as u16], Op::Min).unwrap(), vec![0]);
        assert_eq!(c.allreduce(&[r as i32], Op::Sum).unwrap(), vec![6]);
        assert_eq!(c.allreduce(&[r], Op::Sum).unwrap(), vec![6u32]);
        assert_eq!(c.allreduce(&[-(r as i64)], Op::Min).unwrap(), vec![-3]);
        assert_eq!(
            c.allreduce(&[u64::MAX], Op::Sum).unwrap(),
            vec![u64::MAX - 3]
        );
        assert_eq!(c.allreduce(&[0.5f32], Op::Sum).unwrap(), vec![2.0]);
        let g = |a: f64, b: f64| a + b + 1.0;
        assert_eq!(
            c.allreduce(&[r as f64], Op::Commutative(&g)).unwrap(),
            vec![9.0]
        );
    });
}
