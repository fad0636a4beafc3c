//! The seed's routines under their own names and with their own argument order, so that an
//! old iPSC program ports line by line (Moler & Scott 1986, §2–§9 and §13). The idiomatic
//! API ([`Node::gsend`], [`Node::gop`], ...) is the primary one; these are thin wrappers.
//!
//! Porting rules:
//! - the channel `CI` becomes the [`Node`]; MESH and SPLIT, which ask the system for
//!   `CUBEDIM()` / `MYNODE()`, take the node first too;
//! - `INTEGER` is `i32`, `INTEGER*4` lengths are `i64`, byte buffers are `&[u8]` /
//!   `&mut [u8]`, output arguments are `&mut`;
//! - `TYPE` is checked (it must not be negative) but the collective routines (GSENDW,
//!   GRECVW, GOP, GCAT) do not need it: every call has its own reserved tag, so the seed's
//!   rule "no other messages of this type in the system" is no longer needed. LSENDW/LRECVW
//!   and SPGSNW/SPGRCW do use it to match sender and receiver;
//! - `PID` is accepted and ignored (one process per node);
//! - the host root (`ROOT = -32768`, [`HOST_ROOT`]) works for GOP and GCAT on the nodes
//!   (the lowest node of the subcube accumulates and sends to the host with `TYPE`; the
//!   host receives it with `recv`/[`Node::gop_result`]); on the host, GSENDW starts a
//!   broadcast into the subcube of node 0, whose nodes call [`grecvw_from_host`] (the one
//!   difference from the seed: there the same GRECVW served both roots);
//! - where the seed syslogs and carries on, these return the `Err` of the same text (§8),
//!   with the output arguments set as the seed would set them.
//!
//! ```no_run
//! use hypercube::ipsc::compat::{gcat, gop, grecvw, gsendw};
//! # fn main() -> hypercube::Result<()> {
//! let ci = hypercube::init()?;
//! let (gotype, gstype, gctype) = (100, 200, 300);
//! let dim = ci.cubedim() as i32;
//! let mut dot = [2.0f64];
//! let mut dummy = [0.0f64];
//! gop(&ci, gotype, &mut dot, 1, '+', 0, dim, &mut dummy)?;
//! let mut norm = [0u8; 8];
//! let mut cnt = 0;
//! if ci.mynode() == 0 {
//!     norm = dot[0].sqrt().to_le_bytes();
//!     gsendw(&ci, gstype, &norm, 8, dim)?;
//! } else {
//!     grecvw(&ci, gstype, &mut norm, 8, &mut cnt, dim)?;
//! }
//! let mut y = vec![0u8; 8 * ci.numnodes() as usize];
//! y[..8].copy_from_slice(&norm);
//! gcat(&ci, gctype, &mut y, 8 * ci.numnodes() as i32, 8, &mut cnt, 0, dim)?;
//! # Ok(()) }
//! ```

mod args;
mod collective;
mod messages;

pub use collective::{gcat, gop, grecvw, grecvw_from_host, gsendw, HOST_ROOT};
pub use messages::{lrecvw, lsendw, spgrcw, spgsnw};

use hypercube_topology::{split_in_place, Boundary, NodeId};

use crate::error::{Error, Result};
use crate::node::Node;
use args::{count, length, nonneg};

/// XOR (§9): the bitwise exclusive-or; `xor(i, 1 << k)` is the k-th neighbor of node `i`.
#[doc(alias = "XOR")]
pub fn xor(m: i32, n: i32) -> i32 {
    m ^ n
}

/// GRAY (§9): the `j`-th entry of the binary reflected Gray code, `XOR(J, J/2)`.
#[doc(alias = "GRAY")]
pub fn gray(j: i32) -> i32 {
    j ^ (j / 2)
}

/// GINV (§9): the inverse of [`gray`] — "what task is being carried out on node n?".
#[doc(alias = "GINV")]
pub fn ginv(n: i32) -> i32 {
    let (mut t, mut g) = (n, n);
    loop {
        t /= 2;
        if t == 0 {
            return g;
        }
        g ^= t;
    }
}

/// BETWEEN (§9): does node `j` lie on a shortest path from node `i` to node `k`?
#[doc(alias = "BETWEEN")]
pub fn between(i: i32, j: i32, k: i32) -> bool {
    hypercube_topology::between(i as u32, j as u32, k as u32)
}

/// SPLIT (§9): reorder `list[..number]` relative to this node as
/// `[descendants of the child..., child, rest...]` and set `first` to the number of
/// descendants (see [`crate::topology::split_in_place`]).
///
/// # Errors
/// [`Error::IpscArgument`] when `number` is not in `1..=list.len()` or a node number is
/// negative; `list` is then unchanged.
#[doc(alias = "SPLIT")]
pub fn split(ci: &Node, number: i32, list: &mut [i32], first: &mut i32) -> Result<()> {
    let n = length("SPLIT", "NUMBER", i64::from(number), list.len())?;
    let mut nodes = list[..n]
        .iter()
        .map(|&v| nonneg("SPLIT", "a node number in LIST", v))
        .collect::<Result<Vec<NodeId>>>()?;
    let Some(f) = split_in_place(ci.mynode(), &mut nodes) else {
        return Err(Error::IpscArgument {
            routine: "SPLIT",
            detail: "NUMBER = 0: an empty list has no child to split off; pass at least one node"
                .into(),
        });
    };
    for (slot, v) in list.iter_mut().zip(nodes) {
        *slot = v as i32;
    }
    *first = count(f);
    Ok(())
}

/// MESH (§5): coordinates, predecessors and successors of node `me` in a `dim`-D mesh with
/// side lengths `lindim` and `perbc[i]` = 1 for a periodic, 0 for a closed axis, embedded
/// in this node's cube. `-1` marks a missing neighbor; all outputs are `-1` when `me` is
/// not used by the mesh. `work` receives the sides rounded up to powers of two.
///
/// # Errors
/// `MESH: TOO LARGE` when the mesh does not fit the cube (the seed syslogs and returns
/// neighbors that may not exist; here the outputs are left unchanged); an argument error
/// for slices shorter than `dim`, a side below 1 or a `perbc` other than 0 or 1.
#[doc(alias = "MESH")]
#[allow(clippy::too_many_arguments)] // the seed's calling sequence
pub fn mesh(
    ci: &Node,
    me: i32,
    dim: i32,
    lindim: &[i32],
    perbc: &[i32],
    coords: &mut [i32],
    pred: &mut [i32],
    succ: &mut [i32],
    work: &mut [i32],
) -> Result<()> {
    let shortest = [
        lindim.len(),
        perbc.len(),
        coords.len(),
        pred.len(),
        succ.len(),
        work.len(),
    ];
    let n = length(
        "MESH",
        "DIM",
        i64::from(dim),
        shortest.into_iter().min().unwrap_or(0),
    )?;
    let shape = lindim[..n]
        .iter()
        .map(|&v| nonneg("MESH", "a LINDIM entry", v))
        .collect::<Result<Vec<u32>>>()?;
    let boundary = perbc[..n]
        .iter()
        .map(|&v| match v {
            0 => Ok(Boundary::Closed),
            1 => Ok(Boundary::Periodic),
            _ => Err(Error::IpscArgument {
                routine: "MESH",
                detail: format!("PERBC entry {v} is neither 0 (closed) nor 1 (periodic)"),
            }),
        })
        .collect::<Result<Vec<Boundary>>>()?;
    let me = nonneg("MESH", "ME", me)?;
    let pos = crate::ipsc::mesh_position(me, &shape, &boundary, ci.cubedim())?;
    for (w, &s) in work.iter_mut().zip(&shape) {
        *w = count(s.max(1).next_power_of_two() as usize);
    }
    let node_or_nil = |v: Option<NodeId>| v.map_or(-1, |x| x as i32);
    for i in 0..n {
        match &pos {
            Some(p) => {
                coords[i] = p.coords[i] as i32;
                pred[i] = node_or_nil(p.pred[i]);
                succ[i] = node_or_nil(p.succ[i]);
            }
            None => {
                coords[i] = -1;
                pred[i] = -1;
                succ[i] = -1;
            }
        }
    }
    Ok(())
}
