//! The correctness suite of `hypercube::collectives`, one for both transports: every
//! operation with every algorithm that implements it, on the whole cube and on subcubes of
//! several dimensions, checked on every node against a sequential reference computed from
//! the same pseudo-random data (including a non-commutative operator, several roots, empty,
//! uneven and long — rendezvous-sized — payloads, every element type, and bad arguments).
//!
//! [`run`] is called by the node program `coll_suite` (real processes over TCP, through the
//! launcher, Hydra or Slurm) and by `tests/tests/collectives_local.rs` (threads over
//! `hypercube::transport::local`, cubes up to d = 6).

use anyhow::{ensure, Context, Result};
use bytes::Bytes;
use hypercube::collectives::{Algorithm, Element, Op, ShiftOrder, Subcube};
use hypercube::topology::{ginv, gray};
use hypercube::{Error, Node, NodeId};

/// The scopes a check runs on: the whole cube, and subcubes (of the dimensions
/// [`subcube_dims`] lists).
pub const SCOPES: [&str; 2] = ["cube", "subcube"];

/// A message length above the eager limit: its transfers take the rendezvous path.
const LONG: usize = 100_000;

/// One check: every call of one operation on one subcube.
type Check = fn(&Scope<'_>) -> Result<()>;

/// The checks in the order they run, by operation name.
const CHECKS: [(&str, Check); 16] = [
    ("bcast", bcast),
    ("reduce", reduce),
    ("allreduce", allreduce),
    ("reduce_scatter", reduce_scatter),
    ("scan", scan),
    ("scatter", scatter),
    ("gather", gather),
    ("gatherv", gatherv),
    ("allgather", allgather),
    ("allgatherv", allgatherv),
    ("alltoall", alltoall),
    ("alltoallv", alltoallv),
    ("shift", shift),
    ("barrier", barrier),
    ("element_types", element_types),
    ("bad_arguments", bad_arguments),
];

/// The names of the checks [`run`] passes, `<op> <scope>`, in the order it returns them.
pub fn check_names() -> Vec<String> {
    SCOPES
        .iter()
        .flat_map(|scope| CHECKS.iter().map(move |(op, _)| format!("{op} {scope}")))
        .collect()
}

/// The dimensions of the subcubes the `subcube` scope runs on in a d-cube: d−1, (d−1)/2 and
/// 0 (the one 0-subcube when d = 0).
pub fn subcube_dims(d: u32) -> Vec<u32> {
    let top = d.saturating_sub(1);
    let mut ks = vec![top, top / 2, 0];
    ks.dedup();
    ks
}

/// Run every check on this node, first on the whole cube, then on the subcubes of
/// [`subcube_dims`]; every node of the cube must call it. Returns the names of the passed
/// checks (all of [`check_names`]); the first failure is an error naming the check, the
/// subcube and the node.
pub fn run(node: &Node) -> Result<Vec<String>> {
    let d = node.cubedim();
    let scopes =
        std::iter::once((SCOPES[0], d)).chain(subcube_dims(d).into_iter().map(|k| (SCOPES[1], k)));
    let mut passed: Vec<String> = Vec::new();
    for (scope, k) in scopes {
        let s = Scope::new(node, k);
        for (op, check) in CHECKS {
            check(&s).with_context(|| {
                format!(
                    "{op} {scope} failed (subcube of dimension {k}, node {})",
                    node.mynode()
                )
            })?;
            let name = format!("{op} {scope}");
            if !passed.contains(&name) {
                passed.push(name);
            }
        }
    }
    Ok(passed)
}

/// Deterministic pseudo-random numbers (splitmix64).
fn rnd(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `len` pseudo-random bytes, eight from each number.
fn bytes_of(seed: u64, len: usize) -> Bytes {
    let s = seed.wrapping_mul(1000);
    let mut v: Vec<u8> = (0..len.div_ceil(8) as u64)
        .flat_map(|i| rnd(s.wrapping_add(i)).to_le_bytes())
        .collect();
    v.truncate(len);
    v.into()
}

fn vec_i64(seed: u64, n: usize) -> Vec<i64> {
    let s = seed.wrapping_mul(7919);
    (0..n)
        .map(|i| (rnd(s.wrapping_add(i as u64)) % 1000) as i64 - 500)
        .collect()
}

fn vec_f64(seed: u64, n: usize) -> Vec<f64> {
    let s = seed.wrapping_mul(31);
    (0..n)
        .map(|i| (rnd(s.wrapping_add(i as u64)) % 10_000) as f64 / 7.0)
        .collect()
}

/// Affine maps x ↦ a·x + b (mod 2^32) packed as (a << 32) | b; composition "first the left
/// operand, then the right" is associative but not commutative.
fn affine(l: u64, r: u64) -> u64 {
    let (a1, b1) = (l >> 32, l & 0xFFFF_FFFF);
    let (a2, b2) = (r >> 32, r & 0xFFFF_FFFF);
    ((a1.wrapping_mul(a2) & 0xFFFF_FFFF) << 32)
        | (a2.wrapping_mul(b1).wrapping_add(b2) & 0xFFFF_FFFF)
}

fn vec_affine(seed: u64, n: usize) -> Vec<u64> {
    let s = seed.wrapping_mul(131);
    (0..n)
        .map(|i| rnd(s.wrapping_add(i as u64)) | (1 << 32))
        .collect()
}

/// `period` repeated up to `n` elements.
fn repeat<T: Copy>(period: &[T], n: usize) -> Vec<T> {
    let mut v = Vec::with_capacity(n + period.len());
    while v.len() < n && !period.is_empty() {
        v.extend_from_slice(period);
    }
    v.truncate(n);
    v
}

/// A long payload: pseudo-random bytes with a prime period of 4093, cheap to make on every
/// node (a shifted or misplaced part still differs).
fn long_bytes(seed: u64, len: usize) -> Bytes {
    repeat(&bytes_of(seed, 4093), len).into()
}

/// The element-wise fold of `gen(0), gen(1), …, gen(upto - 1)` (`None` when `upto` = 0),
/// generating one vector at a time.
fn fold_upto<T: Copy>(
    upto: usize,
    gen: impl Fn(usize) -> Vec<T>,
    f: impl Fn(T, T) -> T,
) -> Option<Vec<T>> {
    let mut acc: Option<Vec<T>> = None;
    for r in 0..upto {
        let x = gen(r);
        acc = Some(match acc {
            None => x,
            Some(mut a) => {
                combine(&mut a, &x, &f);
                a
            }
        });
    }
    acc
}

/// `acc[i] = f(acc[i], x[i])`.
fn combine<T: Copy>(acc: &mut [T], x: &[T], f: impl Fn(T, T) -> T) {
    for (a, &b) in acc.iter_mut().zip(x) {
        *a = f(*a, b);
    }
}

/// Part `j` of `n` elements split over `p` members.
fn part(n: usize, p: usize, j: usize) -> std::ops::Range<usize> {
    (j * n / p)..((j + 1) * n / p)
}

/// One subcube as this node sees it, with the data every member derives alike.
struct Scope<'a> {
    node: &'a Node,
    sc: Subcube<'a>,
    /// The subcube's dimension.
    k: u32,
    p: usize,
    /// This node's rank in the subcube.
    me: usize,
    base: NodeId,
    /// Relative roots of the rooted operations: 0, p − 1 and one drawn per subcube.
    roots: Vec<usize>,
}

impl<'a> Scope<'a> {
    fn new(node: &'a Node, k: u32) -> Scope<'a> {
        let sc = node.subcube(k);
        let (p, me, base) = (sc.size() as usize, sc.rank() as usize, sc.base());
        let mut roots = vec![
            0,
            p - 1,
            rnd(u64::from(k) * 1009 + u64::from(base)) as usize % p,
        ];
        roots.sort_unstable();
        roots.dedup();
        Scope {
            node,
            sc,
            k,
            p,
            me,
            base,
            roots,
        }
    }

    /// The seed of relative rank `r`'s data (distinct per subcube and dimension).
    fn seed(&self, r: usize) -> u64 {
        (u64::from(self.k) << 32) + (u64::from(self.base) + r as u64) * 97
    }

    /// The physical node of relative rank `r`.
    fn node_of(&self, r: usize) -> NodeId {
        self.base + r as NodeId
    }

    /// The algorithm handle.
    fn with(&self, alg: Algorithm) -> Subcube<'a> {
        self.sc.with(alg)
    }

    /// `want` at the root, `None` elsewhere: what a rooted collective returns.
    fn at_root<T>(&self, root: usize, want: impl FnOnce() -> T) -> Option<T> {
        (self.me == root).then(want)
    }
}

fn bcast(s: &Scope<'_>) -> Result<()> {
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ScatterAllgather,
        Algorithm::AllPort,
        Algorithm::Auto,
    ] {
        for len in [0, 13, 101, LONG] {
            for &root in &s.roots {
                let want = long_bytes(s.seed(root) + len as u64, len);
                let data = if s.me == root {
                    want.clone()
                } else {
                    Bytes::new()
                };
                let got = s.with(alg).bcast(s.node_of(root), data, len)?;
                ensure!(got == want, "{alg:?} root {root} len {len}: wrong data");
            }
        }
    }
    Ok(())
}

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

fn reduce(s: &Scope<'_>) -> Result<()> {
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

fn allreduce(s: &Scope<'_>) -> Result<()> {
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

fn reduce_scatter(s: &Scope<'_>) -> Result<()> {
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

fn scan(s: &Scope<'_>) -> Result<()> {
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

/// The algorithms of scatter, gather and gatherv.
const TREE_ALGS: [Algorithm; 4] = [
    Algorithm::Hypercube,
    Algorithm::Ecube,
    Algorithm::AllPort,
    Algorithm::Auto,
];

/// Block length of the block-wise checks.
const M: usize = 9;

/// A long block (200 KiB: rendezvous, and 3 hops on the e-cube trees in a 3-cube).
fn long_block(s: &Scope<'_>, j: usize) -> Bytes {
    long_bytes(s.seed(j) + 9, 200 << 10)
}

fn scatter(s: &Scope<'_>) -> Result<()> {
    for alg in TREE_ALGS {
        let sa = s.with(alg);
        for &root in &s.roots {
            let block = |j: usize| bytes_of(s.seed(root) + j as u64, M);
            let blocks: Vec<Bytes> = if s.me == root {
                (0..s.p).map(block).collect()
            } else {
                Vec::new()
            };
            let got = sa.scatter(s.node_of(root), &blocks, M)?;
            ensure!(got == block(s.me), "{alg:?} root {root}");
        }
        let blocks: Vec<Bytes> = if s.me == 0 {
            (0..s.p).map(|j| long_block(s, j)).collect()
        } else {
            Vec::new()
        };
        let got = sa.scatter(s.base, &blocks, 200 << 10)?;
        ensure!(got == long_block(s, s.me), "{alg:?} long blocks");
    }
    Ok(())
}

fn gather(s: &Scope<'_>) -> Result<()> {
    let block = |j: usize| bytes_of(s.seed(j), M);
    for alg in TREE_ALGS {
        let sa = s.with(alg);
        for &root in &s.roots {
            let got = sa.gather(s.node_of(root), block(s.me))?;
            ensure!(
                got == s.at_root(root, || (0..s.p).map(block).collect()),
                "{alg:?} root {root}"
            );
        }
        let got = sa.gather(s.base, long_block(s, s.me))?;
        ensure!(
            got == s.at_root(0, || (0..s.p).map(|j| long_block(s, j)).collect()),
            "{alg:?} long blocks"
        );
    }
    Ok(())
}

fn gatherv(s: &Scope<'_>) -> Result<()> {
    // Block j has j bytes (the first is empty).
    let block = |j: usize| bytes_of(s.seed(j), j);
    for alg in TREE_ALGS {
        for &root in &s.roots {
            let got = s.with(alg).gatherv(s.node_of(root), block(s.me))?;
            ensure!(
                got == s.at_root(root, || (0..s.p).map(block).collect()),
                "{alg:?} root {root}"
            );
        }
    }
    Ok(())
}

/// The algorithms of allgather and allgatherv.
const ALLGATHER_ALGS: [Algorithm; 4] = [
    Algorithm::Hypercube,
    Algorithm::Ring,
    Algorithm::Mesh,
    Algorithm::AllPort,
];

fn allgather(s: &Scope<'_>) -> Result<()> {
    let want: Vec<Bytes> = (0..s.p).map(|j| bytes_of(s.seed(j), M)).collect();
    for alg in ALLGATHER_ALGS {
        ensure!(
            s.with(alg).allgather(want[s.me].clone())? == want,
            "{alg:?}"
        );
    }
    Ok(())
}

fn allgatherv(s: &Scope<'_>) -> Result<()> {
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
fn a2a_block(s: &Scope<'_>, src: usize, dst: usize, len: usize) -> Bytes {
    bytes_of(s.seed(src) + dst as u64, len)
}

fn alltoall(s: &Scope<'_>) -> Result<()> {
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

fn alltoallv(s: &Scope<'_>) -> Result<()> {
    let len = |a: usize, b: usize| (a + b) % 4;
    let mine: Vec<Bytes> = (0..s.p)
        .map(|t| a2a_block(s, s.me, t, len(s.me, t)))
        .collect();
    let want: Vec<Bytes> = (0..s.p)
        .map(|f| a2a_block(s, f, s.me, len(f, s.me)))
        .collect();
    ensure!(s.sc.alltoallv(&mine)? == want, "wrong blocks");
    for alg in [Algorithm::Ecube, Algorithm::Planned] {
        ensure!(
            s.with(alg).alltoallv(&mine)? == want,
            "wrong blocks ({alg:?})"
        );
    }
    // Long blocks, some empty, to a few members: with HYPERCUBE_PLAN_MIN_PART small, the
    // planned routes cut them into parts over several paths.
    let len = |a: usize, b: usize| {
        if (a ^ b) % 3 == 1 {
            5000 + 37 * a + b
        } else {
            0
        }
    };
    let mine: Vec<Bytes> = (0..s.p)
        .map(|t| a2a_block(s, s.me, t, len(s.me, t)))
        .collect();
    let want: Vec<Bytes> = (0..s.p)
        .map(|f| a2a_block(s, f, s.me, len(f, s.me)))
        .collect();
    for alg in [Algorithm::Auto, Algorithm::Pairwise, Algorithm::Planned] {
        ensure!(
            s.with(alg).alltoallv(&mine)? == want,
            "wrong long blocks ({alg:?})"
        );
    }
    Ok(())
}

fn shift(s: &Scope<'_>) -> Result<()> {
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

fn barrier(s: &Scope<'_>) -> Result<()> {
    s.sc.barrier()?;
    Ok(())
}

/// An allreduce of one element per member, `x(rank)`, against the left fold with `f`.
fn all_of<T: Element + PartialEq>(
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
fn element_types(s: &Scope<'_>) -> Result<()> {
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

/// Bad arguments are errors, not panics or hangs, and the subcube stays usable.
fn bad_arguments(s: &Scope<'_>) -> Result<()> {
    let (node, sc, p, me) = (s.node, s.sc, s.p, s.me);
    let d = node.cubedim();
    let invalid_node = |r: hypercube::Result<_>| matches!(r, Err(Error::InvalidNode { .. }));
    let invalid_arg = |r: hypercube::Result<_>| matches!(r, Err(Error::InvalidArgument(_)));
    // A root outside the subcube: another node of the cube, or no node at all.
    let outside = if s.k < d {
        node.mynode() ^ (1 << s.k)
    } else {
        node.numnodes() + 1
    };
    ensure!(
        invalid_node(sc.bcast(outside, Bytes::new(), 0).map(drop)),
        "bcast from a root outside"
    );
    ensure!(
        invalid_node(sc.reduce(outside, &[1i32], Op::Sum).map(drop)),
        "reduce to a root outside"
    );
    ensure!(
        invalid_node(sc.gather(outside, Bytes::new()).map(drop)),
        "gather to a root outside"
    );
    // A subcube larger than the cube.
    ensure!(
        invalid_arg(node.subcube(d + 1).allreduce(&[1u8], Op::Sum).map(drop)),
        "allreduce on a subcube larger than the cube"
    );
    ensure!(
        invalid_arg(node.subcube(d + 1).barrier()),
        "barrier on a subcube larger than the cube"
    );
    // An algorithm that does not implement the operation.
    ensure!(
        invalid_arg(
            sc.with(Algorithm::Pairwise)
                .allgather(Bytes::new())
                .map(drop)
        ),
        "allgather with the pairwise algorithm"
    );
    // Wrong block counts and lengths.
    ensure!(
        invalid_arg(sc.alltoall(&vec![Bytes::new(); p + 1]).map(drop)),
        "alltoall with p + 1 blocks"
    );
    if p > 1 {
        let uneven: Vec<Bytes> = (0..p).map(|i| Bytes::from(vec![0u8; i])).collect();
        ensure!(
            invalid_arg(sc.alltoall(&uneven).map(drop)),
            "alltoall with uneven blocks"
        );
        // Lengths that differ between members: every member gets an error.
        let n = 1 + (me & 1);
        ensure!(
            invalid_arg(sc.allreduce(&vec![1.0f32; n], Op::Sum).map(drop)),
            "allreduce with lengths that differ between members"
        );
    }
    sc.barrier()?;
    // Scatter: blocks that are not block_len long fail at the root (here each node is the
    // root of its own 0-subcube); a member that passes another block_len than the root gets
    // an error naming the length it received, the others their blocks.
    let blocks: Vec<Bytes> = (0..p).map(|_| Bytes::from(vec![7u8; 3])).collect();
    ensure!(
        invalid_arg(
            node.subcube(0)
                .scatter(node.mynode(), &blocks[..1], 4)
                .map(drop)
        ),
        "scatter of a block of the wrong length"
    );
    let odd = p - 1; // the member that passes the wrong length (none when p = 1)
    for alg in [Algorithm::Hypercube, Algorithm::Ecube] {
        let mine = if me == 0 { &blocks[..] } else { &[] };
        let len = if me == odd && p > 1 { 5 } else { 3 };
        let got = sc.with(alg).scatter(s.base, mine, len);
        if me == odd && p > 1 {
            ensure!(
                matches!(got, Err(Error::InvalidArgument(ref e)) if e.contains("3 bytes")),
                "{alg:?}: scatter with another block_len than the root: {got:?}"
            );
        } else {
            ensure!(
                got? == blocks[0],
                "{alg:?}: scatter beside a wrong block_len"
            );
        }
    }
    // Gather with blocks of different lengths: the root says so (the others' sends
    // complete). The odd block is p/2's (p ≥ 4): in the hypercube tree its children see the
    // difference first, report it, and still pass their blocks on, so the root, which gets
    // blocks p/2..p−1 from p/2, sees it too (crates/hypercube/tests/equal_blocks.rs has
    // the case where the totals divide evenly).
    for alg in [Algorithm::Hypercube, Algorithm::Ecube] {
        let block = Bytes::from(vec![1u8; 2 + usize::from(me == p / 2 && p >= 4)]);
        let got = sc.with(alg).gather(s.base, block);
        if me == 0 && p >= 4 {
            ensure!(
                invalid_arg(got.map(drop)),
                "{alg:?}: gather of blocks of different lengths"
            );
        }
    }
    sc.barrier()?;
    // Still usable afterwards.
    ensure!(
        sc.allreduce(&[1u16], Op::Sum)? == [p as u16],
        "allreduce after the errors"
    );
    Ok(())
}
