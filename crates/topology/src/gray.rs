//! Binary reflected Gray code and the Gray-code ring.
//!
//! "If the j-th task is carried out on node number GRAY(J), then each task is
//! connected directly to its predecessor and its successor in the hypercube
//! topology" (Moler & Scott 1986, GRAY listing, §13). GINV "answers the
//! inevitable question, what task is being carried out on node n?" (GINV
//! listing). The listings work on 16-bit integers (0..127); these functions
//! work on all of `u32`.

use crate::cube::{check_node, NodeId, MAX_DIM};
use crate::error::TopologyError;

/// The `j`-th entry of the binary reflected Gray code: `j XOR (j / 2)`
/// (GRAY, §9 and §13). Consecutive entries differ in exactly one bit, so
/// `gray(j)` and `gray(j + 1)` are hypercube neighbors.
///
/// ```
/// use hypercube_topology::gray;
/// let g: Vec<u32> = (0..8).map(gray).collect();
/// assert_eq!(g, vec![0, 1, 3, 2, 6, 7, 5, 4]);
/// ```
#[doc(alias = "GRAY")]
pub fn gray(j: u32) -> u32 {
    j ^ (j >> 1)
}

/// The inverse of [`gray`]: the position of `g` in the Gray-code ordering
/// (GINV, §9 and §13), so `ginv(gray(j)) == j` and `gray(ginv(g)) == g`.
///
/// The listing XORs in `g/2, g/4, ...` until the shift is zero; this computes
/// the same prefix XOR in five steps.
///
/// ```
/// use hypercube_topology::{ginv, gray};
/// assert_eq!(ginv(4), 7);
/// assert_eq!(ginv(gray(1234)), 1234);
/// ```
#[doc(alias = "GINV")]
pub fn ginv(g: u32) -> u32 {
    let mut j = g;
    j ^= j >> 16;
    j ^= j >> 8;
    j ^= j >> 4;
    j ^= j >> 2;
    j ^= j >> 1;
    j
}

/// The Gray-code ring over the `d`-cube: position `j` holds node `gray(j)`,
/// for `j` in `0..2^d`. Consecutive entries, and the last and the first, are
/// cube neighbors (for `d >= 1`); this is "the standard way to obtain a
/// one-dimensional mesh or ring of tasks on the hypercube" (GRAY listing).
///
/// # Panics
/// When `d > MAX_DIM` (the ring would not fit in `u32` node numbers).
///
/// ```
/// assert_eq!(hypercube_topology::gray_ring(2), vec![0, 1, 3, 2]);
/// ```
pub fn gray_ring(d: u32) -> Vec<NodeId> {
    assert!(
        d <= MAX_DIM,
        "gray_ring: dimension {d} exceeds MAX_DIM ({MAX_DIM})"
    );
    (0..1u32 << d).map(gray).collect()
}

/// The node after `node` on the Gray-code ring of the `d`-cube (wrapping from
/// the last position to the first). On a 0-cube the ring is the single node 0
/// and its successor is itself.
///
/// # Errors
/// As for [`check_node`]: `node` must be in the `d`-cube.
///
/// ```
/// use hypercube_topology::ring_successor;
/// assert_eq!(ring_successor(3, 2), Ok(2));
/// assert_eq!(ring_successor(2, 2), Ok(0)); // wraps
/// ```
pub fn ring_successor(node: NodeId, d: u32) -> Result<NodeId, TopologyError> {
    check_node(node, d)?;
    let size = 1u32 << d;
    Ok(gray((ginv(node) + 1) % size))
}

/// The node before `node` on the Gray-code ring of the `d`-cube (wrapping from
/// the first position to the last). Inverse of [`ring_successor`].
///
/// # Errors
/// As for [`check_node`]: `node` must be in the `d`-cube.
///
/// ```
/// use hypercube_topology::ring_predecessor;
/// assert_eq!(ring_predecessor(0, 3), Ok(4)); // wraps to gray(7)
/// ```
pub fn ring_predecessor(node: NodeId, d: u32) -> Result<NodeId, TopologyError> {
    check_node(node, d)?;
    let size = 1u32 << d;
    Ok(gray((ginv(node) + size - 1) % size))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::hamming;
    use proptest::prelude::*;

    /// GINV exactly as the listing writes it (§13).
    fn ginv_listing(n: u32) -> u32 {
        let mut t = n;
        let mut g = n;
        loop {
            t /= 2;
            if t == 0 {
                return g;
            }
            g ^= t;
        }
    }

    #[test]
    fn gray_table() {
        // Binary reflected Gray code, j = 0..16.
        let expected = [0, 1, 3, 2, 6, 7, 5, 4, 12, 13, 15, 14, 10, 11, 9, 8];
        for (j, &g) in expected.iter().enumerate() {
            assert_eq!(gray(j as u32), g, "gray({j})");
            assert_eq!(ginv(g), j as u32, "ginv({g})");
        }
    }

    #[test]
    fn listing_domain_0_to_127_is_a_permutation() {
        let mut seen = [false; 128];
        for j in 0..128 {
            let g = gray(j) as usize;
            assert!(g < 128 && !seen[g]);
            seen[g] = true;
            assert_eq!(ginv_listing(g as u32), j);
        }
    }

    #[test]
    fn ring_small_cubes() {
        assert_eq!(gray_ring(0), vec![0]);
        assert_eq!(ring_successor(0, 0), Ok(0));
        assert_eq!(ring_predecessor(0, 0), Ok(0));
        assert_eq!(gray_ring(1), vec![0, 1]);
        assert_eq!(ring_successor(1, 1), Ok(0));
        assert_eq!(gray_ring(3), vec![0, 1, 3, 2, 6, 7, 5, 4]);
        assert_eq!(ring_successor(4, 3), Ok(0));
        assert_eq!(ring_predecessor(4, 3), Ok(5));
        assert_eq!(
            ring_successor(8, 3),
            Err(TopologyError::NodeOutOfRange { node: 8, dim: 3 })
        );
        assert!(ring_successor(0, 32).is_err());
        // 2^30 = gray(2^31 - 1) is the last node of the 31-cube ring: it wraps to 0.
        assert_eq!(ring_successor(1 << 30, 31), Ok(0));
        assert_eq!(
            ring_successor(1 << 30, 31).and_then(|n| ring_predecessor(n, 31)),
            Ok(1 << 30)
        );
    }

    proptest! {
        #[test]
        fn consecutive_gray_codes_are_neighbors(j in any::<u32>()) {
            prop_assert_eq!(hamming(gray(j), gray(j.wrapping_add(1))), 1);
        }

        #[test]
        fn ginv_inverts_gray(j in any::<u32>()) {
            prop_assert_eq!(ginv(gray(j)), j);
            prop_assert_eq!(gray(ginv(j)), j);
            prop_assert_eq!(ginv(j), ginv_listing(j));
        }

        #[test]
        fn ring_wraps_and_steps_to_neighbors(d in 1u32..=31, raw in any::<u32>()) {
            let node = raw & ((1u32 << d) - 1);
            let next = ring_successor(node, d).unwrap();
            prop_assert_eq!(hamming(node, next), 1);
            prop_assert_eq!(ring_predecessor(next, d).unwrap(), node);
            // The last position wraps to the first.
            let last = gray((1u32 << d) - 1);
            prop_assert_eq!(ring_successor(last, d).unwrap(), 0);
            prop_assert_eq!(hamming(last, 0), 1);
        }

        #[test]
        fn small_rings_are_closed_walks(d in 1u32..=10) {
            let ring = gray_ring(d);
            prop_assert_eq!(ring.len(), 1usize << d);
            for (i, &n) in ring.iter().enumerate() {
                let next = ring[(i + 1) % ring.len()];
                prop_assert_eq!(hamming(n, next), 1);
                prop_assert_eq!(ring_successor(n, d).unwrap(), next);
            }
        }
    }
}
