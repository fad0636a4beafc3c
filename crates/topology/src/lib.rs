//! Pure hypercube bit math (no I/O). See `docs/architecture.md`.
#![deny(missing_docs)]

/// A node number in the hypercube (0 .. 2^d).
pub type NodeId = u32;

/// The neighbor of `node` across dimension `k` (flip bit `k`).
pub fn neighbor(node: NodeId, k: u32) -> NodeId {
    node ^ (1 << k)
}

/// Number of bits in which `a` and `b` differ: the length of a shortest path.
pub fn hamming(a: NodeId, b: NodeId) -> u32 {
    (a ^ b).count_ones()
}

/// The e-cube next hop from `from` towards `to`: correct the lowest differing bit.
/// `None` when `from == to`.
pub fn ecube_next_hop(from: NodeId, to: NodeId) -> Option<NodeId> {
    let diff = from ^ to;
    if diff == 0 {
        None
    } else {
        Some(from ^ (1 << diff.trailing_zeros()))
    }
}
