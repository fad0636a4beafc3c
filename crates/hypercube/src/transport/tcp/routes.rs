//! Which links are down, as far as this node knows, and the routes around them: the link
//! state every node floods (`Kind::Link`), and the next hop towards any node over the links
//! still up — the e-cube hop while the e-cube path is whole, else the first hop of a
//! shortest path over the live links (a minimal path in another dimension order where one
//! exists, else a detour of two hops more: `[j, k, j]` around a dead link `k`). Pure state,
//! no I/O: `reroute.rs` acts on it. See `docs/reliability.md`, "Rerouting".

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use hypercube_topology::NodeId;

/// The link state this node knows, and the routes that follow from it.
#[derive(Default)]
pub(crate) struct Routes {
    /// The latest report of each end about its link: (reporting node, dimension) →
    /// (the report's number, down).
    reports: FxHashMap<(NodeId, u32), (u64, bool)>,
    /// The edges down (either end said so), as (the end with the bit clear, dimension).
    down: FxHashSet<(NodeId, u32)>,
    /// Next hop (dimension) from a node towards another while some edge is down; `None`:
    /// unreachable.
    cache: FxHashMap<(NodeId, NodeId), Option<u32>>,
}

/// The edge across dimension `k` at node `a`, as its key in [`Routes::down`].
fn edge(a: NodeId, k: u32) -> (NodeId, u32) {
    (a & !(1 << k), k)
}

impl Routes {
    /// Is every edge up (the e-cube routes hold)?
    pub fn all_up(&self) -> bool {
        self.down.is_empty()
    }

    /// Is the edge across dimension `k` at node `a` down?
    pub fn is_down(&self, a: NodeId, k: u32) -> bool {
        !self.down.is_empty() && self.down.contains(&edge(a, k))
    }

    /// The edges down, as (the end with the bit clear, dimension), in order.
    pub fn down_edges(&self) -> Vec<(NodeId, u32)> {
        let mut v: Vec<_> = self.down.iter().copied().collect();
        v.sort_unstable();
        v
    }

    /// Node `node`'s report number `number` about its link in dimension `k`: down or up.
    /// Returns whether it is news (newer than what was known); the routes follow it.
    pub fn apply(&mut self, node: NodeId, k: u32, number: u64, down: bool) -> bool {
        match self.reports.get(&(node, k)) {
            Some(&(n, _)) if n >= number => return false,
            _ => {}
        }
        self.reports.insert((node, k), (number, down));
        let other = self
            .reports
            .get(&(node ^ (1 << k), k))
            .is_some_and(|&(_, d)| d);
        let e = edge(node, k);
        let was = self.down.contains(&e);
        let now = down || other;
        if now {
            self.down.insert(e);
        } else {
            self.down.remove(&e);
        }
        if was != now {
            self.cache.clear();
        }
        true
    }

    /// The dimension of the next hop from `me` towards `target` in a `dim`-cube over the
    /// edges up: the e-cube hop (lowest differing bit) while the e-cube path is whole, else
    /// the lowest dimension that starts a shortest path over the live edges. `None`: no path
    /// (or `me == target`).
    pub fn next_hop(&mut self, me: NodeId, dim: u32, target: NodeId) -> Option<u32> {
        let diff = me ^ target;
        if diff == 0 {
            return None;
        }
        if self.down.is_empty() {
            return Some(diff.trailing_zeros());
        }
        if let Some(&hop) = self.cache.get(&(me, target)) {
            return hop;
        }
        let hop = if self.ecube_whole(me, target) {
            Some(diff.trailing_zeros())
        } else {
            let dist = self.distances(dim, target);
            let here = dist[me as usize];
            (0..dim).find(|&k| {
                !self.is_down(me, k)
                    && here != u32::MAX
                    && dist[(me ^ (1 << k)) as usize].wrapping_add(1) == here
            })
        };
        self.cache.insert((me, target), hop);
        hop
    }

    /// Does the e-cube path from `from` to `to` cross no edge that is down?
    fn ecube_whole(&self, from: NodeId, to: NodeId) -> bool {
        let mut at = from;
        while at != to {
            let k = (at ^ to).trailing_zeros();
            if self.is_down(at, k) {
                return false;
            }
            at ^= 1 << k;
        }
        true
    }

    /// Hops from every node of a `dim`-cube to `target` over the edges up (`u32::MAX`: no
    /// path).
    fn distances(&self, dim: u32, target: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; 1usize << dim];
        dist[target as usize] = 0;
        let mut queue = VecDeque::from([target]);
        while let Some(a) = queue.pop_front() {
            for k in 0..dim {
                let b = a ^ (1 << k);
                if dist[b as usize] == u32::MAX && !self.is_down(a, k) {
                    dist[b as usize] = dist[a as usize] + 1;
                    queue.push_back(b);
                }
            }
        }
        dist
    }

    /// The nodes of a `dim`-cube that `me` cannot reach over the edges up, in order.
    pub fn unreachable(&self, me: NodeId, dim: u32) -> Vec<NodeId> {
        if self.down.is_empty() {
            return Vec::new();
        }
        let dist = self.distances(dim, me);
        (0..1u32 << dim)
            .filter(|&n| dist[n as usize] == u32::MAX)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Routes;

    /// The path the next hops make from `a` to `b`, as dimensions.
    fn path(r: &mut Routes, dim: u32, mut a: u32, b: u32) -> Vec<u32> {
        let mut out = Vec::new();
        while a != b {
            let k = r.next_hop(a, dim, b).expect("a path");
            assert!(!r.is_down(a, k), "the hop crosses a dead edge");
            out.push(k);
            a ^= 1 << k;
            assert!(out.len() <= 2 * dim as usize, "a loop: {out:?}");
        }
        out
    }

    #[test]
    fn e_cube_while_whole_another_order_or_a_detour_around_a_dead_edge() {
        let mut r = Routes::default();
        assert_eq!(path(&mut r, 3, 5, 3), vec![1, 2]);
        // Edge 5-7 (dim 1) down, reported by node 5.
        assert!(r.apply(5, 1, 1, true));
        assert!(!r.apply(5, 1, 1, true), "an old report is no news");
        assert!(r.is_down(7, 1));
        // 5 -> 3 took dims 1, 2: now a minimal path in the other order.
        assert_eq!(path(&mut r, 3, 5, 3), vec![2, 1]);
        // 5 -> 7: no minimal path; the detour [0, 1, 0].
        assert_eq!(path(&mut r, 3, 5, 7), vec![0, 1, 0]);
        assert_eq!(path(&mut r, 3, 7, 5), vec![0, 1, 0]);
        // Paths that never used the edge stay e-cube.
        assert_eq!(path(&mut r, 3, 0, 7), vec![0, 1, 2]);
        // Every pair is still connected, by a path of at most d + 2 hops.
        for a in 0..8 {
            for b in 0..8 {
                assert!(path(&mut r, 3, a, b).len() <= 5);
            }
        }
        assert!(r.unreachable(5, 3).is_empty());
        // The other end says up (a newer report), but node 5 still says down.
        assert!(r.apply(7, 1, 2, false));
        assert!(r.is_down(5, 1));
        assert!(r.apply(5, 1, 2, false));
        assert!(r.all_up());
        assert_eq!(path(&mut r, 3, 5, 7), vec![1]);
    }

    #[test]
    fn a_node_with_all_its_edges_down_is_unreachable() {
        let mut r = Routes::default();
        for k in 0..3 {
            r.apply(5, k, 1, true);
        }
        assert_eq!(r.unreachable(0, 3), vec![5]);
        assert_eq!(r.next_hop(0, 3, 5), None);
        assert_eq!(r.unreachable(5, 3), vec![0, 1, 2, 3, 4, 6, 7]);
        assert_eq!(r.down_edges(), vec![(1, 2), (4, 0), (5, 1)]);
    }
}
