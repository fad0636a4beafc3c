//! The dimension-ordered exchange and the planned router (issue 23).

use hypercube_sim::algorithms::planned::{
    all_port_cycles, busiest_port, plan_of, routes_of, sizes,
};
use hypercube_sim::bound::LowerBound;
use hypercube_sim::experiment::{self, Algo};
use hypercube_sim::model::Semantics;
use hypercube_sim::tables::TABLES;
use hypercube_sim::workload::{Generator, Params, Workload};
use hypercube_topology::hamming;

fn many_to_many(n: u32, seed: u64) -> Workload {
    let p = Params {
        n,
        lnom1: 1,
        lnom2: 6,
        senders_pct: 60.0,
        dest_pct: 40.0,
    };
    experiment::workload(&p, Generator::Appendix, seed)
}

#[test]
fn exchange_meets_the_bound_on_all_to_all() {
    for n in 1..=5 {
        for k in 1..=3 {
            let w = Workload::all_to_all(n, k);
            let c = experiment::run(Algo::Exchange, &w, Semantics::Synchronous, 1).unwrap();
            // n · k · 2^(n-1): the hop bound.
            assert_eq!(c, u64::from(n * k) << (n - 1), "n {n} k {k}");
            assert_eq!(c, LowerBound::of(&w).value(), "n {n} k {k}");
        }
    }
}

#[test]
fn exchange_meets_the_bound_on_the_published_all_to_all_rows() {
    for t in TABLES {
        for row in t.rows.iter().filter(|r| r.params.is_all_to_all()) {
            let w = experiment::workload(&row.params, Generator::Appendix, 1);
            let c = experiment::run(Algo::Exchange, &w, Semantics::Synchronous, 1).unwrap();
            assert_eq!(c, LowerBound::of(&w).value(), "row {}{}", t.id, row.label);
        }
    }
}

#[test]
fn planned_routes_are_minimal_and_cover_every_packet() {
    let mut loads = vec![Workload::all_to_all(4, 3), Workload::all_to_all(3, 1)];
    loads.extend((0..4).map(|s| many_to_many(5, s)));
    for w in &loads {
        let plan = plan_of(w).expect("a plan for n <= 8");
        let routes = routes_of(w, &plan);
        assert_eq!(routes.len(), w.packets.len());
        // Every packet has a route of exactly its distance, ending at its destination,
        // crossing each differing dimension once.
        for (&(s, d), r) in w.packets.iter().zip(&routes) {
            assert_eq!(r.len() as u32, hamming(s, d), "{s}->{d}");
            assert_eq!(r.end(s), d, "{s}->{d}");
            let dims: u32 = r.dims().fold(0, |acc, k| acc | 1 << k);
            assert_eq!(dims, s ^ d, "{s}->{d}");
        }
        // The routes put exactly the plan's loads on the links.
        let n = w.n as usize;
        let mut load = vec![0u64; n << w.n];
        for (&(s, _), r) in w.packets.iter().zip(&routes) {
            let mut at = s;
            for k in r.dims() {
                load[at as usize * n + k as usize] += 1;
                at ^= 1 << k;
            }
        }
        assert_eq!(load, plan.loads());
        // Packets per pair add up.
        let total: u64 = sizes(w.n, w.packets.iter().copied()).iter().sum();
        assert_eq!(total, w.packets.len() as u64);
    }
}

#[test]
fn planned_router_respects_its_plans_bounds() {
    for seed in 0..3 {
        for w in [many_to_many(4, seed), Workload::all_to_all(4, 1)] {
            let plan = plan_of(&w).unwrap();
            let c = experiment::run(Algo::Planned, &w, Semantics::Synchronous, seed).unwrap();
            // One-port: no faster than the plan's busiest port, nor the general bound.
            assert!(c >= busiest_port(&plan));
            assert!(c >= LowerBound::of(&w).value());
            // All-port: no faster than the busiest link, nor the longest route.
            let a = all_port_cycles(&w, &routes_of(&w, &plan));
            let longest = w.packets.iter().map(|&(s, d)| hamming(s, d)).max().unwrap();
            assert!(a >= plan.busiest() && a >= u64::from(longest));
            assert!(a <= c, "all-port {a} > one-port {c}");
        }
    }
}
#[test]
fn online_router_meets_the_bound_on_all_to_all() {
    for n in 2..=5 {
        let w = Workload::all_to_all(n, 2);
        for seed in 0..3 {
            let c = experiment::run(Algo::Ours, &w, Semantics::Synchronous, seed).unwrap();
            assert_eq!(c, LowerBound::of(&w).value(), "n {n} seed {seed}");
        }
    }
}
