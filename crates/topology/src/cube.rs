//! Node numbers, links and subcubes of the binary hypercube.
//!
//! A `d`-cube has `2^d` nodes numbered `0..2^d`; two nodes are neighbors when
//! their numbers differ in exactly one bit, and bit `k` is "link `k`"
//! (Moler & Scott 1986, §2 and §9 XOR: "XOR(I, 2**K) is the K-th neighbor of
//! node I"). A subcube of dimension `d` is the set of `2^d` nodes whose
//! addresses differ only in their low-order `d` bits (§1).

use std::ops::Range;

use crate::error::TopologyError;
pub use crate::ids::NodeId;

/// The largest cube dimension this crate supports: node numbers are `u32` and
/// the node count `2^d` must fit in one too.
pub const MAX_DIM: u32 = NodeId::BITS - 1;

/// Mask of the low `dim` bits (all bits when `dim >= 32`).
pub(crate) fn low_mask(dim: u32) -> NodeId {
    match 1u32.checked_shl(dim) {
        Some(size) => size - 1,
        None => NodeId::MAX,
    }
}

/// Checks that `dim` is a supported cube dimension (at most [`MAX_DIM`]).
///
/// # Errors
/// [`TopologyError::DimensionTooLarge`] when `dim > MAX_DIM`.
pub fn check_dim(dim: u32) -> Result<(), TopologyError> {
    if dim > MAX_DIM {
        Err(TopologyError::DimensionTooLarge { dim, max: MAX_DIM })
    } else {
        Ok(())
    }
}

/// Number of nodes in a `dim`-cube, `2^dim`.
///
/// # Errors
/// [`TopologyError::DimensionTooLarge`] when `dim > MAX_DIM`.
///
/// ```
/// assert_eq!(hypercube_topology::node_count(5), Ok(32));
/// ```
pub fn node_count(dim: u32) -> Result<u32, TopologyError> {
    check_dim(dim)?;
    Ok(1 << dim)
}

/// Checks that `node` lies in the `dim`-cube (`node < 2^dim`).
///
/// # Errors
/// [`TopologyError::DimensionTooLarge`] when `dim > MAX_DIM`,
/// [`TopologyError::NodeOutOfRange`] when `node >= 2^dim`.
///
/// ```
/// use hypercube_topology::{check_node, TopologyError};
/// assert!(check_node(7, 3).is_ok());
/// assert_eq!(check_node(8, 3), Err(TopologyError::NodeOutOfRange { node: 8, dim: 3 }));
/// ```
pub fn check_node(node: NodeId, dim: u32) -> Result<(), TopologyError> {
    check_dim(dim)?;
    if node >> dim != 0 {
        Err(TopologyError::NodeOutOfRange { node, dim })
    } else {
        Ok(())
    }
}

/// The neighbor of `node` across dimension `k` (flip bit `k`).
///
/// This is the seed's `XOR(I, 2**K)` (§9). Use [`checked_neighbor`] when `k`
/// comes from outside the program.
///
/// # Panics
/// When `k >= 32` (no such bit in a [`NodeId`]).
#[doc(alias = "XOR")]
pub fn neighbor(node: NodeId, k: u32) -> NodeId {
    assert!(
        k < NodeId::BITS,
        "neighbor: link {k} does not exist in a u32 node number"
    );
    node ^ (1 << k)
}

/// The neighbor of `node` across link `k` in the `dim`-cube, checking both.
///
/// # Errors
/// [`TopologyError::NodeOutOfRange`] / [`TopologyError::DimensionTooLarge`] as
/// for [`check_node`], and [`TopologyError::LinkOutOfRange`] when `k >= dim`.
///
/// ```
/// use hypercube_topology::checked_neighbor;
/// assert_eq!(checked_neighbor(5, 1, 3), Ok(7));
/// assert!(checked_neighbor(5, 3, 3).is_err());
/// ```
pub fn checked_neighbor(node: NodeId, k: u32, dim: u32) -> Result<NodeId, TopologyError> {
    check_node(node, dim)?;
    if k >= dim {
        return Err(TopologyError::LinkOutOfRange { k, dim });
    }
    Ok(node ^ (1 << k))
}

/// The `dim` neighbors of `node`, in order of increasing link (bit) number —
/// the order in which GSENDW visits them (§2). At most 32 are produced.
///
/// ```
/// let n: Vec<u32> = hypercube_topology::neighbors(5, 3).collect();
/// assert_eq!(n, vec![4, 7, 1]);
/// ```
pub fn neighbors(node: NodeId, dim: u32) -> impl Iterator<Item = NodeId> {
    (0..dim.min(NodeId::BITS)).map(move |k| node ^ (1 << k))
}

/// Number of bits in which `a` and `b` differ: the length of a shortest path.
pub fn hamming(a: NodeId, b: NodeId) -> u32 {
    (a ^ b).count_ones()
}

/// The lowest-numbered node of the `dim`-subcube containing `node`: `node`
/// with its low `dim` bits cleared (§1; the `TROOT = (ME/P)*P` of GOP and GCAT).
///
/// `dim >= 32` gives 0 (the whole `u32` space).
///
/// ```
/// assert_eq!(hypercube_topology::subcube_base(13, 3), 8);
/// ```
pub fn subcube_base(node: NodeId, dim: u32) -> NodeId {
    node & !low_mask(dim)
}

/// Does `member` lie in the `dim`-subcube containing `node`? True exactly when
/// the two numbers agree in every bit from `dim` upwards (§1).
///
/// ```
/// use hypercube_topology::in_subcube;
/// assert!(in_subcube(13, 8, 3));
/// assert!(!in_subcube(13, 16, 3));
/// ```
pub fn in_subcube(node: NodeId, member: NodeId, dim: u32) -> bool {
    (node ^ member) & !low_mask(dim) == 0
}

/// The nodes of the `dim`-subcube containing `node`, as a range: "the subcube
/// of dimension 3 containing node 13 consists of nodes 8 through 15" (§1).
///
/// The end of the range saturates at `u32::MAX`, so for a subcube reaching the
/// top of the `u32` space (beyond [`MAX_DIM`]) the node `u32::MAX` itself is
/// not included.
///
/// ```
/// assert_eq!(hypercube_topology::subcube_members(13, 3), 8..16);
/// ```
pub fn subcube_members(node: NodeId, dim: u32) -> Range<NodeId> {
    let base = subcube_base(node, dim);
    base..base.saturating_add(low_mask(dim)).saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_section_1_subcube_of_13() {
        // §1: the subcube of dimension 3 containing node 13 is nodes 8 through 15.
        assert_eq!(subcube_members(13, 3), 8..16);
        assert_eq!(subcube_base(13, 3), 8);
        for m in 0..32 {
            assert_eq!(in_subcube(13, m, 3), (8..16).contains(&m), "member {m}");
        }
    }

    #[test]
    fn subcube_extremes() {
        assert_eq!(subcube_members(13, 0), 13..14);
        assert_eq!(subcube_base(u32::MAX, 32), 0);
        assert!(in_subcube(0, u32::MAX, 32));
        assert_eq!(subcube_members(5, 31), 0..(1 << 31));
        assert_eq!(subcube_members(u32::MAX, 40), 0..u32::MAX);
    }

    #[test]
    fn neighbor_flips_one_bit() {
        assert_eq!(neighbor(13, 0), 12);
        assert_eq!(neighbor(13, 4), 29);
        assert_eq!(hamming(13, neighbor(13, 2)), 1);
    }

    #[test]
    #[should_panic(expected = "link 32")]
    fn neighbor_rejects_bit_32() {
        let _ = neighbor(0, 32);
    }

    #[test]
    fn checks() {
        assert_eq!(node_count(0), Ok(1));
        assert_eq!(node_count(31), Ok(1 << 31));
        assert_eq!(
            node_count(32),
            Err(TopologyError::DimensionTooLarge { dim: 32, max: 31 })
        );
        assert!(check_node(0, 0).is_ok());
        assert_eq!(
            check_node(1, 0),
            Err(TopologyError::NodeOutOfRange { node: 1, dim: 0 })
        );
        assert_eq!(
            checked_neighbor(2, 2, 2),
            Err(TopologyError::LinkOutOfRange { k: 2, dim: 2 })
        );
        assert_eq!(neighbors(0, 0).count(), 0);
        assert_eq!(neighbors(0, 40).count(), 32);
    }

    #[test]
    fn error_messages_say_what_to_do() {
        let msg = TopologyError::NodeOutOfRange { node: 9, dim: 3 }.to_string();
        assert!(
            msg.contains("node 9") && msg.contains("pass a node number below"),
            "{msg}"
        );
    }
}
