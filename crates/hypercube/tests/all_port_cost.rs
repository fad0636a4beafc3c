//! The all-port side of the cost model: the automatic choice on slow links (wires) against
//! loopback, and the all-port virtual clock (`run_local_timed_all_port`: a port per
//! dimension) held to `select::all_port_time`. The one-port equations are in
//! `collectives_cost.rs`.

use bytes::Bytes;
use hypercube::collectives::select::CostModel;
use hypercube::collectives::{Algorithm, Op};
use hypercube::Node;

/// The choice on slow links (the emulated cube at 100 Mbit/s: the start-up probe finds
/// 80 ns per byte) against loopback (a link is a copy): on links, a long all-to-all keeps
/// every link busy (all-port e-cube), never the store-and-forward rule of shared cores; a
/// short one still takes the fewest start-ups; on loopback nothing changes.
#[test]
fn all_to_all_on_slow_links_is_all_port_and_on_loopback_as_before() {
    use hypercube::collectives::select::{automatic, machine, Algorithm, Machine, Operation};
    let loopback = Machine {
        cores: 2,
        link_tw: Some(0.4e-9),
        ..machine()
    };
    let mut slow = Machine {
        cores: 2,
        link_tw: Some(80e-9),
        ..machine()
    };
    slow.model.t_w = 80e-9;
    for k in [3, 4] {
        assert!(slow.links_bound(k) && !loopback.links_bound(k));
        assert_eq!(
            automatic(Operation::Alltoall, k, 64 << 10, true, &slow),
            Algorithm::Ecube,
            "k = {k}: the store-and-forward rule of shared cores fired on slow links"
        );
        assert_eq!(
            automatic(Operation::Alltoall, k, 8, true, &slow),
            Algorithm::StoreForward
        );
        let nothing = Machine {
            link_tw: None,
            ..loopback
        };
        // The edge-disjoint trees for the long rooted operations.
        for op in [
            Operation::Bcast,
            Operation::Reduce,
            Operation::Scatter,
            Operation::Gather,
        ] {
            assert_eq!(
                automatic(op, k, 256 << 10, true, &slow),
                Algorithm::AllPort,
                "k = {k}: {op:?} on slow links"
            );
            assert_ne!(
                automatic(op, k, 256 << 10, true, &loopback),
                Algorithm::AllPort
            );
        }
        for m in [8, 64 << 10, 1 << 20] {
            assert_eq!(
                automatic(Operation::Alltoall, k, m, true, &loopback),
                automatic(Operation::Alltoall, k, m, true, &nothing),
                "k = {k}, m = {m}: a fast link changed the loopback choice"
            );
        }
    }
    // 1 Gbit/s (8 ns per byte): still a wire, even where 16 ranks on 2 cores cannot feed
    // all 64 links (the work bound prices that).
    // There the work bound prices pairwise and e-cube alike (the same bytes over the
    // cores), and the tie goes to the shorter all-port path: e-cube, 1.5× faster than
    // pairwise at 256 KiB on the emulated 4-cube at 1 Gbit/s (docs/perf/cubenet.md).
    let mut gbit = Machine {
        link_tw: Some(8e-9),
        ..slow
    };
    gbit.model.t_w = 8e-9;
    assert!(gbit.links_bound(4));
    for m in [256 << 10, 1 << 20] {
        assert_eq!(
            automatic(Operation::Alltoall, 4, m, true, &gbit),
            Algorithm::Ecube,
            "m = {m}: a tie on the work bound went to the one-port path"
        );
    }
    // A loopback link measured slow under load is still no wire.
    let busy = Machine {
        link_tw: Some(3e-9),
        ..loopback
    };
    assert!(busy.wire_tw().is_none() && !busy.links_bound(1));
}

/// The all-port virtual clock (`run_local_timed_all_port`: a port per dimension, the
/// start-up the node's own serial work) gives each all-port algorithm its
/// `select::all_port_time`: the bytes term alone when t_s = 0, the start-ups alone when
/// t_w = 0. (Gather is left out: the clock does not charge a receiving port, where the
/// root's busiest link is.)
#[test]
fn all_port_clock_meets_the_all_port_formulas() {
    use hypercube::collectives::select::{all_port_time, Operation};
    use hypercube::local::run_local_timed_all_port;
    // Divisible by every d and p·d used: the parts are equal.
    let m: usize = 960 * 64;
    for k in 1..=4u32 {
        let p = 1usize << k;
        for model in [CostModel::new(0.0, 1.0), CostModel::new(1.0, 0.0)] {
            let slowest = |f: &(dyn Fn(&Node) + Sync)| {
                run_local_timed_all_port(k, model, |node| f(&node))
                    .into_iter()
                    .map(|((), t)| t)
                    .fold(0.0, f64::max)
            };
            let want = |op, alg| all_port_time(op, alg, k, m, model).unwrap();
            let close = |got: f64, want: f64, what: &str| {
                assert!(
                    (got - want).abs() <= 1e-6 * want.max(1.0),
                    "{what}, k = {k}, {model:?}: clock {got}, formula {want}"
                )
            };
            let t = slowest(&|n: &Node| {
                let blocks = vec![Bytes::from(vec![1u8; m]); p];
                n.cube().with(Algorithm::Ecube).alltoall(&blocks).unwrap();
            });
            close(
                t,
                want(Operation::Alltoall, Algorithm::Ecube),
                "alltoall e-cube",
            );
            let t = slowest(&|n: &Node| {
                n.cube()
                    .with(Algorithm::AllPort)
                    .allgather(Bytes::from(vec![2u8; m]))
                    .unwrap();
            });
            close(
                t,
                want(Operation::Allgather, Algorithm::AllPort),
                "allgather all-port",
            );
            let t = slowest(&|n: &Node| {
                let x = vec![1u8; m];
                n.cube()
                    .with(Algorithm::AllPort)
                    .reduce_scatter(&x, Op::Sum)
                    .unwrap();
            });
            close(
                t,
                want(Operation::ReduceScatter, Algorithm::AllPort),
                "reduce-scatter all-port",
            );
            let t = slowest(&|n: &Node| {
                let x = vec![1u8; m];
                n.cube()
                    .with(Algorithm::AllPort)
                    .allreduce(&x, Op::Sum)
                    .unwrap();
            });
            close(
                t,
                want(Operation::Allreduce, Algorithm::AllPort),
                "allreduce all-port",
            );
            let t = slowest(&|n: &Node| {
                let data = if n.mynode() == 0 {
                    Bytes::from(vec![3u8; m])
                } else {
                    Bytes::new()
                };
                n.cube().with(Algorithm::AllPort).bcast(0, data, m).unwrap();
            });
            // The bytes exactly; the start-ups, which pile up differently at every node of
            // the trees, within a third.
            let formula = want(Operation::Bcast, Algorithm::AllPort);
            if model.t_s == 0.0 {
                close(t, formula, "bcast all-port");
            } else {
                assert!(
                    (t - formula).abs() <= formula / 3.0,
                    "bcast all-port start-ups, k = {k}: clock {t}, formula {formula}"
                );
            }
            let t = slowest(&|n: &Node| {
                let blocks = if n.mynode() == 0 {
                    vec![Bytes::from(vec![4u8; m]); p]
                } else {
                    Vec::new()
                };
                n.cube()
                    .with(Algorithm::Ecube)
                    .scatter(0, &blocks, m)
                    .unwrap();
            });
            close(
                t,
                want(Operation::Scatter, Algorithm::Ecube),
                "scatter e-cube",
            );
        }
    }
}

/// A shaped link passes its burst at core speed (the probe measures it: 94 KB of
/// `hcrun --link-rate 100mbit`'s 96 KiB bucket): an all-to-all whose `m p/2` bytes per
/// link fit it takes store-and-forward's `log p` start-ups, not e-cube's `p − 1`; past
/// the burst, and on a plain wire (no burst), the all-port e-cube as before.
#[test]
fn all_to_all_within_the_links_burst_is_store_and_forward() {
    use hypercube::collectives::select::{automatic, machine, Algorithm, Machine, Operation};
    let mut shaped = Machine {
        cores: 2,
        link_tw: Some(83e-9),
        link_burst: 93_000,
        ..machine()
    };
    shaped.model.t_w = 83e-9;
    let plain = Machine {
        link_burst: 0,
        ..shaped
    };
    for k in [3u32, 4] {
        let p = 1usize << k;
        for m in [1024, 4096] {
            assert!(shaped.within_burst(m * p / 2));
            assert_eq!(
                automatic(Operation::Alltoall, k, m, true, &shaped),
                Algorithm::StoreForward,
                "k = {k}, m = {m}: within the burst"
            );
            assert_eq!(
                automatic(Operation::Alltoall, k, m, true, &plain),
                Algorithm::Ecube,
                "k = {k}, m = {m}: a plain wire"
            );
        }
        assert_eq!(
            automatic(Operation::Alltoall, k, 64 << 10, true, &shaped),
            Algorithm::Ecube,
            "k = {k}: past the burst"
        );
    }
    assert!(!plain.within_burst(1) && !shaped.within_burst(0));
}

/// Where the links carry more than the cores can copy (the emulated 4-cube at 1 Gbit/s:
/// 64 links of 119 MB/s, 2 cores), the all-reduce is not the all-port algorithm, whose
/// many messages the shared cores pay for (measured 2–2.6× slower there than
/// reduce-scatter + allgather); on the 3-cube at 1 Gbit/s and the 4-cube at 100 Mbit/s,
/// where the links do not outrun the cores, it stays.
#[test]
fn all_reduce_is_not_all_port_where_the_links_outrun_the_cores() {
    use hypercube::collectives::select::{automatic, machine, Algorithm, Machine, Operation};
    let wire = |tw: f64| {
        let mut m = Machine {
            cores: 2,
            link_tw: Some(tw),
            link_burst: 0,
            copy: 0.55e-9,
            forward_copy: 0.55e-9,
            ..machine()
        };
        m.model.t_w = tw;
        m
    };
    let (gbit, slow) = (wire(8.4e-9), wire(84e-9));
    assert!(gbit.links_outrun_cores(4) && !gbit.links_outrun_cores(3));
    assert!(!slow.links_outrun_cores(4));
    for m in [64 << 10, 256 << 10, 1 << 20] {
        assert_ne!(
            automatic(Operation::Allreduce, 4, m, true, &gbit),
            Algorithm::AllPort,
            "4-cube at 1 Gbit/s, m = {m}"
        );
    }
    assert_eq!(
        automatic(Operation::Allreduce, 3, 1 << 20, true, &gbit),
        Algorithm::AllPort
    );
    assert_eq!(
        automatic(Operation::Allreduce, 4, 1 << 20, true, &slow),
        Algorithm::AllPort
    );
}

/// A scan from 64 KiB on wires whose ranks share the cores is the pipelined chain, as on
/// loopback: the hypercube scan's steps are priced at the links' `t_w`, but a shaped link
/// passes them at core speed, where the chain's one message and combine per rank cost less
/// (by the slowest rank as fast or faster on the emulated cubes from 64 KiB, up to 1.8× at
/// 256 KiB, but for 128 KiB at 100 Mbit/s: `policy.rs`). On 16 ranks from 256 KiB only: a
/// 64 KiB chain of 15 hops took 1.7–2× the hypercube's time on the 4-cube at 1 Gbit/s.
/// Shorter vectors, and ranks with a core each, keep the model's choice.
#[test]
fn scan_on_shared_cores_is_the_chain_on_wires_too() {
    use hypercube::collectives::select::{automatic, machine, Algorithm, Machine, Operation};
    for tw in [8.4e-9, 84e-9] {
        let mut wire = Machine {
            cores: 2,
            link_tw: Some(tw),
            link_burst: 96 << 10,
            ..machine()
        };
        wire.model.t_w = tw;
        let roomy = Machine { cores: 16, ..wire };
        for k in [3u32, 4] {
            assert!(wire.links_bound(k));
            // From 64 KiB on 8 ranks, from 256 KiB on 16 (below, the model: the hypercube).
            for m in [64 << 10, 128 << 10, 256 << 10, 1 << 20] {
                let want = if k == 4 && m < 256 << 10 {
                    Algorithm::Hypercube
                } else {
                    Algorithm::Chain
                };
                assert_eq!(
                    automatic(Operation::Scan, k, m, true, &wire),
                    want,
                    "t_w {tw}, k = {k}, m = {m}"
                );
            }
            assert_eq!(
                automatic(Operation::Scan, k, 8, true, &wire),
                Algorithm::Hypercube
            );
            assert_eq!(
                automatic(Operation::Scan, k, 64 << 10, true, &roomy),
                Algorithm::Hypercube,
                "a core per rank: the model's choice"
            );
        }
    }
}
