//! The typed (`*_slice`, `*_vec`, `*_into`, `*_buf`) and serde (`*_value(s)`) forms of the
//! collectives and of point-to-point, written once for both transports: `run` is called by
//! every node of a cube — over TCP by the node program `typed_suite` (`tests/tests/typed.rs`,
//! where a message above the eager limit waits for its receive) and on threads by
//! `tests/tests/typed_local.rs` (`hypercube::local::run_local`, cubes of dimension 0..=4).
//! Every algorithm, the whole cube and subcubes, against the byte forms and sequential
//! expectations; user types in reductions (a struct with a user function, MaxLoc/MinLoc
//! ties, bitwise ops); `Node::sendrecv` of 8 MiB both ways.

use std::collections::BTreeMap;

use anyhow::{ensure, Result};
use hypercube::collectives::{Algorithm, Loc, Op, Pod, ShiftOrder};
use hypercube::{Error, MsgType, Node, TypeSel};

/// The checks `run` reports, in order.
pub const CHECK_NAMES: [&str; 9] = [
    "sendrecv",
    "exchange",
    "allgather_slice",
    "in place",
    "bcast_value",
    "serde",
    "reductions",
    "forms",
    "forms subcube",
];

/// Every check on this node's cube (and on subcubes of it); the names of those passed. A
/// mismatch in the forms' checks panics (the node program then fails), the others return
/// an error.
pub fn run(node: &Node) -> Result<Vec<&'static str>> {
    let mut done = Vec::new();
    processes(node, &mut done)?;
    let d = node.cubedim();
    check(node, d);
    done.push("forms");
    if d > 0 {
        check(node, d - 1);
    }
    if d > 2 {
        check(node, 1);
    }
    done.push("forms subcube");
    Ok(done)
}

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Sample {
    value: f64,
    weight: f64,
}
// SAFETY: repr(C), two f64: no padding, every bit pattern valid.
unsafe impl Pod for Sample {}

fn processes(node: &Node, done: &mut Vec<&'static str>) -> Result<()> {
    let me = node.mynode();
    let p = node.numnodes();
    let cube = node.cube();

    // Both partners send 8 MiB first: through sendrecv, no deadlock.
    if p > 1 {
        let other = me ^ 1;
        let big = vec![me as u8; 8 << 20];
        let m = node.sendrecv(other, MsgType(5), big, TypeSel::Is(5))?;
        ensure!(m.data().len() == 8 << 20 && m.data().iter().all(|&b| b as u32 == other));
    }
    done.push("sendrecv");

    // Subcube exchange: 8 MiB both ways across every dimension (above the eager limit),
    // then a halo of 100 KiB per dimension, all at once.
    for j in 0..node.cubedim() {
        let from = me ^ (1 << j);
        let got = cube.exchange_vec(j, vec![me as u16; 4 << 20])?;
        ensure!(got.len() == 4 << 20 && got.iter().all(|&x| u32::from(x) == from));
        let got = cube.exchange(j, bytes::Bytes::from(vec![me as u8; 8 << 20]))?;
        ensure!(got.len() == 8 << 20 && got.iter().all(|&b| u32::from(b) == from));
    }
    let halo: Vec<Vec<f64>> = (0..node.cubedim())
        .map(|j| vec![f64::from(me * 100 + j); 12_800])
        .collect();
    let got = cube.exchange_neighbours_slice(&halo)?;
    for (j, g) in got.iter().enumerate() {
        let want = f64::from((me ^ (1 << j)) * 100 + j as u32);
        ensure!(
            g.len() == 12_800 && g.iter().all(|&x| x == want),
            "halo {j}"
        );
    }
    // A Gray-code ring's neighbours (across a dimension that depends on the position),
    // 1 MiB each way (above the eager limit).
    if node.cubedim() >= 2 {
        let d = node.cubedim();
        let succ = hypercube::topology::ring_successor(me, d)?;
        let pred = hypercube::topology::ring_predecessor(me, d)?;
        let got =
            cube.exchange_with_slice(&[(succ, vec![me; 1 << 18]), (pred, vec![me; 1 << 18])])?;
        ensure!(
            got == vec![vec![succ; 1 << 18], vec![pred; 1 << 18]],
            "ring halo"
        );
    }
    done.push("exchange");

    for alg in [
        Algorithm::Hypercube,
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::AllPort,
    ] {
        let all = cube.with(alg).allgather_slice(&[me as f64, -(me as f64)])?;
        let want: Vec<f64> = (0..p).flat_map(|r| [r as f64, -(r as f64)]).collect();
        ensure!(all == want, "allgather_slice {alg:?}");
    }
    done.push("allgather_slice");

    super::in_place::run(node)?;
    done.push("in place");

    let text: String = cube.bcast_value(p - 1, (me == p - 1).then(|| "z".repeat(100_000)))?;
    ensure!(text.len() == 100_000);
    // Lengths the leaves do not know: short (in the first broadcast, 16 384 elements: 64 KiB,
    // the longest that goes there), long (after it), and empty, from every algorithm of the
    // handle.
    for alg in [
        Algorithm::Auto,
        Algorithm::Hypercube,
        Algorithm::ScatterAllgather,
    ] {
        for n in [0usize, 3, 16_384, 16_385, 20_000, 300_000] {
            let want: Vec<u32> = (0..n as u32).map(|i| i ^ 0x5a5a).collect();
            let data = if me == 0 { want.clone() } else { Vec::new() };
            let got = cube.with(alg).bcast_vec(0, data)?;
            ensure!(got == want, "bcast_vec {n} elements, {alg:?}");
            let v: Vec<u32> = cube
                .with(alg)
                .bcast_value(0, (me == 0).then(|| want.clone()))?;
            ensure!(v == want, "bcast_value {n} elements, {alg:?}");
        }
    }
    done.push("bcast_value");

    let names = cube.allgather_value(&format!("rank {me}"))?;
    ensure!(names
        .iter()
        .enumerate()
        .all(|(r, n)| *n == format!("rank {r}")));
    let back = cube.alltoall_values((0..p).map(|j| vec![me; j as usize]).collect())?;
    ensure!(back
        .iter()
        .enumerate()
        .all(|(i, v)| *v == vec![i as u32; me as usize]));
    done.push("serde");

    let add = |a: Sample, b: Sample| Sample {
        value: a.value + b.value,
        weight: a.weight + b.weight,
    };
    let s = cube.allreduce(
        &[Sample {
            value: me as f64,
            weight: 1.0,
        }],
        Op::Commutative(&add),
    )?;
    ensure!(s[0].weight == p as f64 && s[0].value == (p * (p - 1) / 2) as f64);
    let best = cube.allreduce(&[Loc::new((me / 2) as f64, me as u64)], Op::MaxLoc)?;
    ensure!(best[0] == Loc::new(((p - 1) / 2) as f64, (2 * ((p - 1) / 2)) as u64));
    done.push("reductions");
    Ok(())
}

fn vals(seed: u64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (seed * 1000 + i as u64) as f64 * 0.5 - 7.0)
        .collect()
}

fn ints(seed: u64, n: usize) -> Vec<u32> {
    (0..n).map(|i| (seed as u32) * 1000 + i as u32).collect()
}

/// A value of a size that depends on its owner.
fn record(r: usize) -> BTreeMap<String, Vec<u32>> {
    (0..r % 3 + 1)
        .map(|i| (format!("k{r}-{i}"), (0..r as u32 * 7 + i as u32).collect()))
        .collect()
}

fn check(node: &Node, k: u32) {
    let sc = node.subcube(k);
    let p = sc.size() as usize;
    let me = sc.rank() as usize;
    let base = sc.base();
    let roots = [0usize, p - 1, p / 2];

    // bcast: typed and serde, every algorithm, against the byte form.
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ScatterAllgather,
        Algorithm::Auto,
    ] {
        let s = sc.with(alg);
        for &root in &roots {
            let want = vals(root as u64, 37);
            let data = if me == root { want.clone() } else { vec![] };
            let got = s
                .bcast_slice(base + root as u32, &data, want.len())
                .unwrap();
            assert_eq!(got, want, "bcast_slice {alg:?} root {root}");
            let bytes = s
                .bcast(
                    base + root as u32,
                    if me == root {
                        bytemuck_f64(&want)
                    } else {
                        bytes::Bytes::new()
                    },
                    want.len() * 8,
                )
                .unwrap();
            assert_eq!(bytemuck_f64(&got), bytes, "bcast_slice = bcast {alg:?}");
            let v = s
                .bcast_value(base + root as u32, (me == root).then(|| record(root + 5)))
                .unwrap();
            assert_eq!(v, record(root + 5), "bcast_value {alg:?} root {root}");
        }
    }

    // scatter / gather(v): typed and serde.
    for alg in [Algorithm::Hypercube, Algorithm::Ecube, Algorithm::Auto] {
        let s = sc.with(alg);
        for &root in &roots {
            let r = base + root as u32;
            let all: Vec<u32> = (0..p).flat_map(|j| ints(j as u64, 3)).collect();
            let mine = s
                .scatter_slice(r, if me == root { &all } else { &[] }, 3)
                .unwrap();
            assert_eq!(mine, ints(me as u64, 3), "scatter_slice {alg:?}");
            let recs: Vec<_> = (0..p).map(record).collect();
            let v = s
                .scatter_values(r, (me == root).then(|| recs.clone()))
                .unwrap();
            assert_eq!(v, record(me), "scatter_values {alg:?} root {root}");

            let g = s.gather_slice(r, &ints(me as u64, 4)).unwrap();
            let want: Vec<u32> = (0..p).flat_map(|j| ints(j as u64, 4)).collect();
            assert_eq!(g, (me == root).then_some(want), "gather_slice {alg:?}");
            let g = s.gatherv_slice(r, &ints(me as u64, me)).unwrap();
            let want: Vec<Vec<u32>> = (0..p).map(|j| ints(j as u64, j)).collect();
            assert_eq!(g, (me == root).then_some(want), "gatherv_slice {alg:?}");
            let g = s.gather_values(r, &record(me)).unwrap();
            assert_eq!(g, (me == root).then_some(recs), "gather_values {alg:?}");
        }
    }

    // allgather(v).
    for alg in [
        Algorithm::Hypercube,
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::Auto,
    ] {
        let s = sc.with(alg);
        let got = s.allgather_slice(&vals(me as u64, 5)).unwrap();
        let want: Vec<f64> = (0..p).flat_map(|j| vals(j as u64, 5)).collect();
        assert_eq!(got, want, "allgather_slice {alg:?}");
        let got = s.allgatherv_slice(&ints(me as u64, me + 1)).unwrap();
        let want: Vec<Vec<u32>> = (0..p).map(|j| ints(j as u64, j + 1)).collect();
        assert_eq!(got, want, "allgatherv_slice {alg:?}");
        let got = s.allgather_value(&record(me)).unwrap();
        assert_eq!(
            got,
            (0..p).map(record).collect::<Vec<_>>(),
            "allgather_value"
        );
    }

    // alltoall(v): block j of rank i is ints(i * 100 + j, 2).
    for alg in [
        Algorithm::StoreForward,
        Algorithm::Pairwise,
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::Auto,
    ] {
        let data: Vec<u32> = (0..p)
            .flat_map(|j| ints((me * 100 + j) as u64, 2))
            .collect();
        let got = sc.with(alg).alltoall_slice(&data).unwrap();
        let want: Vec<u32> = (0..p)
            .flat_map(|i| ints((i * 100 + me) as u64, 2))
            .collect();
        assert_eq!(got, want, "alltoall_slice {alg:?}");
    }
    for alg in [Algorithm::Pairwise, Algorithm::Auto, Algorithm::Planned] {
        let s = sc.with(alg);
        let blocks: Vec<Vec<u32>> = (0..p)
            .map(|j| ints((me * 100 + j) as u64, j + me))
            .collect();
        let got = s.alltoallv_slice(&blocks).unwrap();
        let want: Vec<Vec<u32>> = (0..p)
            .map(|i| ints((i * 100 + me) as u64, i + me))
            .collect();
        assert_eq!(got, want, "alltoallv_slice {alg:?}");
        let vs: Vec<_> = (0..p).map(|j| (me, j, record(j + me))).collect();
        let got = s.alltoall_values(vs).unwrap();
        let want: Vec<_> = (0..p).map(|i| (i, me, record(i + me))).collect();
        assert_eq!(got, want, "alltoall_values {alg:?}");
    }

    // shift.
    for (alg, order) in [
        (Algorithm::Ecube, ShiftOrder::Rank),
        (Algorithm::Ecube, ShiftOrder::Ring),
        (Algorithm::GrayRing, ShiftOrder::Ring),
        (Algorithm::Auto, ShiftOrder::Rank),
    ] {
        for q in [1i64, -1, 3] {
            let got = sc
                .with(alg)
                .shift_slice(&vals(me as u64, 6), q, order)
                .unwrap();
            let pos = |x: usize| match order {
                ShiftOrder::Rank => x,
                ShiftOrder::Ring => hypercube::topology::ginv(x as u32) as usize,
            };
            let at = |i: usize| match order {
                ShiftOrder::Rank => i,
                ShiftOrder::Ring => hypercube::topology::gray(i as u32) as usize,
            };
            let from = at((pos(me) as i64 - q).rem_euclid(p as i64) as usize);
            assert_eq!(
                got,
                vals(from as u64, 6),
                "shift_slice {alg:?} {order:?} q {q}"
            );
        }
    }

    // User types in reductions.
    check_reductions(node, k);
}

fn bytemuck_f64(xs: &[f64]) -> bytes::Bytes {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A plain struct reduced with a user function: the centre of mass.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Mass {
    weight: f64,
    moment: f64,
    count: u64,
}
// SAFETY: repr(C), three 8-byte fields: no padding; every bit pattern is valid.
unsafe impl Pod for Mass {}

fn check_reductions(node: &Node, k: u32) {
    let sc = node.subcube(k);
    let p = sc.size() as usize;
    let me = sc.rank() as usize;
    let mass = |r: usize| Mass {
        weight: r as f64 + 1.0,
        moment: (r * r) as f64,
        count: 1,
    };
    let add = |a: Mass, b: Mass| Mass {
        weight: a.weight + b.weight,
        moment: a.moment + b.moment,
        count: a.count + b.count,
    };
    let want = (1..p).map(mass).fold(mass(0), add);
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ReduceScatterAllgather,
        Algorithm::Ring,
        Algorithm::Auto,
    ] {
        let got = sc
            .with(alg)
            .allreduce(&[mass(me), mass(me)], Op::Commutative(&add))
            .unwrap();
        assert_eq!(got, vec![want, want], "allreduce struct {alg:?}");
    }
    for alg in [Algorithm::Hypercube, Algorithm::ReduceScatterGather] {
        let got = sc
            .with(alg)
            .reduce(sc.base(), &[mass(me)], Op::Fn(&add))
            .unwrap();
        assert_eq!(got, (me == 0).then(|| vec![want]), "reduce struct {alg:?}");
    }
    let prefix = (1..=me).map(mass).fold(mass(0), add);
    for alg in [Algorithm::Hypercube, Algorithm::Chain] {
        let got = sc.with(alg).scan(&[mass(me)], Op::Fn(&add)).unwrap();
        assert_eq!(got, vec![prefix], "scan struct {alg:?}");
    }
    // A named operator the struct lacks: an error everywhere, nothing sent.
    assert!(matches!(
        sc.allreduce(&[mass(me)], Op::Sum),
        Err(Error::InvalidArgument(_))
    ));

    // MaxLoc / MinLoc: values repeat (r / 2), so every maximum and minimum is tied and
    // the smaller index must win, whatever the algorithm's grouping.
    let loc = Loc::new((me / 2) as f64, me as u64);
    let neg = Loc::new(-((me / 2) as f64), me as u64);
    let top = ((p - 1) / 2) as f64;
    let top_at = if p == 1 { 0 } else { 2 * ((p - 1) / 2) } as u64;
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ReduceScatterAllgather,
        Algorithm::Ring,
        Algorithm::Auto,
    ] {
        let s = sc.with(alg);
        assert_eq!(
            s.allreduce(&[loc, neg], Op::MaxLoc).unwrap(),
            vec![Loc::new(top, top_at), Loc::new(0.0, 0)],
            "maxloc {alg:?}"
        );
        assert_eq!(
            s.allreduce(&[loc, neg], Op::MinLoc).unwrap(),
            vec![Loc::new(0.0, 0), Loc::new(-top, top_at)],
            "minloc {alg:?}"
        );
    }
    // Bitwise and logical operators on integers.
    let bit = 1u64 << me;
    let all = if p == 64 { u64::MAX } else { (1u64 << p) - 1 };
    assert_eq!(sc.allreduce(&[bit], Op::BOr).unwrap(), vec![all]);
    assert_eq!(
        sc.allreduce(&[bit | 1 << 63], Op::BAnd).unwrap(),
        vec![if p == 1 { 1 | 1 << 63 } else { 1 << 63 }]
    );
    assert_eq!(
        sc.allreduce(&[bit], Op::BXor).unwrap(),
        vec![all],
        "distinct bits: xor = or"
    );
    assert_eq!(
        sc.allreduce(&[me as i32], Op::LAnd).unwrap(),
        vec![i32::from(p == 1 && me != 0)]
    );
    assert_eq!(
        sc.allreduce(&[me as i32], Op::LOr).unwrap(),
        vec![i32::from(p > 1)]
    );
    assert!(matches!(
        sc.allreduce(&[1.0f64], Op::BAnd),
        Err(Error::InvalidArgument(_))
    ));
}
