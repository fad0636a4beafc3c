//! The typed and serde forms' checks that need one transport or one shape of cube: values
//! of unknown size and bad input, the iPSC value forms, GOP over `Pod`, halos, the
//! element-count errors, receives into the caller's memory. The checks of every form on
//! every cube and subcube are one suite for both transports:
//! `hypercube_tests::suites::typed` (`tests/tests/typed_local.rs`, `tests/tests/typed.rs`).

use hypercube::collectives::{Algorithm, Loc, Op, Pod};
use hypercube::local::run_local;
use hypercube::{Error, MsgType, TypeSel};

#[test]
fn bcast_value_of_unknown_size_and_bad_input() {
    run_local(3, |node| {
        let c = node.cube();
        // The root alone knows the size.
        let v: Vec<String> = if node.mynode() == 5 {
            (0..1000).map(|i| format!("line {i}")).collect()
        } else {
            Vec::new()
        };
        let at_root = node.mynode() == 5;
        let got: Vec<String> = c.bcast_value(5, at_root.then_some(v)).unwrap();
        assert_eq!(got.len(), 1000);
        assert_eq!(got[999], "line 999");
        // A root that passes None: an error on every member, no hang.
        assert!(matches!(
            c.bcast_value::<u32>(0, None),
            Err(Error::InvalidArgument(_))
        ));
        // A root that passes the wrong number of values to scatter: an error everywhere.
        let two = (node.mynode() == 0).then(|| vec![1u8, 2]);
        assert!(matches!(
            c.scatter_values::<u8>(0, two),
            Err(Error::InvalidArgument(_))
        ));
        // Zero-sized elements: errors on every member, not panics.
        assert!(matches!(
            c.allgather_slice::<[u8; 0]>(&[[]]),
            Err(Error::InvalidArgument(_))
        ));
        let keep = |a: [u8; 0], _: [u8; 0]| a;
        assert!(matches!(
            c.allreduce(&[[0u8; 0]], Op::Fn(&keep)),
            Err(Error::InvalidArgument(_))
        ));
        // Another type on one sender: a type mismatch naming the sender and both types.
        let r = if node.mynode() == 2 {
            c.allgather_value(&"text".to_string()).map(|_| ())
        } else {
            c.allgather_value(&7u64).map(|_| ())
        };
        match r {
            Err(Error::TypeMismatch {
                source_node,
                expected,
                found,
            }) if node.mynode() == 2 => {
                assert_eq!(
                    (source_node, expected.as_str()),
                    (0, "alloc::string::String")
                );
                assert_eq!(found, "u64");
            }
            Err(Error::TypeMismatch {
                source_node,
                expected,
                found,
            }) => {
                assert_eq!((source_node, expected.as_str()), (2, "u64"));
                assert_eq!(found, "alloc::string::String");
            }
            other => panic!("expected a type mismatch, got {other:?}"),
        }
        // Same size, another type (u64 and f64 decode from the same 8 bytes): still caught.
        let r = if node.mynode() == 5 {
            c.bcast_value(5, Some(1.5f64)).map(|_| ())
        } else {
            c.bcast_value::<u64>(5, None).map(|_| ())
        };
        match r {
            Ok(()) => assert_eq!(node.mynode(), 5),
            Err(Error::TypeMismatch {
                source_node,
                expected,
                found,
            }) => {
                assert_eq!((source_node, expected.as_str()), (5, "u64"));
                // The sender's type name travels with the value.
                assert_eq!(found, "f64");
            }
            other => panic!("expected a type mismatch, got {other:?}"),
        }
    });
}

#[test]
fn ipsc_value_forms() {
    run_local(3, |node| {
        let d = node.cubedim();
        if node.mynode() == 6 {
            node.gsend_value(&("hello", vec![1u8, 2, 3]), d).unwrap();
        } else {
            let (s, v): (String, Vec<u8>) = node.grecv_value(d).unwrap();
            assert_eq!((s.as_str(), v), ("hello", vec![1, 2, 3]));
        }
        let all: Vec<String> = node
            .gcat_values(&"x".repeat(node.mynode() as usize), 0, d)
            .unwrap();
        if node.mynode() == 0 {
            let want: Vec<String> = (0..8).map(|k| "x".repeat(k)).collect();
            assert_eq!(all, want);
        }
        // The GOP op converts into the collectives' one.
        let op: Op<'_, f64> = hypercube::ipsc::Op::Prod.into();
        assert_eq!(node.cube().allreduce(&[2.0], op).unwrap(), vec![256.0]);
    });
}

#[test]
fn sendrecv_8_mib_both_ways() {
    run_local(1, |node| {
        let other = node.mynode() ^ 1;
        let big = vec![node.mynode() as u8 + 1; 8 << 20];
        let m = node
            .sendrecv(other, MsgType(3), big, TypeSel::Is(3))
            .unwrap();
        assert_eq!(m.data().len(), 8 << 20);
        assert!(m.data().iter().all(|&b| b as u32 == other + 1));
    });
}

#[test]
#[allow(deprecated)]
fn gop_product_is_a_deprecated_alias_of_prod() {
    use hypercube::ipsc::Op as Gop;
    assert_eq!(Gop::Product, Gop::Prod);
    assert_eq!(Gop::from_seed_char('*'), Some(Gop::Prod));
    assert!(matches!(Gop::Prod, Gop::Product)); // still usable in patterns
    assert!(matches!(Op::<f64>::from_seed_char('*'), Some(Op::Prod)));
}

/// GOP over any plain data with any commutative operator: MaxLoc/MinLoc over `Loc`, a
/// user struct with `Op::Commutative`, the seed's operators as before; a non-commutative
/// `Op::Fn` and an operator the type lacks are errors on every member, nothing sent.
#[test]
fn gop_over_pod_with_any_op() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct MinMax {
        lo: f64,
        hi: f64,
    }
    // SAFETY: repr(C), two f64: no padding, every bit pattern valid.
    unsafe impl Pod for MinMax {}
    run_local(3, |node| {
        let me = node.mynode();
        let dim = node.cubedim();
        // Values 0,1,2,0,1,2,0,1 on nodes 0..8: the maximum 2 first at node 2, minimum 0 at 0.
        let v = f64::from(me % 3);
        let mut best = [Loc::new(v, u64::from(me)), Loc::new(-v, u64::from(me))];
        node.gop(&mut best, Op::MaxLoc, 0, dim).unwrap();
        if me == 0 {
            assert_eq!(best, [Loc::new(2.0, 2), Loc::new(0.0, 0)]);
        }
        let mut worst = [Loc::new(v, u64::from(me))];
        node.gop(&mut worst, Op::MinLoc, 5, dim).unwrap();
        if me == 5 {
            assert_eq!(worst, [Loc::new(0.0, 0)]);
        }
        let span = |a: MinMax, b: MinMax| MinMax {
            lo: a.lo.min(b.lo),
            hi: a.hi.max(b.hi),
        };
        let mut mm = [MinMax { lo: v, hi: v }];
        node.gop(&mut mm, Op::Commutative(&span), 7, dim).unwrap();
        if me == 7 {
            assert_eq!(mm, [MinMax { lo: 0.0, hi: 2.0 }]);
        }
        // The seed's operators still apply (ipsc::Op converts).
        let mut x = [f64::from(me)];
        node.gop(&mut x, hypercube::ipsc::Op::Sum, 0, dim).unwrap();
        if me == 0 {
            assert_eq!(x, [28.0]);
        }
        let keep_first = |a: f64, _b: f64| a;
        assert!(matches!(
            node.gop(&mut x, Op::Fn(&keep_first), 0, dim),
            Err(Error::IpscArgument { routine: "GOP", .. })
        ));
        let e = node.gop(&mut [1.5f64], Op::BAnd, 0, dim).unwrap_err();
        assert!(
            e.to_string().contains("BAnd") && e.to_string().contains("f64"),
            "{e}"
        );
    });
}

#[test]
fn typed_point_to_point_halo_exchange() {
    run_local(2, |node| {
        let me = node.mynode();
        // A halo exchange along every link: 1 MiB of f64 each way, typed, no deadlock.
        for link in 0..node.cubedim() {
            let other = me ^ (1 << link);
            let halo = vec![me as f64; 1 << 17];
            let got = node
                .sendrecv_slice(other, MsgType(9), &halo, other)
                .unwrap();
            assert_eq!(got.len(), 1 << 17);
            assert!(got.iter().all(|&x| x == other as f64));
        }
        // The result type follows the value sent: no annotation.
        let v = node.sendrecv_value(me ^ 3, MsgType(10), &format!("from {me}"), me ^ 3);
        assert_eq!(v.unwrap(), format!("from {}", me ^ 3));
        // Mesh edges: a ring 0-1-3-2 cut open after 2; nothing is sent to or received
        // from `None`, and the result says so.
        let chain = [0u32, 1, 3, 2];
        let at = chain.iter().position(|&n| n == me).unwrap();
        let next = chain.get(at + 1).copied();
        let prev = at.checked_sub(1).map(|i| chain[i]);
        let got = node
            .sendrecv_value(next, MsgType(12), &(me, 1.5f64), prev)
            .unwrap();
        assert_eq!(got, prev.map(|p| (p, 1.5)));
        let got = node
            .sendrecv_slice(prev, MsgType(13), &[me; 3], next)
            .unwrap();
        assert_eq!(got, next.map(|n| vec![n; 3]));
        node.send_slice(None, MsgType(14), &[1u8]).unwrap();
        assert!(matches!(
            node.sendrecv_slice(None, MsgType(1 << 31), &[1u8], None),
            Err(Error::InvalidType { .. })
        ));
        if me == 0 {
            node.send_slice(1, MsgType(11), &[1u16, 2, 3]).unwrap();
        }
        if me == 1 {
            let (v, _) = node.recv_slice::<u16>(TypeSel::Is(11)).unwrap();
            assert_eq!(v, vec![1, 2, 3]);
        }
    });
}

/// Slices of different lengths in a typed collective: the error counts elements, names
/// the element type and the typed v-variant, and says nothing of bytes or blocks — on
/// every algorithm.
#[test]
fn typed_length_errors_speak_elements() {
    for alg in [
        Algorithm::Auto,
        Algorithm::Hypercube,
        Algorithm::Ring,
        Algorithm::Mesh,
    ] {
        run_local(2, move |node| {
            let c = node.cube().with(alg);
            let n = if node.mynode() == 3 { 5 } else { 4 };
            let mine = vec![1.0f32; n];
            let e = c.allgather_slice(&mine).unwrap_err().to_string();
            assert!(
                e.contains("allgather_slice") && e.contains("allgatherv_slice"),
                "{e}"
            );
            assert!(e.contains("element") && e.contains("f32"), "{e}");
            assert!(!e.contains("byte") && !e.contains("block"), "{e}");
        });
    }
    run_local(2, |node| {
        let c = node.cube();
        let n = if node.mynode() == 1 { 8 } else { 4 };
        // (The member whose blocks are longer sees the others' shorter ones.)
        if let Err(e) = c.alltoall_slice(&vec![1u64; n]) {
            let e = e.to_string();
            assert!(e.contains("alltoallv_slice") && !e.contains("byte"), "{e}");
        } else {
            assert_ne!(node.mynode(), 1);
        }
    });
}

/// `recv_slice_into`: the elements land in the caller's memory; a longer message is
/// `Truncated` and stays queued; a partial element is an error.
#[test]
fn recv_slice_into_the_callers_memory() {
    run_local(1, |node| {
        if node.mynode() == 0 {
            node.send_slice(1, MsgType(20), &[1.5f64, 2.5, 3.5])
                .unwrap();
            node.send(1, MsgType(21), vec![0u8; 5]).unwrap();
        } else {
            let mut buf = [0.0f64; 2];
            assert!(matches!(
                node.recv_slice_into(TypeSel::Is(20), &mut buf),
                Err(Error::Truncated { needed: 24, .. })
            ));
            let mut buf = [0.0f64; 4];
            let (n, st) = node.recv_slice_into(TypeSel::Is(20), &mut buf).unwrap();
            assert_eq!((n, st.source, &buf[..n]), (3, 0, &[1.5, 2.5, 3.5][..]));
            let e = node.recv_slice_into(TypeSel::Is(21), &mut buf).unwrap_err();
            assert!(
                e.to_string().contains("not a whole number of 8-byte f64"),
                "{e}"
            );
        }
    });
}

/// `recv_buf`: the slice viewed in the message buffer.
#[test]
fn recv_buf_views_the_message() {
    run_local(1, |node| {
        if node.mynode() == 0 {
            node.send_slice(1, MsgType(22), &[1.5f64, 2.5]).unwrap();
        } else {
            let (got, st) = node.recv_buf::<f64>(TypeSel::Is(22)).unwrap();
            assert_eq!((&got[..], st.source), (&[1.5, 2.5][..], 0));
        }
    });
}
