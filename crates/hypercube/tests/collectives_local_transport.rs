//! The in-process transport: delivery, rank order of results, the virtual clock, and no
//! hang when a node panics or returns early.

use hypercube::transport::local::{now, run_local, run_local_timed, CostModel};
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
    let model = CostModel {
        t_s: 10.0,
        t_w: 0.5,
    };
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
