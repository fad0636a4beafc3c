//! Collectives whose blocks must all have one length (`gather`, `allgather`, `alltoall`): a
//! participant that passes another length is an `InvalidArgument` naming the node that sent
//! the odd blocks, at the node that receives them — never blocks split wrongly — and every
//! other member that has not finished the call gets an `InvalidArgument` that quotes it
//! (the call's failure notice, `collectives/ctx.rs`), never a wrong result, never a wait
//! for a message that will not come.
//!
//! The cases that used to pass silently: on 8 nodes rank 7 passes 14 bytes where the others
//! pass 10, and the totals then divide evenly further up the tree (24 = 2 × 12, 44 = 4 ×
//! 11), so the root got garbage and no error; and the all-to-all by store-and-forward with
//! node 2 passing 2 elements per block where the others pass 4, where node 3 passed node 2's
//! two short blocks on to node 1 as one block of the right length, so nodes 1 and 5 got a
//! wrong result and no error.

use std::sync::Mutex;

use bytes::Bytes;
use hypercube::collectives::Algorithm;
use hypercube::local::run_local;
use hypercube::Error;

fn block(me: u32) -> Bytes {
    Bytes::from(vec![me as u8; if me == 7 { 14 } else { 10 }])
}

/// Which nodes got an InvalidArgument naming node 7's odd block first-hand, which quoting
/// another node's, and whether any node got a result that looks complete.
fn run(op: &str) -> (Vec<u32>, Vec<u32>, bool) {
    let named = Mutex::new(Vec::new());
    let quoted = Mutex::new(Vec::new());
    let completed = Mutex::new(false);
    run_local(3, |node| {
        let me = node.mynode();
        let cube = node.cube().with(Algorithm::Hypercube);
        let r = match op {
            "gather" => cube.gather(0, block(me)).map(|o| o.is_some()),
            _ => cube.allgather(block(me)).map(|_| true),
        };
        match r {
            Err(Error::InvalidArgument(m)) if m.starts_with("node ") && m.contains("stopped") => {
                quoted.lock().unwrap().push(me)
            }
            Err(Error::InvalidArgument(m)) if m.contains("node 7 sent 14 bytes") => {
                named.lock().unwrap().push(me)
            }
            Ok(true) => *completed.lock().unwrap() = true,
            _ => {}
        }
    });
    let mut n = named.into_inner().unwrap();
    n.sort_unstable();
    let mut q = quoted.into_inner().unwrap();
    q.sort_unstable();
    (n, q, completed.into_inner().unwrap())
}

#[test]
fn gather_names_a_block_of_another_length() {
    let (named, quoted, completed) = run("gather");
    assert_eq!(named, vec![6], "node 6 receives rank 7's block");
    assert!(quoted.contains(&0), "the root hears of it: {quoted:?}");
    assert!(!completed, "the root must not get a result");
}

#[test]
fn allgather_names_a_block_of_another_length() {
    let (named, quoted, completed) = run("allgather");
    assert_eq!(named, vec![6], "node 6 exchanges with rank 7 first");
    // Node 7 finds node 6's block shorter than its own; every other node hears of it.
    assert_eq!(quoted.len(), 6, "{quoted:?}");
    assert!(!completed, "no node may get a result");
}

/// The all-to-all shape: 3-cube, node 2 passes 2 `u32` per block, the others 4. Every
/// member returns an `InvalidArgument` naming `alltoallv_slice`, by every algorithm.
#[test]
fn alltoall_with_one_member_of_shorter_blocks_fails_on_every_member() {
    for alg in [
        Algorithm::Auto,
        Algorithm::StoreForward,
        Algorithm::Pairwise,
        Algorithm::Ecube,
        Algorithm::Ring,
        Algorithm::Mesh,
    ] {
        for r in run_local(3, |node| {
            let me = node.mynode();
            let m = if me == 2 { 2 } else { 4 };
            let data: Vec<u32> = (0..8u32)
                .flat_map(|t| (0..m).map(move |i| me << 16 | t << 8 | i))
                .collect();
            (me, node.cube().with(alg).alltoall_slice(&data))
        }) {
            match r {
                (_, Err(Error::InvalidArgument(m))) if m.contains("alltoallv_slice") => {}
                (me, other) => panic!("{alg:?}: node {me} got {other:?}"),
            }
        }
    }
}
