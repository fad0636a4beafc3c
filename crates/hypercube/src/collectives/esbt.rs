//! Johnsson & Ho's **edge-disjoint spanning binomial trees** (ESBT): d spanning trees of
//! the d-cube, rooted at the same node, no two of which use the same directed link
//! ("Optimum broadcasting and personalized communication in hypercubes", IEEE Trans.
//! Computers 38(9), 1989, §IV; cited by the Bhatt seed, §1). Data cut into d parts, part t
//! sent down tree t, keeps every link of the root busy, and — pipelined in pieces — every
//! link of every node: the broadcast and reduction of `broadcast/allport.rs` and
//! `reduce/allport.rs` (cut into pieces as `select/pipeline.rs` says), the scatter and
//! gather of `scatter/allport.rs` and `gather/allport.rs`.
//!
//! Tree t, in coordinates relative to the root (`v = node ^ root`):
//!
//! ```text
//!   root ──t──▶ 2^t ──▶ a spanning binomial tree of the half with bit t set, its
//!                       dimensions taken in the order t+1, t+2, …, t−1 (mod d)
//!                  └──t──▶ every node of that half but 2^t hands on, across dimension t,
//!                          to its partner in the other half (bit t clear)
//! ```
//!
//! Height d + 1. A node with bit t set has the parent it has in the binomial tree rooted at
//! 2^t (its "highest" set bit besides t, in the rotated order, cleared); a node with bit t
//! clear has its partner across dimension t. Links used: the root's link t; links of the
//! upper half in the direction that sets a bit; links across t from the upper half down.
//! Tree t uses the root's link t only, and at every other node the trees use different
//! links into it (so each non-root node has a different parent in every tree: a message's
//! source names its tree). The unit tests check both properties for d ≤ 8.

use super::blocks::bounds;
use crate::error::Error;

/// The position of dimension `j` in tree `t`'s rotated order `t+1, t+2, …, t−1` (mod d).
fn rank_in(t: u32, j: u32, d: u32) -> u32 {
    (j + d - t - 1) % d
}

/// The parent of relative node `v ≠ 0` in tree `t` of the `d`-cube.
pub(crate) fn parent(v: u32, t: u32, d: u32) -> u32 {
    debug_assert!(v != 0 && t < d);
    let bit = 1u32 << t;
    if v & bit == 0 {
        return v | bit;
    }
    let y = v & !bit;
    if y == 0 {
        return 0;
    }
    let h = (0..d)
        .filter(|&j| y >> j & 1 == 1)
        .max_by_key(|&j| rank_in(t, j, d))
        .unwrap_or(0);
    v & !(1 << h)
}

/// The children of relative node `v` in tree `t` of the `d`-cube, in increasing order of
/// the dimension that leads to them.
pub(crate) fn children(v: u32, t: u32, d: u32) -> Vec<u32> {
    (0..d)
        .map(|j| v ^ 1 << j)
        .filter(|&u| u != 0 && parent(u, t, d) == v)
        .collect()
}

/// The tree in which `parent_node` is relative node `v`'s parent (`None`: in no tree, i.e.
/// not a neighbour of `v`, or `v` is the root).
pub(crate) fn tree_of(v: u32, parent_node: u32, d: u32) -> Option<u32> {
    if v == 0 {
        return None;
    }
    (0..d).find(|&t| parent(v, t, d) == parent_node)
}

/// The depth of relative node `v` in tree `t` (the root has depth 0; at most d + 1).
pub(crate) fn depth(v: u32, t: u32, d: u32) -> u32 {
    let (mut x, mut n) = (v, 0);
    while x != 0 && n <= d + 1 {
        x = parent(x, t, d);
        n += 1;
    }
    n
}

/// The child of `w` in tree `t` on the way down to `u` (`None` where `u` is not below `w`).
pub(crate) fn next_hop(w: u32, u: u32, t: u32, d: u32) -> Option<u32> {
    let mut x = u;
    for _ in 0..=d + 1 {
        if x == 0 {
            return None;
        }
        let up = parent(x, t, d);
        if up == w {
            return Some(x);
        }
        x = up;
    }
    None
}

/// How many nodes are below `w` in tree `t` (its descendants).
pub(crate) fn below(w: u32, t: u32, d: u32) -> usize {
    (1..1u32 << d)
        .filter(|&u| u != w && next_hop(w, u, t, d).is_some())
        .count()
}

/// Every node but the root once, deepest in tree `t` first (then by number): the order in
/// which the root sends the pieces of a personalized operation down tree `t`, so that the
/// ones with the longest way go first.
pub(crate) fn deepest_first(t: u32, d: u32) -> Vec<u32> {
    let mut order: Vec<u32> = (1..1u32 << d).collect();
    order.sort_by_key(|&u| (std::cmp::Reverse(depth(u, t, d)), u));
    order
}

/// Where piece `j` of part `t` lies in a message of `len` bytes (or elements) cut into `d`
/// parts of `n` pieces each, as the pipelined broadcast and reduction cut it: part t is
/// `bounds(len, d, t)`, piece j of it `bounds(part, n, j)`.
pub(crate) fn piece(len: usize, d: u32, n: u32, t: u32, j: u32) -> std::ops::Range<usize> {
    let part = bounds(len, d, t);
    let at = bounds(part.len(), n, j);
    part.start + at.start..part.start + at.end
}

/// Every (part t, piece j) that relative node `v ≠ 0` receives when each of the `d` parts
/// comes down its tree in `n` pieces, in the order they arrive: piece j of part t about
/// `j + depth` piece-times after the start (ties by part).
pub(crate) fn arrival_order(v: u32, d: u32, n: u32) -> Vec<(u32, u32)> {
    let mut order: Vec<(u32, u32)> = (0..d).flat_map(|t| (0..n).map(move |j| (t, j))).collect();
    order.sort_by_key(|&(t, j)| (j + depth(v, t, d), t));
    order
}

/// A message of this call from a node that is no parent of this one in any tree ([`tree_of`]
/// found none): the all-port operations' one error for it.
pub(crate) fn stray(src: u32, me: u32) -> Error {
    Error::InvalidArgument(format!(
        "all-port collective: relative node {me} received a part from node {src}, which is \
         not its parent in any of the trees (the members disagree on the root or the \
         algorithm)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn trees_span_the_cube_and_share_no_directed_link() {
        for d in 1..=8u32 {
            let p = 1u32 << d;
            let mut used = HashSet::new();
            for t in 0..d {
                for v in 1..p {
                    let u = parent(v, t, d);
                    assert_eq!((u ^ v).count_ones(), 1, "d={d} t={t} v={v}: not a link");
                    assert!(used.insert((u, v)), "d={d}: link {u}->{v} in two trees");
                    assert!(depth(v, t, d) <= d + 1, "d={d} t={t} v={v}: too deep");
                    assert!(children(u, t, d).contains(&v));
                }
                assert_eq!(children(0, t, d), vec![1 << t], "d={d} t={t}");
            }
            for t in 0..d {
                assert_eq!(below(0, t, d) as u32, p - 1);
                for w in 1..p {
                    let kids: usize = children(w, t, d).iter().map(|&k| 1 + below(k, t, d)).sum();
                    assert_eq!(below(w, t, d), kids, "d={d} t={t} w={w}");
                    assert_eq!(next_hop(w, w, t, d), None);
                }
            }
            // Every non-root node has a different parent in every tree.
            for v in 1..p {
                let parents: HashSet<u32> = (0..d).map(|t| parent(v, t, d)).collect();
                assert_eq!(parents.len() as u32, d);
                for t in 0..d {
                    assert_eq!(tree_of(v, parent(v, t, d), d), Some(t));
                }
            }
        }
    }
}
