use super::patterns::{bit_reversal, permutation, transpose};
use super::*;
use crate::cube::hamming;
use proptest::prelude::*;

/// Every byte of every message exactly once, along a minimal path, and the loads are the
/// sums over the routes.
fn check_plan(plan: &Plan, dim: u32, sizes: &[u64]) {
    let p = 1u32 << dim;
    let mut loads = vec![0u64; (dim as usize) << dim];
    for src in 0..p {
        for dst in 0..p {
            let m = if src == dst {
                0
            } else {
                sizes[(src * p + dst) as usize]
            };
            let legs: Vec<&Leg> = plan
                .legs_from(src)
                .iter()
                .filter(|l| l.dst == dst)
                .collect();
            let mut next = 0;
            for l in &legs {
                assert_eq!(l.offset, next, "{src}→{dst}: parts must tile the message");
                assert!(l.bytes > 0, "{src}→{dst}: an empty part");
                next += l.bytes;
                assert_eq!(l.route.len() as u32, hamming(src, dst), "minimal path");
                assert_eq!(
                    l.route.end(src),
                    dst,
                    "the route must end at the destination"
                );
                let mut at = src;
                for k in l.route.dims() {
                    loads[(at * dim + k) as usize] += l.bytes;
                    at ^= 1 << k;
                }
            }
            assert_eq!(next, m, "{src}→{dst}: every byte exactly once");
        }
    }
    assert_eq!(plan.loads(), &loads[..]);
    assert_eq!(
        plan.legs_to(0).count(),
        plan.legs().iter().filter(|l| l.dst == 0).count()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn plans_deliver_every_byte_once_on_minimal_paths(
        dim in 0u32..=6,
        seed in any::<u64>(),
        density in 1u64..=4,
        min_part in 1u64..5000,
        max_parts in 0u32..=8,
    ) {
        let p = 1usize << dim;
        let mut x = seed | 1;
        let sizes: Vec<u64> = (0..p * p)
            .map(|_| {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                if x % 4 < density { x % 20_000 } else { 0 }
            })
            .collect();
        let opts = PlanOptions { min_part, max_parts };
        let plan = Plan::balanced(dim, &sizes, opts).unwrap();
        check_plan(&plan, dim, &sizes);
        prop_assert_eq!(plan.digest(), Plan::balanced(dim, &sizes, opts).unwrap().digest());
        let e = Plan::ecube(dim, &sizes).unwrap();
        check_plan(&e, dim, &sizes);
        prop_assert!(plan.max_parts() as u32 <= max_parts.max(1));
    }

    #[test]
    fn routes_pack_and_unpack(dims in proptest::collection::vec(0u32..16, 0..=8)) {
        let r = Route::from_dims(&dims).unwrap();
        let (n, nib) = r.packed();
        prop_assert_eq!(Route::from_packed(n, nib, 16), Some(r));
        prop_assert_eq!(r.dims().collect::<Vec<_>>(), dims.clone());
        if let Some(&top) = dims.iter().max() {
            prop_assert_eq!(Route::from_packed(n, nib, top), None);
        }
    }
}

/// A route's hops: the listed ones, then e-cube from where they end — a detour counts
/// every link it crosses.
#[test]
fn a_route_counts_its_listed_hops_then_the_ecube_rest() {
    assert_eq!(Route::ECUBE.hops(0, 0b1011), 3);
    let listed = Route::from_dims(&[1]).unwrap();
    assert_eq!(
        listed.hops(0, 0b11),
        2,
        "dimension 1, then e-cube's dimension 0"
    );
    let detour = Route::from_dims(&[1, 0, 1]).unwrap();
    assert_eq!(detour.hops(0, 1), 3, "the long way round to a neighbour");
}

#[test]
fn bad_packed_routes_are_refused() {
    assert_eq!(Route::from_packed(9, 0, 8), None);
    assert_eq!(
        Route::from_packed(1, 0x10, 8),
        None,
        "bits beyond the last hop"
    );
    assert_eq!(Route::from_packed(0, 0, 0), Some(Route::ECUBE));
    assert!(Route::from_dims(&[0; 9]).is_none());
    assert!(Route::from_dims(&[16]).is_none());
}

#[test]
fn patterns_are_permutations() {
    for dim in 0..=8 {
        let p = 1u32 << dim;
        for f in [transpose, bit_reversal] {
            let mut seen = vec![false; p as usize];
            for n in 0..p {
                let t = f(n, dim);
                assert!(t < p && !seen[t as usize]);
                seen[t as usize] = true;
                assert_eq!(f(t, dim), n, "an involution");
            }
        }
    }
    assert_eq!(transpose(0b0111, 4), 0b1101);
    assert_eq!(bit_reversal(0b0011, 4), 0b1100);
}

/// The figures: max link load under e-cube / the best minimal routing, for the
/// transpose and bit-reversal permutations (one message each): d=4 2/1, d=6 4/2, d=8 8/2.
#[test]
fn the_plan_halves_the_busiest_link_of_transpose_and_bit_reversal() {
    let whole = PlanOptions {
        min_part: 1,
        max_parts: 1,
    };
    for (dim, ecube, best) in [(4, 2, 1), (6, 4, 2), (8, 8, 2)] {
        for f in [transpose, bit_reversal] {
            let sizes = permutation(dim, 1, |n| f(n, dim));
            let e = Plan::ecube(dim, &sizes).unwrap();
            let b = Plan::balanced(dim, &sizes, whole).unwrap();
            assert_eq!(e.busiest(), ecube, "e-cube, d = {dim}");
            assert!(
                b.busiest() <= best,
                "planned d = {dim}: {} > {best}",
                b.busiest()
            );
        }
    }
}

/// Cut into parts over several paths, a permutation's busiest link carries less than one
/// whole message.
#[test]
fn parts_spread_a_message_over_disjoint_paths() {
    let dim = 4;
    let m = 1 << 20;
    let sizes = permutation(dim, m, |n| transpose(n, dim));
    let b = Plan::balanced(dim, &sizes, PlanOptions::default()).unwrap();
    check_plan(&b, dim, &sizes);
    assert!(b.busiest() < m, "{} ≥ {m}", b.busiest());
    // One message to a node at distance 3: three parts on three edge-disjoint paths.
    let mut one = vec![0u64; 64];
    one[7] = 3 << 20;
    let b = Plan::balanced(3, &one, PlanOptions::default()).unwrap();
    assert_eq!(b.legs().len(), 3);
    assert_eq!(b.busiest(), 1 << 20);
}

#[test]
fn sizes_of_the_wrong_shape_are_refused() {
    assert!(Plan::balanced(2, &[0; 15], PlanOptions::default()).is_none());
    assert!(Plan::ecube(9, &vec![0; 1 << 18]).is_none());
}
