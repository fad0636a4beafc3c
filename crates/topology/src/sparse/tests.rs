//! Tests of `sparse.rs`: `between` and the split around a minimal child (examples and
//! against a listing), the fan-out (duplicates, relays through non-targets, a bad target
//! named), and as properties: every target reached once, on a shortest path.

use super::*;
use crate::cube::hamming;
use proptest::prelude::*;
use std::collections::BTreeSet;

/// BETWEEN exactly as the listing writes it, with room for the sum.
fn between_listing(i: u32, j: u32, k: u32) -> bool {
    u64::from(i ^ k) == u64::from(i ^ j) + u64::from(j ^ k)
}

#[test]
fn between_examples() {
    assert!(between(0, 0, 5)); // endpoints lie on every path
    assert!(between(0, 5, 5));
    assert!(between(0, 4, 5));
    assert!(!between(0, 2, 5));
    assert!(between(13, 9, 1)); // 13 -> 9 -> 1 clears bits 2 then 3
    assert!(!between(13, 15, 1));
}

#[test]
fn split_worked_example() {
    let mut list = [7, 3, 4, 1, 6];
    assert_eq!(split_in_place(0, &mut list), Some(2));
    assert_eq!(list, [7, 3, 1, 4, 6]);
    let mut rest = [4, 6];
    assert_eq!(split_in_place(0, &mut rest), Some(1));
    assert_eq!(rest, [6, 4]);
    // Relative addressing: the same list split from node 1.
    assert_eq!(
        split(1, &[7, 3]),
        Some(Split {
            child: 3,
            descendants: vec![7],
            rest: vec![]
        })
    );
}

#[test]
fn split_edge_cases() {
    assert_eq!(split_in_place(0, &mut []), None);
    assert_eq!(split(0, &[]), None);
    assert_eq!(
        split(5, &[9]),
        Some(Split {
            child: 9,
            descendants: vec![],
            rest: vec![]
        })
    );
    // No target dominates another: the first stays the child, rest unchanged.
    assert_eq!(
        split(0, &[1, 2, 4, 8]),
        Some(Split {
            child: 1,
            descendants: vec![],
            rest: vec![2, 4, 8]
        })
    );
    // A chain: the minimal element is found wherever it sits.
    assert_eq!(
        split(0, &[15, 7, 3, 1]),
        Some(Split {
            child: 1,
            descendants: vec![15, 7, 3],
            rest: vec![]
        })
    );
}

#[test]
fn fanout_drops_me_and_duplicates() {
    assert_eq!(sparse_fanout(0, 0, &[0, 3, 3]), vec![(1, vec![3])]);
    assert!(sparse_fanout(4, 0, &[4]).is_empty());
    assert!(sparse_fanout(4, 0, &[]).is_empty());
}

#[test]
fn fanout_relays_through_non_targets() {
    // 0 -> 3 and 0 -> 5 both start on link 0: one message to relay node 1.
    assert_eq!(sparse_fanout(0, 0, &[3, 5]), vec![(1, vec![3, 5])]);
    assert_eq!(
        sparse_fanout(1, 0, &[3, 5]),
        vec![(3, vec![3]), (5, vec![5])]
    );
}

#[test]
fn try_fanout_names_the_bad_target() {
    let err = try_sparse_fanout(1, 0, &[3, 2]).unwrap_err();
    assert_eq!(
        err,
        TopologyError::TargetNotDownstream {
            target: 2,
            me: 1,
            root: 0
        }
    );
    assert!(err.to_string().contains("target 2"));
}

/// Distinct targets in a small cube, never the root.
fn cube_and_targets() -> impl Strategy<Value = (u32, u32, Vec<u32>)> {
    (1u32..=7).prop_flat_map(|d| {
        let size = 1u32 << d;
        (
            Just(d),
            0..size,
            proptest::collection::btree_set(0..size, 0..=(size as usize)),
        )
            .prop_map(|(d, root, set)| (d, root, set.into_iter().filter(|&t| t != root).collect()))
    })
}

proptest! {
    #[test]
    fn between_matches_listing(i in any::<u32>(), j in any::<u32>(), k in any::<u32>()) {
        prop_assert_eq!(between(i, j, k), between_listing(i, j, k));
        prop_assert_eq!(
            between(i, j, k),
            hamming(i, j) + hamming(j, k) == hamming(i, k)
        );
    }

    #[test]
    fn split_partitions_around_a_minimal_child(
        me in 0u32..64,
        targets in proptest::collection::vec(0u32..64, 1..20),
    ) {
        let s = split(me, &targets).unwrap();
        // Same multiset of nodes, with the listing's layout.
        let mut list = targets.clone();
        let first = split_in_place(me, &mut list).unwrap();
        prop_assert_eq!(&list[..first], &s.descendants[..]);
        prop_assert_eq!(list[first], s.child);
        prop_assert_eq!(&list[first + 1..], &s.rest[..]);
        let mut sorted = list.clone();
        sorted.sort_unstable();
        let mut expected = targets.clone();
        expected.sort_unstable();
        prop_assert_eq!(sorted, expected);
        // The child is minimal, and the split is exact.
        for &t in &targets {
            prop_assert!(t == s.child || !between(me, t, s.child));
        }
        for &t in &s.descendants {
            prop_assert!(between(me, s.child, t));
        }
        for &t in &s.rest {
            prop_assert!(!between(me, s.child, t));
        }
    }

    #[test]
    fn send_plan_covers_each_target_once((_d, root, targets) in cube_and_targets()) {
        let plan = sparse_send_plan(root, &targets);
        let mut reached = Vec::new();
        for (child, descendants) in &plan {
            reached.push(*child);
            for &t in descendants {
                prop_assert!(between(root, *child, t));
                reached.push(t);
            }
        }
        reached.sort_unstable();
        let mut expected = targets.clone();
        expected.sort_unstable();
        prop_assert_eq!(reached, expected);
    }

    #[test]
    fn fanout_step_keeps_shortest_paths((_d, root, targets) in cube_and_targets()) {
        let fanout = sparse_fanout(root, root, &targets);
        let mut carried_all = Vec::new();
        for (neighbor, carried) in &fanout {
            prop_assert_eq!(hamming(root, *neighbor), 1);
            prop_assert!(!carried.is_empty());
            for &t in carried {
                prop_assert_eq!(
                    hamming(root, *neighbor) + hamming(*neighbor, t),
                    hamming(root, t)
                );
                carried_all.push(t);
            }
        }
        carried_all.sort_unstable();
        let mut expected = targets.clone();
        expected.sort_unstable();
        prop_assert_eq!(carried_all, expected);
    }

    #[test]
    fn whole_sparse_send_reaches_each_target_once_on_a_shortest_path(
        (_d, root, targets) in cube_and_targets(),
    ) {
        // Simulate the runtime: (node, list, hops from root so far).
        let mut queue = vec![(root, targets.clone(), 0u32)];
        let mut delivered: Vec<u32> = Vec::new();
        let mut visits: BTreeSet<u32> = BTreeSet::new();
        while let Some((me, list, hops)) = queue.pop() {
            prop_assert!(visits.insert(me), "node {} received twice", me);
            prop_assert_eq!(hops, hamming(root, me));
            if me != root && list.contains(&me) {
                delivered.push(me);
            }
            let checked = try_sparse_fanout(me, root, &list);
            prop_assert!(checked.is_ok(), "{:?}", checked);
            for (neighbor, carried) in checked.unwrap() {
                prop_assert_eq!(hamming(me, neighbor), 1);
                queue.push((neighbor, carried, hops + 1));
            }
        }
        delivered.sort_unstable();
        let mut expected = targets.clone();
        expected.sort_unstable();
        prop_assert_eq!(delivered, expected);
    }
}
