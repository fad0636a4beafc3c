//! E-cube (dimension-order) routing: correct the lowest differing bit first.
//!
//! Every e-cube route is a shortest path (its length is the Hamming distance)
//! and the route between two nodes is unique, which makes it deadlock-free on
//! the hypercube. The sparse global send (§7, [`crate::sparse_fanout`]) uses
//! the e-cube next hop to pick the link towards each child.

use crate::cube::NodeId;

/// The e-cube next hop from `from` towards `to`: correct the lowest differing bit.
/// `None` when `from == to`.
///
/// ```
/// use hypercube_topology::ecube_next_hop;
/// assert_eq!(ecube_next_hop(0b000, 0b110), Some(0b010));
/// assert_eq!(ecube_next_hop(5, 5), None);
/// ```
pub fn ecube_next_hop(from: NodeId, to: NodeId) -> Option<NodeId> {
    let diff = from ^ to;
    if diff == 0 {
        None
    } else {
        Some(from ^ (1 << diff.trailing_zeros()))
    }
}

/// The full e-cube route from `from` to `to`: the nodes visited after `from`,
/// ending with `to` (empty when `from == to`). Its length is
/// [`crate::hamming`]`(from, to)` and each step crosses one link.
///
/// ```
/// use hypercube_topology::ecube_route;
/// assert_eq!(ecube_route(0b000, 0b101), vec![0b001, 0b101]);
/// assert!(ecube_route(7, 7).is_empty());
/// ```
pub fn ecube_route(from: NodeId, to: NodeId) -> Vec<NodeId> {
    let mut route = Vec::with_capacity((from ^ to).count_ones() as usize);
    let mut at = from;
    while let Some(next) = ecube_next_hop(at, to) {
        route.push(next);
        at = next;
    }
    route
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cube::hamming;
    use proptest::prelude::*;

    #[test]
    fn route_corrects_low_bits_first() {
        assert_eq!(ecube_route(0, 15), vec![1, 3, 7, 15]);
        assert_eq!(ecube_route(13, 2), vec![12, 14, 10, 2]);
    }

    proptest! {
        #[test]
        fn route_is_a_shortest_walk_of_neighbors(from in any::<u32>(), to in any::<u32>()) {
            let route = ecube_route(from, to);
            prop_assert_eq!(route.len() as u32, hamming(from, to));
            let mut at = from;
            for &step in &route {
                prop_assert_eq!(hamming(at, step), 1);
                // Each step reduces the remaining distance: the route is shortest.
                prop_assert_eq!(hamming(step, to) + 1, hamming(at, to));
                at = step;
            }
            prop_assert_eq!(at, to);
            prop_assert_eq!(route.first().copied(), ecube_next_hop(from, to));
        }
    }
}
