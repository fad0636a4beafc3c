//! Every algorithm an operation lists in [`Operation::algorithms`] has an arm in that
//! operation's dispatch: requested explicitly, it runs (an algorithm without an arm would
//! be the `select::not_implemented` error, never another algorithm in its place).

use bytes::Bytes;

use super::{Algorithm, Op, Operation, ShiftOrder, Subcube};
use crate::error::Result;
use crate::local::run_local;

/// Every operation. The match makes a new `Operation` a compile error here until it is
/// listed (and given a call in `call`).
fn all_operations() -> Vec<Operation> {
    use Operation::*;
    let all = [
        Bcast,
        Reduce,
        Allgather,
        ReduceScatter,
        Allreduce,
        Scan,
        Scatter,
        Gather,
        Alltoall,
        Alltoallv,
        Shift,
        Barrier,
    ];
    for op in all {
        match op {
            Bcast | Reduce | Allgather | ReduceScatter | Allreduce | Scan | Scatter | Gather
            | Alltoall | Alltoallv | Shift | Barrier => {}
        }
    }
    all.to_vec()
}

/// One call of `op` on the whole cube, with 4-byte blocks and root 0; the sum of the
/// reductions must be the number of nodes.
fn call(sc: Subcube<'_>, op: Operation) -> Result<()> {
    let (p, me) = (sc.size(), sc.rank());
    let block = Bytes::from(vec![me as u8; 4]);
    let ones = [1i64; 8];
    let want_sum = |v: Vec<i64>| assert!(v.iter().all(|&x| x == i64::from(p)), "{op:?}: {v:?}");
    match op {
        Operation::Bcast => {
            let data = if me == 0 { block } else { Bytes::new() };
            assert_eq!(sc.bcast(0, data, 4)?, Bytes::from(vec![0u8; 4]));
        }
        Operation::Reduce => {
            if let Some(v) = sc.reduce(0, &ones, Op::Sum)? {
                want_sum(v);
            }
        }
        Operation::Allgather => {
            assert_eq!(sc.allgather(block.clone())?.len(), p as usize);
            assert_eq!(sc.allgatherv(block)?.len(), p as usize);
        }
        Operation::ReduceScatter => want_sum(sc.reduce_scatter(&ones, Op::Sum)?),
        Operation::Allreduce => want_sum(sc.allreduce(&ones, Op::Sum)?),
        Operation::Scan => {
            let v = sc.scan(&ones, Op::Sum)?;
            assert!(v.iter().all(|&x| x == i64::from(me) + 1), "scan: {v:?}");
        }
        Operation::Scatter => {
            let blocks: Vec<Bytes> = (0..p).map(|j| Bytes::from(vec![j as u8; 4])).collect();
            let mine = sc.scatter(0, if me == 0 { &blocks } else { &[] }, 4)?;
            assert_eq!(mine, Bytes::from(vec![me as u8; 4]));
        }
        Operation::Gather => {
            let all = sc.gather(0, block.clone())?;
            assert_eq!(all.map(|v| v.len()), (me == 0).then_some(p as usize));
            sc.gatherv(0, block)?;
        }
        Operation::Alltoall => {
            let got = sc.alltoall(&vec![block; p as usize])?;
            assert_eq!(got.len(), p as usize);
        }
        Operation::Alltoallv => {
            let got = sc.alltoallv(&vec![block; p as usize])?;
            let want: Vec<Bytes> = (0..p).map(|j| Bytes::from(vec![j as u8; 4])).collect();
            assert_eq!(got, want);
        }
        Operation::Shift => {
            assert_eq!(sc.shift(block, 1, ShiftOrder::Ring)?.len(), 4);
        }
        Operation::Barrier => sc.barrier()?,
    }
    Ok(())
}

#[test]
fn every_listed_algorithm_has_an_arm() {
    run_local(2, |node| {
        for op in all_operations() {
            for &alg in op.algorithms() {
                if let Err(e) = call(node.cube().with(alg), op) {
                    panic!("{op:?} with {alg:?}: {e}");
                }
            }
            call(node.cube().with(Algorithm::Auto), op).unwrap();
        }
    });
}
