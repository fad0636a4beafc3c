//! The iPSC utility suite (Moler & Scott 1986), one for both transports: every routine,
//! every root, every subcube dimension, empty and large payloads, every §8 error condition,
//! non-interference and the compat module. [`run`] is called by the node program
//! `ipsc_suite` (real processes over TCP, through the launcher, Hydra or Slurm) and by
//! `tests/tests/ipsc.rs` on a 5-cube of threads (`hypercube::transport::local`).
//!
//! This file holds the helpers, the order of the checks and [`run`]; the checks are one
//! file per group of routines: `global.rs` (GSENDW, GOP, GCAT), `point.rs` (long messages,
//! sparse send, MESH), `errors.rs` (§8), `interference.rs` (part 9 and the compat module).

mod errors;
mod global;
mod interference;
mod point;

use errors::errors;
use global::{broadcast, gcat, gop};
use interference::{compat_api, interference};
use point::{long, mesh, sparse};

use anyhow::{bail, ensure, Context, Result};
use hypercube::ipsc::{compat, Op};
use hypercube::topology::{hamming, mesh_shape_for, subcube_base, Boundary};
use hypercube::{Error, MsgType, Node, NodeId, Select, TypeSel};

/// Deterministic bytes for a (node, tag, len).
fn pattern(a: u32, b: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|k| (a as usize * 131 + b as usize * 17 + k * 7 + (k >> 8)) as u8)
        .collect()
}

/// The roots of every subcube of dimension `dim`, as this node's subcube sees them.
fn roots(me: NodeId, dim: u32) -> impl Iterator<Item = NodeId> {
    let base = subcube_base(me, dim);
    (0..1u32 << dim).map(move |r| base | r)
}

fn high_bit(x: u32) -> u32 {
    1 << (31 - x.leading_zeros())
}

/// Members of `me`'s subtree in the broadcast/GOP tree rooted at `root` (parent =
/// me ^ highbit(me ^ root)).
fn gop_subtree(me: NodeId, root: NodeId, dim: u32) -> Vec<NodeId> {
    let dm = me ^ root;
    (0..1u32 << dim)
        .filter(|&dn| dm == 0 || dn & ((high_bit(dm) << 1) - 1) == dm)
        .map(|dn| dn ^ root)
        .collect()
}

/// Diffs (node ^ root) of `me`'s subtree in the GCAT tree (parent = me ^ lowbit(diff)),
/// ascending.
fn gcat_subtree_diffs(me: NodeId, root: NodeId, dim: u32) -> Vec<u32> {
    let dm = me ^ root;
    let low = if dm == 0 {
        1u64 << dim
    } else {
        u64::from(dm & dm.wrapping_neg())
    };
    (0..1u32 << dim)
        .filter(|&dn| u64::from(dn) & !(low - 1) == u64::from(dm))
        .collect()
}

fn gcat_piece(n: NodeId, dim: u32) -> Vec<u8> {
    pattern(n, dim, ((n as usize) * 7 + dim as usize) % 13)
}

/// GSENDW `want` from `root` on `dim`-subcubes: the root sends, every other member checks
/// what GRECVW gives it (`what` names the case in the error).
fn gsend_and_check(node: &Node, root: NodeId, dim: u32, want: &[u8], what: &str) -> Result<()> {
    if node.mynode() == root {
        node.gsend(want.to_vec(), dim)?;
    } else {
        let got = node.grecv(dim)?;
        ensure!(
            got[..] == want[..],
            "{what} dim {dim} root {root}: wrong data"
        );
    }
    Ok(())
}

/// One named check of the suite.
type Check = fn(&Node) -> Result<()>;

/// The checks in the order they run.
const CHECKS: [(&str, Check); 9] = [
    ("broadcast", broadcast),
    ("gop", gop),
    ("gcat", gcat),
    ("long", long),
    ("sparse", sparse),
    ("mesh", mesh),
    ("errors", errors),
    ("interference", interference),
    ("compat", compat_api),
];

/// The names of the checks, in the order [`run`] runs them.
pub const CHECK_NAMES: [&str; CHECKS.len()] = {
    let mut names = [""; CHECKS.len()];
    let mut i = 0;
    while i < CHECKS.len() {
        names[i] = CHECKS[i].0;
        i += 1;
    }
    names
};

/// Run the checks named in `only` (all when empty) on this node; every node of the cube
/// must call it with the same `only`. Returns the names of the passed checks; the first
/// failure is an error naming the check.
pub fn run(node: &Node, only: &[String]) -> Result<Vec<String>> {
    let want = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    let mut passed = Vec::new();
    for (name, check) in CHECKS {
        if want(name) {
            check(node).with_context(|| format!("check {name} failed"))?;
            passed.push(name.to_string());
        }
    }
    Ok(passed)
}
