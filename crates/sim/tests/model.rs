//! Invariants of the cycle model, the lower bound, determinism, and tiny
//! hand-checked cases for every algorithm.

use hypercube_sim::algorithms::{BruteForce, Equibalancing, Lookahead, Ours, Rbf};
use hypercube_sim::bound::LowerBound;
use hypercube_sim::experiment::{self, Algo};
use hypercube_sim::model::{simulate, Move, Network, Router, Semantics, SimOptions};
use hypercube_sim::workload::{Generator, Params, Workload};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const ALGOS: [Algo; 8] = [
    Algo::BruteForce,
    Algo::Rbf,
    Algo::Equibalancing,
    Algo::Lookahead(0.0),
    Algo::Lookahead(1.0),
    Algo::Ours,
    Algo::Exchange,
    Algo::Planned,
];
const SEMANTICS: [Semantics; 2] = [Semantics::Synchronous, Semantics::Appendix];

fn sim(algo: Algo, w: &Workload, semantics: Semantics, seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    simulate(
        w,
        algo.router().as_mut(),
        SimOptions {
            semantics,
            check: true,
        },
        &mut rng,
    )
    .unwrap_or_else(|e| panic!("{algo:?} {semantics:?}: {e}"))
    .cycles
}

fn workloads() -> Vec<Workload> {
    let mut v = vec![Workload::all_to_all(3, 2), Workload::all_to_all(4, 1)];
    for (i, g) in [Generator::Appendix, Generator::Text]
        .into_iter()
        .enumerate()
    {
        let p = Params {
            n: 4,
            lnom1: 1,
            lnom2: 6,
            senders_pct: 60.0,
            dest_pct: 40.0,
        };
        v.push(experiment::workload(&p, g, 11 + i as u64));
    }
    v
}

/// A router wrapper that records every move and checks the per-cycle rules
/// from the outside: ≤ 1 send per node per cycle, a minimal-path link, and
/// (synchronously) a packet moves at most once per cycle.
struct Audit<R: Router> {
    inner: R,
    cycle: u64,
    senders: Vec<u64>,
    moved: Vec<u64>,
    sends: u64,
}

impl<R: Router> Router for Audit<R> {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn begin_cycle(&mut self, net: &Network, rng: &mut ChaCha8Rng) {
        self.cycle = net.cycle();
        self.inner.begin_cycle(net, rng);
    }
    fn order(&mut self, net: &Network, rng: &mut ChaCha8Rng) -> Option<Vec<u32>> {
        self.inner.order(net, rng)
    }
    fn choose(&mut self, net: &Network, node: u32, rng: &mut ChaCha8Rng) -> Option<Move> {
        let mv = self.inner.choose(net, node, rng)?;
        assert_ne!(
            self.senders[node as usize], self.cycle,
            "node {node} sends twice in cycle {}",
            self.cycle
        );
        self.senders[node as usize] = self.cycle;
        let p = net.packet(mv.packet);
        assert_eq!(p.at, node);
        assert_eq!((p.at ^ p.dst) >> mv.dim & 1, 1, "non-minimal hop");
        if net.semantics() == Semantics::Synchronous {
            assert_ne!(
                self.moved[mv.packet as usize], self.cycle,
                "packet moved twice in a cycle"
            );
        }
        self.moved[mv.packet as usize] = self.cycle;
        self.sends += 1;
        Some(mv)
    }
}

#[test]
fn invariants_bound_and_conservation() {
    for w in workloads() {
        let total: u64 = w
            .packets
            .iter()
            .map(|&(s, d)| (s ^ d).count_ones() as u64)
            .sum();
        let b = LowerBound::of(&w);
        for algo in ALGOS {
            for semantics in SEMANTICS {
                let mut r = Audit {
                    inner: algo.router(),
                    cycle: u64::MAX,
                    senders: vec![u64::MAX; w.nodes() as usize],
                    moved: vec![u64::MAX; w.packets.len()],
                    sends: 0,
                };
                let mut rng = ChaCha8Rng::seed_from_u64(3);
                let res = simulate(
                    &w,
                    &mut r,
                    SimOptions {
                        semantics,
                        check: true,
                    },
                    &mut rng,
                )
                .unwrap_or_else(|e| panic!("{algo:?} {semantics:?}: {e}"));
                assert_eq!(res.packets, w.packets.len());
                // Every packet crossed exactly its Hamming distance (minimal path), once per send.
                assert_eq!(res.hops, total);
                assert_eq!(r.sends, total);
                let lb = match semantics {
                    Semantics::Synchronous => b.value(),
                    Semantics::Appendix => b.appendix(),
                };
                assert!(
                    lb <= res.cycles,
                    "{algo:?} {semantics:?}: bound {lb} > {}",
                    res.cycles
                );
            }
        }
    }
}

#[test]
fn deterministic_for_a_seed() {
    let p = Params {
        n: 4,
        lnom1: 2,
        lnom2: 5,
        senders_pct: 80.0,
        dest_pct: 50.0,
    };
    for algo in ALGOS {
        let a: Vec<u64> = (0..3)
            .map(|s| {
                experiment::run(
                    algo,
                    &experiment::workload(&p, Generator::Appendix, s),
                    Semantics::Synchronous,
                    s,
                )
                .unwrap()
            })
            .collect();
        let b: Vec<u64> = (0..3)
            .map(|s| {
                experiment::run(
                    algo,
                    &experiment::workload(&p, Generator::Appendix, s),
                    Semantics::Synchronous,
                    s,
                )
                .unwrap()
            })
            .collect();
        assert_eq!(a, b, "{algo:?}");
    }
}

#[test]
fn single_packet_takes_its_distance() {
    let w = Workload {
        n: 3,
        packets: vec![(0, 7)],
    };
    for algo in ALGOS {
        for s in SEMANTICS {
            let c = sim(algo, &w, s, 1);
            // Appendix semantics: 0 → 1|2|4 → … can hop several times in one cycle.
            if s == Semantics::Synchronous {
                assert_eq!(c, 3, "{algo:?}");
            } else {
                assert!((1..=3).contains(&c), "{algo:?} {c}");
            }
        }
    }
}

#[test]
fn proposition_1_and_rbf_rounds() {
    // Three messages over three links: l + m - 1 = 5 for farthest-first routers.
    let w = Workload {
        n: 3,
        packets: vec![(0, 7); 3],
    };
    for algo in [
        Algo::BruteForce,
        Algo::Equibalancing,
        Algo::Lookahead(1.0),
        Algo::Ours,
    ] {
        assert_eq!(sim(algo, &w, Semantics::Synchronous, 5), 5, "{algo:?}");
    }
    // RBF: the root may send a distance-3 packet only in the first cycle of
    // each 3-cycle round, so the third packet leaves in round 3 and arrives at cycle 9.
    assert_eq!(sim(Algo::Rbf, &w, Semantics::Synchronous, 5), 9);
}

#[test]
fn equibalancing_avoids_the_busy_neighbour() {
    // 2-cube: node 1 holds three packets for node 3; node 0 has one packet for 3.
    // ALG I must route 0 → 2 → 3 (node 2 is empty), finishing in 3 cycles;
    // through node 1 it would wait behind the three packets.
    let w = Workload {
        n: 2,
        packets: vec![(1, 3), (1, 3), (1, 3), (0, 3)],
    };
    for seed in 0..10 {
        let net = Network::new(&w, Semantics::Synchronous);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mv = Equibalancing.choose(&net, 0, &mut rng).unwrap();
        assert_eq!(mv, Move { packet: 3, dim: 1 });
        assert_eq!(
            sim(Algo::Equibalancing, &w, Semantics::Synchronous, seed),
            3
        );
        assert_eq!(sim(Algo::Ours, &w, Semantics::Synchronous, seed), 3);
        assert_eq!(
            sim(Algo::Lookahead(1.0), &w, Semantics::Synchronous, seed),
            3
        );
    }
}

#[test]
fn lookahead_avoids_predicted_arrivals() {
    // 3-cube: node 0 sends to 3 via 1 or 2 (both empty, so ALG I is a coin flip).
    // Node 5 = 101b holds packets for 3 = 011b (distance 2) that may pass
    // through 1, so ALG II (threshold 1) must pick node 2.
    let w = Workload {
        n: 3,
        packets: vec![(0, 3), (5, 3), (5, 3)],
    };
    let net = Network::new(&w, Semantics::Synchronous);
    assert_eq!(Lookahead::predicted_arrivals(&net, 0, 0), 1);
    assert_eq!(Lookahead::predicted_arrivals(&net, 0, 1), 0);
    let mut alg1_dims = std::collections::BTreeSet::new();
    for seed in 0..32 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        assert_eq!(
            Lookahead::new(1.0).choose(&net, 0, &mut rng),
            Some(Move { packet: 0, dim: 1 })
        );
        assert_eq!(
            Ours::default().choose(&net, 0, &mut rng),
            Some(Move { packet: 0, dim: 1 })
        );
        alg1_dims.insert(Equibalancing.choose(&net, 0, &mut rng).unwrap().dim);
        let bf = BruteForce.choose(&net, 0, &mut rng).unwrap();
        assert!(bf.dim < 2);
    }
    assert_eq!(alg1_dims.len(), 2, "ALG I breaks the tie at random");
    // RBF in cycle 0 (level 3) has nothing at distance 3 to send.
    let mut rbf = Rbf::default();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    rbf.begin_cycle(&net, &mut rng);
    assert_eq!(rbf.choose(&net, 0, &mut rng), None);
}

#[test]
fn bad_moves_are_rejected() {
    struct Bad;
    impl Router for Bad {
        fn name(&self) -> String {
            "bad".into()
        }
        fn choose(&mut self, net: &Network, node: u32, _: &mut ChaCha8Rng) -> Option<Move> {
            let id = net.farthest(node)?;
            let p = net.packet(id);
            // A dimension that is *not* on a minimal path.
            let dim = (0..net.dim()).find(|&k| (p.at ^ p.dst) >> k & 1 == 0)?;
            Some(Move { packet: id, dim })
        }
    }
    let w = Workload {
        n: 3,
        packets: vec![(0, 1)],
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    assert!(simulate(&w, &mut Bad, SimOptions::default(), &mut rng).is_err());
}

#[test]
fn ours_best_never_worse_than_alg2() {
    let p = Params {
        n: 4,
        lnom1: 1,
        lnom2: 6,
        senders_pct: 80.0,
        dest_pct: 50.0,
    };
    for seed in 0..2 {
        let w = experiment::workload(&p, Generator::Appendix, seed);
        let best = experiment::run(Algo::OursBest, &w, Semantics::Synchronous, seed).unwrap();
        assert!(best >= LowerBound::of(&w).value());
        for t in 0..=10 {
            let a2 = experiment::run(
                Algo::Lookahead(t as f64 / 10.0),
                &w,
                Semantics::Synchronous,
                seed,
            )
            .unwrap();
            assert!(best <= a2, "seed {seed} θ {t}: {best} > {a2}");
        }
    }
}
