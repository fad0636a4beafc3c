//! The automatic choice of algorithms (`select`) against the one-port cost model: it
//! follows the model, the work bound caps the path on shared cores, the routing regime
//! moves the all-to-all crossover, and the model's time is the virtual clock's in both
//! regimes. The model itself, equation by equation: `collectives_cost.rs`; the all-port
//! side: `all_port_cost.rs`.

#[path = "support/clock.rs"]
mod clock;

use bytes::Bytes;
use clock::{close, time, MODELS};
use hypercube::collectives::{Algorithm, Op, ShiftOrder};
use hypercube::transport::Forwarding;
use hypercube::Node;

#[test]
fn automatic_choice_follows_the_model() {
    use hypercube::collectives::select::{automatic, choose, machine, Machine, Operation};
    // A core per rank (the model alone) and 2 cores (the work bound and the measured
    // rules), whatever machine runs the test.
    // Cut-through, the book's chapter 4, whatever HYPERCUBE_FORWARDING says.
    let mut big = Machine {
        cores: 1024,
        ..machine()
    };
    big.model.forwarding = Forwarding::CutThrough;
    let two = Machine { cores: 2, ..big };
    let a = |op, k, m, comm| automatic(op, k, m, comm, &big);
    let a2 = |op, k, m, comm| automatic(op, k, m, comm, &two);
    // Short messages: the log p algorithms; long ones: the split-message ones (eq. 4.14).
    assert_eq!(a(Operation::Allreduce, 3, 8, true), Algorithm::Hypercube);
    assert_eq!(
        a(Operation::Allreduce, 3, 4 << 20, true),
        Algorithm::ReduceScatterAllgather
    );
    assert_eq!(a(Operation::Alltoall, 3, 8, true), Algorithm::StoreForward);
    assert_eq!(
        a(Operation::Alltoall, 3, 1 << 20, true),
        Algorithm::Pairwise
    );
    // On 2 cores both all-to-alls move the same bytes; the one with fewer steps wins.
    assert_eq!(
        a2(Operation::Alltoall, 3, 1 << 20, true),
        Algorithm::StoreForward
    );
    // 4 ranks on 2 cores: the measured rule (the path alone would pick pairwise), and a
    // core per rank: the model's pairwise.
    assert_eq!(
        a2(Operation::Alltoall, 2, 1 << 20, true),
        Algorithm::StoreForward
    );
    assert_eq!(
        a(Operation::Alltoall, 2, 1 << 20, true),
        Algorithm::Pairwise
    );
    // The e-cube all-to-all on shared cores where its blocks go eagerly and
    // store-and-forward's steps (m p/2) would not (64 KiB eager limit); where both are
    // eager, or neither, store-and-forward as before.
    let eager = Machine {
        eager_limit: 64 << 10,
        ..two
    };
    for (k, m) in [(2, 64 << 10), (3, 32 << 10), (3, 64 << 10), (4, 16 << 10)] {
        assert!(eager.blocks_eager_steps_not(k, m));
        assert_eq!(
            automatic(Operation::Alltoall, k, m, true, &eager),
            Algorithm::Ecube,
            "k = {k}, m = {m}"
        );
    }
    for (k, m) in [(2, 32 << 10), (3, 16 << 10), (4, 128 << 10), (3, 8)] {
        assert!(!eager.blocks_eager_steps_not(k, m));
        assert_eq!(
            automatic(Operation::Alltoall, k, m, true, &eager),
            Algorithm::StoreForward,
            "k = {k}, m = {m}"
        );
    }
    // The measured rules: the chain scan and the e-cube scatter/gather when ranks
    // outnumber cores, from 64 KiB (the gather at every size).
    assert_eq!(a(Operation::Scan, 4, 1 << 20, true), Algorithm::Hypercube);
    assert_eq!(a2(Operation::Scan, 4, 1 << 20, true), Algorithm::Chain);
    assert_eq!(a2(Operation::Scan, 4, 8, true), Algorithm::Hypercube);
    assert_eq!(
        a(Operation::Scatter, 4, 1 << 20, true),
        Algorithm::Hypercube
    );
    assert_eq!(a2(Operation::Scatter, 4, 1 << 20, true), Algorithm::Ecube);
    assert_eq!(a2(Operation::Scatter, 4, 8, true), Algorithm::Hypercube);
    assert_eq!(a2(Operation::Gather, 4, 8, true), Algorithm::Ecube);
    assert_eq!(a(Operation::Gather, 4, 8, true), Algorithm::Hypercube);
    // The barrier: the exchange with a core per rank and up to 2 ranks per core, the tree
    // (fewer messages, each a wake-up) from 4 ranks per core on — on wires too.
    let mut wires = Machine {
        link_tw: Some(80e-9),
        ..two
    };
    wires.model.t_w = 80e-9;
    for k in 1..=6 {
        assert_eq!(a(Operation::Barrier, k, 0, true), Algorithm::Hypercube);
        let crowded = if k >= 3 {
            Algorithm::Tree
        } else {
            Algorithm::Hypercube
        };
        assert_eq!(a2(Operation::Barrier, k, 0, true), crowded, "k = {k}");
        assert!(wires.links_bound(k));
        assert_eq!(
            automatic(Operation::Barrier, k, 0, true, &wires),
            crowded,
            "k = {k} on wires"
        );
    }
    // The two-phase broadcast and reduction are never chosen automatically (measured
    // slower on this 2-core machine at every size), only on request.
    for m in [&big, &two] {
        assert_eq!(
            automatic(Operation::Bcast, 4, 4 << 20, true, m),
            Algorithm::Hypercube
        );
        assert_eq!(
            automatic(Operation::Reduce, 4, 4 << 20, true, m),
            Algorithm::Hypercube
        );
        // A non-commutative operator never gets a reordering algorithm.
        assert_ne!(
            automatic(Operation::Allreduce, 6, 1 << 20, false, m),
            Algorithm::Ring
        );
    }
    // An explicit request wins, and a wrong one is an error.
    assert_eq!(
        choose(Operation::Allgather, Algorithm::Mesh, 3, 8, true).unwrap(),
        Algorithm::Mesh
    );
    assert!(choose(Operation::Allgather, Algorithm::Pairwise, 3, 8, true).is_err());
    assert!(choose(Operation::Allreduce, Algorithm::Ring, 3, 8, false).is_err());
}

/// The work bound: with 16 ranks on 2 cores a long scan is decided by the bytes it moves
/// (the chain), with a core per rank by the critical path (Alg. 4.9); short ones always by
/// the critical path.
#[test]
fn selection_bounds_the_path_by_the_work() {
    use hypercube::collectives::select::{machine, model_work, selection_time, Operation};
    let pick = |cores: usize, k: u32, m: usize| {
        let mc = hypercube::collectives::select::Machine { cores, ..machine() };
        let t = |a| selection_time(Operation::Scan, a, k, m, &mc).unwrap();
        if t(Algorithm::Chain) < t(Algorithm::Hypercube) {
            Algorithm::Chain
        } else {
            Algorithm::Hypercube
        }
    };
    assert_eq!(pick(2, 4, 1 << 20), Algorithm::Chain);
    assert_eq!(pick(16, 4, 1 << 20), Algorithm::Hypercube);
    assert_eq!(pick(2, 4, 8), Algorithm::Hypercube);
    // Volumes: Alg. 4.9 moves m p log p; the chain m Σ hamming(j, j+1) (26 m at p = 16).
    let w = |a| model_work(Operation::Scan, a, 4, 1).unwrap();
    assert_eq!(w(Algorithm::Hypercube), 64.0);
    assert_eq!(w(Algorithm::Chain), 26.0);
}

/// The routing regime in the choice (eq. 4.10 vs 4.9): with a core per rank, cut-through
/// makes the pairwise all-to-all win at large blocks and store-and-forward makes the log p
/// exchanges win at every size (the pairwise t_w term is then eq. 4.9's, its t_s term
/// larger). The same crossover at p = 8 and 16; the per-hop time only adds to the e-cube
/// side.
#[test]
fn the_regime_moves_the_all_to_all_crossover() {
    use hypercube::collectives::select::{automatic, machine, model_time, Machine, Operation};
    for t_h in [0.0, 20e-6] {
        let mut ct = Machine {
            cores: 1024,
            ..machine()
        };
        ct.model.t_h = t_h;
        ct.model.forwarding = Forwarding::CutThrough;
        let mut sf = ct;
        sf.model.forwarding = Forwarding::StoreAndForward;
        for k in [3u32, 4] {
            let a = |mc: &Machine, m| automatic(Operation::Alltoall, k, m, true, mc);
            assert_eq!(a(&ct, 8), Algorithm::StoreForward, "CT, k = {k}, 8 B");
            assert_eq!(a(&ct, 1 << 20), Algorithm::Pairwise, "CT, k = {k}, 1 MiB");
            assert_eq!(a(&ct, 4 << 20), Algorithm::Pairwise, "CT, k = {k}, 4 MiB");
            for m in [8, 64 << 10, 1 << 20, 4 << 20] {
                assert_eq!(a(&sf, m), Algorithm::StoreForward, "SF, k = {k}, {m} B");
            }
            // The crossover under cut-through: from the block where
            // (t_s + t_w m)(p − 1) + hops < (t_s + t_w m p/2) log p on.
            let t = |mc: &Machine, alg, m| {
                model_time(Operation::Alltoall, alg, k, m, mc.model).unwrap()
            };
            let first = (0..=24)
                .map(|e| 1usize << e)
                .find(|&m| t(&ct, Algorithm::Pairwise, m) < t(&ct, Algorithm::StoreForward, m))
                .expect("a crossover below 16 MiB");
            assert_eq!(a(&ct, first), Algorithm::Pairwise);
            assert_eq!(a(&ct, first / 2), Algorithm::StoreForward);
            // Store-and-forward only ever adds to the e-cube algorithm.
            for m in [8, 1 << 20] {
                assert!(t(&sf, Algorithm::Pairwise, m) > t(&ct, Algorithm::Pairwise, m));
                assert_eq!(
                    t(&sf, Algorithm::StoreForward, m),
                    t(&ct, Algorithm::StoreForward, m)
                );
            }
        }
        // Shift: the e-cube message beats the Gray-ring steps in both regimes (one
        // message over log p links against 2 log p − 1 neighbour messages).
        for mc in [&ct, &sf] {
            assert_eq!(
                automatic(Operation::Shift, 4, 1 << 20, true, mc),
                Algorithm::Ecube
            );
        }
    }
}

/// `model_time` is what the virtual clock measures, in both regimes, for the algorithms
/// that send over e-cube routes (where the two differ) and their neighbour-only rivals.
#[test]
fn model_time_is_the_virtual_time_in_both_regimes() {
    use hypercube::collectives::select::{model_time, Operation};
    for d in 1..=4u32 {
        for c in MODELS {
            let m = 64usize << d;
            let blocks = |n: &Node| -> Vec<Bytes> {
                (0..n.numnodes())
                    .map(|_| Bytes::from(vec![0u8; m]))
                    .collect()
            };
            let want = |op, alg| model_time(op, alg, d, m, c).unwrap();
            for alg in [Algorithm::Pairwise, Algorithm::StoreForward] {
                let t = time(d, c, |n| {
                    drop(n.cube().with(alg).alltoall(&blocks(n)).unwrap())
                });
                close(t, want(Operation::Alltoall, alg), "alltoall");
            }
            for alg in [Algorithm::Ecube, Algorithm::Hypercube] {
                let t = time(d, c, |n| {
                    let b = blocks(n);
                    let mine = if n.mynode() == 0 { &b[..] } else { &[] };
                    drop(n.cube().with(alg).scatter(0, mine, m).unwrap())
                });
                close(t, want(Operation::Scatter, alg), "scatter");
            }
            // The worst-case shift (q = 1: a route of log p links).
            let t = time(d, c, |n| {
                let data = Bytes::from(vec![0u8; m]);
                let cube = n.cube().with(Algorithm::Ecube);
                drop(cube.shift(data, 1, ShiftOrder::Rank).unwrap())
            });
            close(t, want(Operation::Shift, Algorithm::Ecube), "shift");
            for alg in [Algorithm::Chain, Algorithm::Hypercube] {
                let t = time(d, c, |n| {
                    drop(n.cube().with(alg).scan(&vec![1u8; m], Op::Sum).unwrap())
                });
                close(t, want(Operation::Scan, alg), "scan");
            }
        }
    }
}

/// The chain scan's segments: a quarter of the vector (64–256 KiB) where ranks share fewer
/// cores than there are of them and the links are not wires; the model's 64 KiB with a
/// core per rank or on wires. Every member computes the same count from the same length.
#[test]
fn chain_segments_are_larger_on_shared_cores_only() {
    use hypercube::collectives::select::{chain_segments, machine, Machine};
    let shared = Machine {
        cores: 2,
        link_tw: None,
        ..machine()
    };
    let roomy = Machine {
        cores: 64,
        ..shared
    };
    let wire = Machine {
        link_tw: Some(84e-9),
        ..shared
    };
    let (kib, mib) = (1usize << 10, 1usize << 20);
    for k in [2u32, 3, 4] {
        assert_eq!(shared.chain_segments(k, mib), 4, "k = {k}");
        assert_eq!(shared.chain_segments(k, 4 * mib), 16);
        assert_eq!(shared.chain_segments(k, 256 * kib), 4);
        assert_eq!(shared.chain_segments(k, 64 * kib), 1);
        assert_eq!(shared.chain_segments(k, 8), 1);
        for m in [8, 64 * kib, 256 * kib, mib, 4 * mib] {
            assert_eq!(roomy.chain_segments(k, m), chain_segments(m), "m = {m}");
            assert_eq!(wire.chain_segments(k, m), chain_segments(m), "m = {m}");
        }
    }
    // Two ranks on two cores: a core each.
    assert_eq!(shared.chain_segments(1, mib), chain_segments(mib));
    assert_eq!(chain_segments(mib), 16);
}
