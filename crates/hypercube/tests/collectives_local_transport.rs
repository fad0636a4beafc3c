//! The in-process transport: delivery, rank order of results, the virtual clock, and no
//! hang when a node panics or returns early.

use hypercube::collectives::select::CostModel;
use hypercube::local::{now, run_local, run_local_timed};
use hypercube::{MsgType, Select, TypeSel};

#[test]
fn ring_pass_delivers_in_rank_order() {
    for d in 0..=4u32 {
        let out = run_local(d, |node| {
            let p = node.numnodes();
            let me = node.mynode();
            node.send((me + 1) % p, MsgType(7), vec![me as u8]).unwrap();
            let m = node
                .recv(Select::from_node((me + p - 1) % p, MsgType(7)))
                .unwrap();
            (me, m.data()[0])
        });
        for (r, (me, got)) in out.into_iter().enumerate() {
            let p = 1u32 << d;
            assert_eq!(me, r as u32);
            assert_eq!(got as u32, (r as u32 + p - 1) % p);
        }
    }
}

#[test]
fn virtual_clock_follows_the_model() {
    let model = CostModel::new(10.0, 0.5);
    let out = run_local_timed(1, model, |node| {
        let other = 1 - node.mynode();
        node.send(other, MsgType(1), vec![0u8; 100]).unwrap();
        let _ = node.recv(TypeSel::Is(1)).unwrap();
        assert_eq!(now(), Some(60.0));
        // a chain: 0 -> 1 -> 0
        if node.mynode() == 0 {
            node.send(1, MsgType(2), vec![0u8; 20]).unwrap();
            node.recv(TypeSel::Is(3)).unwrap();
        } else {
            node.recv(TypeSel::Is(2)).unwrap();
            node.send(0, MsgType(3), vec![0u8; 20]).unwrap();
        }
    });
    assert_eq!(out[0].1, 60.0 + 20.0 + 20.0);
    assert_eq!(out[1].1, 60.0 + 20.0 + 20.0);
    assert_eq!(run_local(1, |_| now()), vec![None, None]);
}

/// A message over l links: `t_s + t_w m` plus, per link beyond the first, `t_h` under
/// cut-through (eq. 2.3) or `t_h + t_w m` under store-and-forward (eq. 2.2).
#[test]
fn virtual_clock_charges_the_route_in_either_regime() {
    use hypercube::transport::Forwarding;
    let base = CostModel::new(10.0, 0.5).with_hop(3.0);
    for (fwd, extra) in [
        (Forwarding::CutThrough, 3.0),
        (Forwarding::StoreAndForward, 3.0 + 50.0),
    ] {
        let model = base.with_forwarding(fwd);
        for dest in 1..8u32 {
            let out = run_local_timed(3, model, |node| {
                if node.mynode() == 0 {
                    node.send(dest, MsgType(1), vec![0u8; 100]).unwrap();
                } else if node.mynode() == dest {
                    node.recv(TypeSel::Is(1)).unwrap();
                }
            });
            let l = dest.count_ones() as f64;
            let want = 10.0 + 50.0 + (l - 1.0) * extra;
            assert_eq!(out[0].1, want, "{fwd}, 0 -> {dest}: sender");
            assert_eq!(out[dest as usize].1, want, "{fwd}, 0 -> {dest}: receiver");
            assert_eq!(model.message_over(100, l as u32), want);
        }
        // A neighbour message costs chapter 4's t_s + t_w m in both regimes.
        assert_eq!(model.message(100), 60.0);
        assert_eq!(model.message_over(100, 0), 60.0);
    }
}

#[test]
fn a_panicking_node_does_not_hang_the_others() {
    let r = std::panic::catch_unwind(|| {
        run_local(2, |node| {
            if node.mynode() == 3 {
                panic!("node 3 fails on purpose");
            }
            node.recv(Select::from_node(3, MsgType(1))).map(|_| ())
        })
    });
    let msg = r.unwrap_err();
    assert_eq!(msg.downcast_ref::<&str>(), Some(&"node 3 fails on purpose"));
}

#[test]
fn waiting_for_a_finished_node_is_an_error_not_a_hang() {
    let out = run_local(1, |node| {
        if node.mynode() == 0 {
            return Ok(());
        }
        node.recv(Select::from_node(0, MsgType(1))).map(|_| ())
    });
    assert!(out[0].is_ok());
    assert!(
        matches!(out[1], Err(hypercube::Error::PeerGone { .. })),
        "{:?}",
        out[1]
    );
}

/// No member leaves a barrier before every member has entered it, by either algorithm, on
/// the whole cube and on its subcubes: each thread counts itself in before the barrier
/// (the later ones after a pause) and finds every member counted when it leaves.
#[test]
fn no_member_leaves_a_barrier_early() {
    use hypercube::collectives::Algorithm;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    for d in 0..=4u32 {
        for alg in [Algorithm::Hypercube, Algorithm::Tree] {
            for k in [d, d.saturating_sub(1)] {
                // One counter per subcube of dimension k, by its first node.
                let counters: Vec<AtomicUsize> =
                    (0..1usize << d).map(|_| AtomicUsize::new(0)).collect();
                let counters = &counters;
                let out = run_local(d, move |node| {
                    let me = node.mynode();
                    let sc = node.subcube(k).with(alg);
                    let counter = &counters[sc.base() as usize];
                    // The members enter one after another, the last well after the first.
                    std::thread::sleep(Duration::from_millis(u64::from(sc.rank()) * 2));
                    counter.fetch_add(1, Ordering::SeqCst);
                    sc.barrier().unwrap();
                    (me, counter.load(Ordering::SeqCst), sc.size() as usize)
                });
                for (me, seen, size) in out {
                    assert_eq!(
                        seen, size,
                        "d {d} k {k} {alg:?}: node {me} left after {seen} of {size}"
                    );
                }
            }
        }
    }
}

/// A deadlock on a 6-cube — 64 node threads, each waiting for a message its neighbour
/// never sends — is reported at every node, not waited out: the check must hold with many
/// more waiting threads than cores (the CI's other deadlock tests have at most 4 nodes).
/// Bounded by a watchdog, so a regression fails instead of hanging.
#[test]
fn a_deadlock_of_64_node_threads_is_reported_at_every_node() {
    use std::time::{Duration, Instant};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let t0 = Instant::now();
        let out = run_local(6, |node| {
            node.recv(Select::from_node(node.mynode() ^ 1, MsgType(1)))
                .map(|_| ())
        });
        let _ = tx.send((out, t0.elapsed()));
    });
    let (out, took) = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("a deadlock of 64 node threads was not reported within 60 s");
    for (n, r) in out.iter().enumerate() {
        match r {
            Err(hypercube::Error::PeerGone { detail, .. }) if detail.contains("deadlock") => {}
            other => panic!("node {n}: {other:?}"),
        }
    }
    eprintln!("deadlock of 64 node threads reported in {took:?}");
}
