//! Sparse global send planning: BETWEEN, SPLIT and the SPGSNW fanout (§7, §9).
//!
//! A root sends one message to an arbitrary subset of nodes (the *targets*).
//! Rather than sending to each target directly, the seed builds a fanout tree:
//! with respect to the sending node `r`, "b < c" means *b lies on a shortest
//! path from r to c* ([`between`]). [`split`] picks a minimal target `k` and
//! separates the other targets into those above `k` (which `k` will forward
//! to) and the rest (which the sender keeps processing). SPGSNW repeats SPLIT
//! until no targets remain ([`sparse_send_plan`]); every receiver does the
//! same with the list it was sent (SPGRCW).
//!
//! The seed sends straight to each chosen target, whatever its distance.
//! [`sparse_fanout`] turns the same plan into sends over cube links only (the
//! links are the e-cube first hops towards the chosen children), so a runtime
//! whose processes are wired only to their cube neighbors can forward hop by
//! hop; every target is still reached along a shortest path from the root and
//! every node receives at most one message.
//!
//! Worked example (ours; the seed gives none). From node 0 with targets
//! `[7, 3, 4, 1, 6]`: SPLIT chooses child 1 (nothing lies between 0 and 1),
//! whose descendants are 7 and 3; the rest, `[4, 6]`, split again into child
//! 4 with descendant 6. Node 1 then splits `[7, 3]` relative to itself: child 3
//! with descendant 7.

use std::collections::HashSet;

use crate::cube::NodeId;
use crate::error::TopologyError;

/// Does node `j` lie on a shortest path from node `i` to node `k`?
///
/// The listing (§13) computes `XOR(I,K) .EQ. (XOR(I,J) + XOR(J,K))`. Because
/// `a + b == a ^ b` exactly when `a & b == 0`, this is the same as asking that
/// the bits `j` changes on the way from `i` and the bits it still has to
/// change to reach `k` are disjoint, which is how it is computed here (no
/// overflow). True when `j == i` or `j == k`.
///
/// ```
/// use hypercube_topology::between;
/// assert!(between(0b000, 0b010, 0b110));
/// assert!(!between(0b000, 0b001, 0b110));
/// ```
#[doc(alias = "BETWEEN")]
pub fn between(i: NodeId, j: NodeId, k: NodeId) -> bool {
    (i ^ j) & (j ^ k) == 0
}

/// SPLIT exactly as the listing does it (§9, §13), in place.
///
/// `me` is the node doing the send (the listing's `MYNODE()`; all addressing is
/// relative to it). Finds a *child*: the last target in a left-to-right scan
/// that keeps replacing the key with any target lying between `me` and the
/// current key, so no other target lies strictly between `me` and the child.
/// Then reorders `list` as
/// `[descendants of the child..., child, rest...]`, where the descendants are
/// the targets `t` with [`between`]`(me, child, t)`, and returns their number
/// (the listing's `FIRST`). Returns `None` for an empty list.
///
/// Duplicates of the child count as its descendants; a target equal to `me`
/// lies between `me` and everything, so it becomes the child (the listing
/// would then send to itself). Callers should pass distinct targets other than
/// `me`, as [`sparse_fanout`] ensures.
///
/// ```
/// use hypercube_topology::split_in_place;
/// let mut list = [7, 3, 4, 1, 6];
/// assert_eq!(split_in_place(0, &mut list), Some(2));
/// assert_eq!(list, [7, 3, 1, 4, 6]); // descendants, child, rest
/// ```
#[doc(alias = "SPLIT")]
pub fn split_in_place(me: NodeId, list: &mut [NodeId]) -> Option<usize> {
    let number = list.len();
    if number == 0 {
        return None;
    }
    // Find key: scan, moving the key to any target between me and it.
    let mut key = 0;
    for test in 1..number {
        if between(me, list[test], list[key]) {
            key = test;
        }
    }
    // Swap key to front (slot 0 now only holds a copy; it is refilled below).
    let child = list[key];
    list[key] = list[0];
    // Split the rest of the list, descendants of the child first.
    let mut lo = 1;
    let mut hi = number - 1;
    'partition: while lo <= hi {
        if between(me, child, list[lo]) {
            lo += 1;
            continue;
        }
        // Move hi downwards to a descendant, then swap it into lo.
        loop {
            if lo >= hi {
                break 'partition;
            }
            if between(me, child, list[hi]) {
                list.swap(lo, hi);
                lo += 1;
                hi -= 1;
                continue 'partition;
            }
            hi -= 1;
        }
    }
    // Put the child in the middle.
    let first = lo - 1;
    list[0] = list[first];
    list[first] = child;
    Some(first)
}

/// The result of one SPLIT: the child to send to next, the targets it must
/// forward to, and the targets the sender keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// A minimal target: no other target lies between the sender and it.
    pub child: NodeId,
    /// The targets `t` with `between(me, child, t)`: sent along with the
    /// message for the child to forward (the listing's first `FIRST` entries).
    pub descendants: Vec<NodeId>,
    /// The remaining targets, still to be processed by the sender.
    pub rest: Vec<NodeId>,
}

/// SPLIT without destroying the input (§9, §13): the same choice and the same
/// orders as [`split_in_place`], returned as a [`Split`]. `None` when
/// `targets` is empty.
///
/// ```
/// use hypercube_topology::{split, Split};
/// let s = split(0, &[7, 3, 4, 1, 6]).unwrap();
/// assert_eq!(s, Split { child: 1, descendants: vec![7, 3], rest: vec![4, 6] });
/// ```
#[doc(alias = "SPLIT")]
pub fn split(me: NodeId, targets: &[NodeId]) -> Option<Split> {
    let mut list = targets.to_vec();
    let first = split_in_place(me, &mut list)?;
    let rest = list.split_off(first + 1);
    let child = list.pop()?;
    Some(Split {
        child,
        descendants: list,
        rest,
    })
}

/// The sends SPGSNW makes from `me` (§7, §13): repeatedly SPLIT the target
/// list, send to the child with its descendants appended, and go on with the
/// rest. Returns `(child, descendants)` in send order; children are targets
/// and need not be cube neighbors of `me`. Each receiver runs the same plan
/// on its own list (SPGRCW). Listing-faithful: see [`split_in_place`] about
/// duplicates and `me` in `targets`.
///
/// ```
/// use hypercube_topology::sparse_send_plan;
/// assert_eq!(
///     sparse_send_plan(0, &[7, 3, 4, 1, 6]),
///     vec![(1, vec![7, 3]), (4, vec![6])],
/// );
/// ```
#[doc(alias = "SPGSNW")]
#[doc(alias = "SPGRCW")]
pub fn sparse_send_plan(me: NodeId, targets: &[NodeId]) -> Vec<(NodeId, Vec<NodeId>)> {
    let mut plan = Vec::new();
    let mut list = targets.to_vec();
    let mut start = 0;
    while let Some(first) = split_in_place(me, &mut list[start..]) {
        let child = list[start + first];
        plan.push((child, list[start..start + first].to_vec()));
        start += first + 1;
    }
    plan
}

/// Which cube neighbors node `me` must send to in a sparse global send from
/// `root`, and which targets each one carries (§7 SPGSNW/SPGRCW over links).
///
/// `targets` is the set still to be reached from `me` (at the root: every
/// target; elsewhere: the list that arrived with the message). Returns
/// `(neighbor, carried)` pairs: `neighbor` is a cube neighbor of `me`;
/// `carried` is the targets to reach through it, including `neighbor` itself
/// when it is a target. A neighbor that is not in its own list is a relay: it
/// forwards without delivering. At every node the runtime delivers locally if
/// `me` is in its list, then calls `sparse_fanout(me, root, list)` and sends
/// each `carried` list to its `neighbor`.
///
/// The links come from the seed's plan: [`sparse_send_plan`] picks the
/// children, and the links used are the e-cube first hops towards them (so
/// `me` sends no more messages than SPGSNW would, and usually fewer). Each
/// target, in plan order, is then carried on the lowest used link it must
/// cross anyway. Pairs appear in the order their link is first used. Targets
/// equal to `me` are taken as already reached and dropped; duplicates are
/// dropped (first occurrence kept).
///
/// Guarantees, checked by the property tests:
/// - each target is carried exactly once, and `between(me, neighbor, t)` for
///   every carried `t`;
/// - the subtrees below different neighbors are disjoint (those below link
///   `k` all differ from `me` in bit `k`, those below higher links all agree
///   with it), so in the whole send every node receives at most one message
///   and the messages form a tree;
/// - if `me` lies on a shortest path from `root` to every target (true at the
///   root, and at every node receiving a list built this way), then
///   `hamming(root, neighbor) + hamming(neighbor, t) == hamming(root, t)`:
///   every target is reached along a shortest path from the root. Targets
///   violating that precondition are still sent on a shortest path from `me`;
///   use [`try_sparse_fanout`] to reject them instead.
///
/// ```
/// use hypercube_topology::sparse_fanout;
/// // From root 0: target 1 is a neighbor that forwards 7 and 3; 4 forwards 6.
/// assert_eq!(
///     sparse_fanout(0, 0, &[7, 3, 4, 1, 6]),
///     vec![(1, vec![1, 7, 3]), (4, vec![4, 6])],
/// );
/// // Node 1 delivers locally and forwards the rest through neighbor 3.
/// assert_eq!(sparse_fanout(1, 0, &[1, 7, 3]), vec![(3, vec![3, 7])]);
/// ```
#[doc(alias = "SPGSNW")]
#[doc(alias = "SPGRCW")]
pub fn sparse_fanout(me: NodeId, root: NodeId, targets: &[NodeId]) -> Vec<(NodeId, Vec<NodeId>)> {
    // `root` only matters for the precondition checked by `try_sparse_fanout`:
    // SPLIT's addressing is relative to the sending node (the listing's MYNODE).
    let _ = root;
    let mut seen = HashSet::with_capacity(targets.len());
    let pending: Vec<NodeId> = targets
        .iter()
        .copied()
        .filter(|&t| t != me && seen.insert(t))
        .collect();

    let plan = sparse_send_plan(me, &pending);

    // The links the seed's plan uses: the e-cube first hop towards each child,
    // in the order of first use.
    let mut links: Vec<u32> = Vec::new();
    for (child, _) in &plan {
        let link = (me ^ child).trailing_zeros();
        if !links.contains(&link) {
            links.push(link);
        }
    }
    let used_mask = links.iter().fold(0u32, |mask, &k| mask | (1 << k));

    // Each target goes through the lowest used link it has to cross anyway.
    // Targets carried on link k then all differ from `me` in bit k, and those
    // carried on any higher link all agree with `me` in bit k, so the
    // subtrees below different neighbors are disjoint: no node receives
    // twice. Every target crosses at least one used link (the first hop
    // towards the child it descends from), and each child stays on its own
    // first hop.
    let mut fanout: Vec<(NodeId, Vec<NodeId>)> =
        links.iter().map(|&k| (me ^ (1 << k), Vec::new())).collect();
    for (child, descendants) in plan {
        for t in std::iter::once(child).chain(descendants) {
            let link = ((me ^ t) & used_mask).trailing_zeros();
            if let Some(slot) = links.iter().position(|&k| k == link) {
                fanout[slot].1.push(t);
            }
        }
    }
    fanout
}

/// [`sparse_fanout`], first checking that `me` lies on a shortest path from
/// `root` to every target, so that the guarantee of shortest paths from the
/// root holds.
///
/// # Errors
/// [`TopologyError::TargetNotDownstream`] for the first target `t` with
/// `!between(root, me, t)`.
///
/// ```
/// use hypercube_topology::try_sparse_fanout;
/// assert!(try_sparse_fanout(1, 0, &[3, 7]).is_ok());
/// assert!(try_sparse_fanout(1, 0, &[2]).is_err()); // 1 is not on a path 0 -> 2
/// ```
pub fn try_sparse_fanout(
    me: NodeId,
    root: NodeId,
    targets: &[NodeId],
) -> Result<Vec<(NodeId, Vec<NodeId>)>, TopologyError> {
    if let Some(&target) = targets.iter().find(|&&t| !between(root, me, t)) {
        return Err(TopologyError::TargetNotDownstream { target, me, root });
    }
    Ok(sparse_fanout(me, root, targets))
}

#[cfg(test)]
mod tests;
