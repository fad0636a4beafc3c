//! Collectives whose blocks must all have one length (`gather`, `allgather`): a participant
//! that passes another length is an `InvalidArgument` naming the node that sent the odd
//! blocks, at the node that receives them — never blocks split wrongly. The case that used to
//! pass silently: on 8 nodes rank 7 passes 14 bytes where the others pass 10, and the totals
//! then divide evenly further up the tree (24 = 2 × 12, 44 = 4 × 11), so the root got
//! garbage and no error.

use std::sync::Mutex;

use bytes::Bytes;
use hypercube::collectives::Algorithm;
use hypercube::local::run_local;
use hypercube::Error;

fn block(me: u32) -> Bytes {
    Bytes::from(vec![me as u8; if me == 7 { 14 } else { 10 }])
}

/// Which nodes got an InvalidArgument naming node 7's odd block, and whether any node got
/// a result that looks complete.
fn run(op: &str) -> (Vec<u32>, bool) {
    let named = Mutex::new(Vec::new());
    let completed = Mutex::new(false);
    run_local(3, |node| {
        let me = node.mynode();
        let cube = node.cube().with(Algorithm::Hypercube);
        let r = match op {
            "gather" => cube.gather(0, block(me)).map(|o| o.is_some()),
            _ => cube.allgather(block(me)).map(|_| true),
        };
        match r {
            Err(Error::InvalidArgument(m)) if m.contains("node 7 sent 14 bytes") => {
                named.lock().unwrap().push(me)
            }
            Ok(true) => *completed.lock().unwrap() = true,
            _ => {}
        }
    });
    let mut n = named.into_inner().unwrap();
    n.sort_unstable();
    (n, completed.into_inner().unwrap())
}

#[test]
fn gather_names_a_block_of_another_length() {
    let (named, completed) = run("gather");
    assert_eq!(named, vec![6], "node 6 receives rank 7's block");
    assert!(!completed, "the root must not get a result");
}

#[test]
fn allgather_names_a_block_of_another_length() {
    let (named, completed) = run("allgather");
    assert_eq!(named, vec![6], "node 6 exchanges with rank 7 first");
    assert!(!completed, "no node may get a result");
}
