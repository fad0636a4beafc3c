//! Scatter on **all-port** hardware: Johnsson & Ho's personalized communication over d
//! edge-disjoint spanning binomial trees ("Optimum broadcasting and personalized
//! communication in hypercubes", IEEE Trans. Computers 38(9), 1989, §V; cited by the
//! Bhatt seed, §1; the trees: `collectives/esbt.rs`). Every block is cut into d parts and
//! part t travels down tree t to its node, each part a message of its own that every node
//! on the way hands on as soon as it has it. The root's link t carries part t of every
//! block — (p − 1) m/d bytes, the link bound — where the e-cube scatter loads its busiest
//! link with p/2 whole blocks.
//!
//! ```text
//!   root ─link 0─▶ part 0 of every block, deepest first ─▶ tree 0 ─▶ …
//!        ─link 1─▶ part 1 of every block               ─▶ tree 1 ─▶ …
//! ```
//!
//! All-port time `(p − 1 + d)(t_s + t_w m/d)`: the root's p − 1 parts per link, a pipeline
//! whose steps each cost a start-up and a part, then the last one's way down (d more links
//! at most).
//! A part travels with its destination in a 4-byte prefix.

use bytes::Bytes;

use crate::base::parts::Parts;
use crate::collectives::blocks::bounds;
use crate::collectives::ctx::Ctx;
use crate::collectives::esbt;
use crate::error::{Error, Result};

/// `blocks` (at relative rank `root`: p blocks by relative rank; elsewhere ignored) →
/// this node's block.
pub(crate) fn scatter(c: &Ctx<'_>, root: u32, blocks: &[Bytes]) -> Result<Bytes> {
    let d = c.k;
    let v = c.me ^ root;
    if d == 0 || v == 0 {
        if v == 0 {
            // Part t of the block of each node, deepest in tree t first, over link t;
            // the d links are served in turn, so that all of them start at once.
            let orders: Vec<Vec<u32>> = (0..d).map(|t| esbt::deepest_first(t, d)).collect();
            let mut sends = Vec::with_capacity(orders.len() * c.p() as usize);
            for i in 0..c.p() as usize - 1 {
                for (t, order) in orders.iter().enumerate() {
                    let u = order[i];
                    let block = &blocks[(u ^ root) as usize];
                    let part = block.slice(bounds(block.len(), d, t as u32));
                    let msg = Parts::from(vec![Bytes::copy_from_slice(&u.to_le_bytes()), part]);
                    sends.push(c.isend(1 << t ^ root, msg)?);
                }
            }
            for s in sends {
                s.wait()?;
            }
        }
        return Ok(blocks[root as usize].clone());
    }
    // The parts for this node and those below it arrive from its d parents (one per
    // tree: the sender names the tree); the others' go on to the child on their way.
    let awaited: usize = (0..d).map(|t| 1 + esbt::below(v, t, d)).sum();
    let mut mine: Vec<Option<Bytes>> = vec![None; d as usize];
    let mut sends = Vec::new();
    for _ in 0..awaited {
        let (src, msg) = c.recv_any()?;
        let t = esbt::tree_of(v, src ^ root, d).ok_or_else(|| esbt::stray(src, c.me))?;
        let u = dest_of(&msg, src)?;
        if u == v {
            if mine[t as usize].replace(msg.slice(4..)).is_some() {
                return Err(twice(t, src));
            }
        } else {
            let next = esbt::next_hop(v, u, t, d).ok_or_else(|| astray(u, t, src))?;
            sends.push(c.isend(next ^ root, msg)?);
        }
    }
    for s in sends {
        s.wait()?;
    }
    let parts = mine
        .into_iter()
        .enumerate()
        .map(|(t, p)| p.ok_or_else(|| twice(t as u32, root)))
        .collect::<Result<Vec<Bytes>>>()?;
    Ok(crate::collectives::blocks::concat(&parts))
}

/// The destination prefix of a part (relative to the root), from `src`.
pub(crate) fn dest_of(msg: &Bytes, src: u32) -> Result<u32> {
    match msg.get(..4) {
        Some(b) => Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        None => Err(Error::InvalidArgument(format!(
            "all-port scatter/gather: a message of {} bytes from node {src} lacks its \
             4-byte destination (the members disagree on the algorithm)",
            msg.len()
        ))),
    }
}

/// A part whose destination is not below this node in its tree.
pub(crate) fn astray(u: u32, t: u32, src: u32) -> Error {
    Error::InvalidArgument(format!(
        "all-port scatter/gather: node {src} handed on a part for relative node {u} in tree \
         {t}, which does not pass through here (the members disagree on the root or the \
         algorithm)"
    ))
}

/// A part that came twice, or never (an internal error or a member's).
pub(crate) fn twice(t: u32, src: u32) -> Error {
    Error::InvalidArgument(format!(
        "all-port scatter/gather: part {t} came twice or never (last from node {src}; the \
         members disagree on the root or the algorithm)"
    ))
}
