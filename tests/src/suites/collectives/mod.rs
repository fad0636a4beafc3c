//! The correctness suite of `hypercube::collectives`, one for both transports: every
//! operation with every algorithm that implements it, on the whole cube and on subcubes of
//! several dimensions, checked on every node against a sequential reference computed from
//! the same pseudo-random data (including a non-commutative operator, several roots, empty,
//! uneven and long — rendezvous-sized — payloads, every element type, and bad arguments).
//!
//! [`run`] is called by the node program `coll_suite` (real processes over TCP, through the
//! launcher, Hydra or Slurm) and by `tests/tests/collectives_local.rs` (threads over
//! `hypercube::transport::local`, cubes up to d = 6).
//!
//! This file holds the order of the checks, the scopes and [`run`]; the checks are one
//! file per group of operations (`rooted.rs`, `reductions.rs`, `all_to_all.rs`,
//! `bad_arguments.rs`), their data and sequential references in `data.rs`.

mod all_to_all;
mod bad_arguments;
mod data;
mod reductions;
mod rooted;

use anyhow::{Context, Result};
use hypercube::collectives::{Algorithm, Subcube};
use hypercube::{Node, NodeId};

use all_to_all::{allgather, allgatherv, alltoall, alltoallv, barrier, shift};
use bad_arguments::bad_arguments;
use data::rnd;
use reductions::{allreduce, element_types, reduce, reduce_scatter, scan};
use rooted::{bcast, gather, gatherv, scatter};

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
