//! Gather on **all-port** hardware: the scatter of `scatter/allport.rs` run backwards over
//! Johnsson & Ho's d edge-disjoint spanning binomial trees ("Optimum broadcasting and
//! personalized communication in hypercubes", IEEE Trans. Computers 38(9), 1989, §V;
//! cited by the Bhatt seed, §1; the trees: `collectives/esbt.rs`). Every node cuts its
//! block into d parts and sends part t up tree t; every node on the way hands each part on
//! to its parent in that tree as soon as it has it. The root's link t brings part t of
//! every block — (p − 1) m/d bytes, the link bound — where the e-cube gather loads its
//! busiest link with p/2 whole blocks.
//!
//! All-port time `(p − 1 + d)(t_s + t_w m/d)`, as the scatter's. A part
//! travels with its source in a 4-byte prefix; blocks of any lengths (gatherv) need
//! nothing more, each part being `bounds(len, d, t)` of its own block.

use bytes::Bytes;

use crate::base::parts::Parts;
use crate::collectives::blocks::{bounds, concat};
use crate::collectives::ctx::Ctx;
use crate::collectives::esbt;
use crate::collectives::scatter::allport::{astray, dest_of, twice};
use crate::error::Result;

/// Every node's `mine` → at relative rank `root`, all blocks by relative rank.
/// With `equal`, every block must have the root's length (gather, not gatherv).
pub(crate) fn gather(
    c: &Ctx<'_>,
    root: u32,
    mine: Bytes,
    equal: bool,
) -> Result<Option<Vec<Bytes>>> {
    let (d, p) = (c.k, c.p());
    let v = c.me ^ root;
    let mut sends = Vec::new();
    if v != 0 {
        for t in 0..d {
            let part = mine.slice(bounds(mine.len(), d, t));
            let msg = Parts::from(vec![Bytes::copy_from_slice(&v.to_le_bytes()), part]);
            sends.push(c.isend(esbt::parent(v, t, d) ^ root, msg)?);
        }
    }
    // The parts of the nodes below this one come from its children (each a child in one
    // tree only: the sender names the tree).
    let awaited: usize = (0..d).map(|t| esbt::below(v, t, d)).sum();
    let mut parts: Vec<Vec<Option<Bytes>>> = if v == 0 {
        vec![vec![None; d as usize]; p as usize]
    } else {
        Vec::new()
    };
    for _ in 0..awaited {
        let (src, msg) = c.recv_any()?;
        let t = esbt::tree_of(src ^ root, v, d).ok_or_else(|| esbt::stray(src, c.me))?;
        let u = dest_of(&msg, src)?;
        if u == 0 || u >= p || esbt::next_hop(v, u, t, d).is_none() {
            return Err(astray(u, t, src));
        }
        if v != 0 {
            sends.push(c.isend(esbt::parent(v, t, d) ^ root, msg)?);
        } else if parts[u as usize][t as usize]
            .replace(msg.slice(4..))
            .is_some()
        {
            return Err(twice(t, src));
        }
    }
    for s in sends {
        s.wait()?;
    }
    if v != 0 {
        return Ok(None);
    }
    let mut out = vec![Bytes::new(); p as usize];
    for (u, ps) in parts.into_iter().enumerate().skip(1) {
        let ps = ps
            .into_iter()
            .enumerate()
            .map(|(t, x)| x.ok_or_else(|| twice(t as u32, u as u32 ^ root)))
            .collect::<Result<Vec<Bytes>>>()?;
        out[u ^ root as usize] = concat(&ps);
    }
    out[root as usize] = mine;
    if equal {
        let own = out[root as usize].len();
        if let Some(j) = (0..p).find(|&j| out[j as usize].len() != own) {
            return Err(super::ecube::unequal(j, out[j as usize].len(), own));
        }
    }
    Ok(Some(out))
}
