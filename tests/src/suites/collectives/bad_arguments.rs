//! Bad arguments are errors, not panics or hangs, and the subcube stays usable.

use anyhow::{ensure, Result};
use bytes::Bytes;
use hypercube::collectives::{Algorithm, Op};
use hypercube::Error;

use super::Scope;

/// Bad arguments are errors, not panics or hangs, and the subcube stays usable.
pub(super) fn bad_arguments(s: &Scope<'_>) -> Result<()> {
    let (node, sc, p, me) = (s.node, s.sc, s.p, s.me);
    let d = node.cubedim();
    let invalid_node = |r: hypercube::Result<_>| matches!(r, Err(Error::InvalidNode { .. }));
    let invalid_arg = |r: hypercube::Result<_>| matches!(r, Err(Error::InvalidArgument(_)));
    // A root outside the subcube: another node of the cube, or no node at all.
    let outside = if s.k < d {
        node.mynode() ^ (1 << s.k)
    } else {
        node.numnodes() + 1
    };
    ensure!(
        invalid_node(sc.bcast(outside, Bytes::new(), 0).map(drop)),
        "bcast from a root outside"
    );
    ensure!(
        invalid_node(sc.reduce(outside, &[1i32], Op::Sum).map(drop)),
        "reduce to a root outside"
    );
    ensure!(
        invalid_node(sc.gather(outside, Bytes::new()).map(drop)),
        "gather to a root outside"
    );
    // A subcube larger than the cube.
    ensure!(
        invalid_arg(node.subcube(d + 1).allreduce(&[1u8], Op::Sum).map(drop)),
        "allreduce on a subcube larger than the cube"
    );
    ensure!(
        invalid_arg(node.subcube(d + 1).barrier()),
        "barrier on a subcube larger than the cube"
    );
    // An algorithm that does not implement the operation.
    ensure!(
        invalid_arg(
            sc.with(Algorithm::Pairwise)
                .allgather(Bytes::new())
                .map(drop)
        ),
        "allgather with the pairwise algorithm"
    );
    // Wrong block counts and lengths.
    ensure!(
        invalid_arg(sc.alltoall(&vec![Bytes::new(); p + 1]).map(drop)),
        "alltoall with p + 1 blocks"
    );
    if p > 1 {
        let uneven: Vec<Bytes> = (0..p).map(|i| Bytes::from(vec![0u8; i])).collect();
        ensure!(
            invalid_arg(sc.alltoall(&uneven).map(drop)),
            "alltoall with uneven blocks"
        );
        // Lengths that differ between members: every member gets an error.
        let n = 1 + (me & 1);
        ensure!(
            invalid_arg(sc.allreduce(&vec![1.0f32; n], Op::Sum).map(drop)),
            "allreduce with lengths that differ between members"
        );
    }
    sc.barrier()?;
    // Scatter: blocks that are not block_len long fail at the root (here each node is the
    // root of its own 0-subcube); a member that passes another block_len than the root gets
    // an error naming the length it received, the others their blocks.
    let blocks: Vec<Bytes> = (0..p).map(|_| Bytes::from(vec![7u8; 3])).collect();
    ensure!(
        invalid_arg(
            node.subcube(0)
                .scatter(node.mynode(), &blocks[..1], 4)
                .map(drop)
        ),
        "scatter of a block of the wrong length"
    );
    let odd = p - 1; // the member that passes the wrong length (none when p = 1)
    for alg in [Algorithm::Hypercube, Algorithm::Ecube] {
        let mine = if me == 0 { &blocks[..] } else { &[] };
        let len = if me == odd && p > 1 { 5 } else { 3 };
        let got = sc.with(alg).scatter(s.base, mine, len);
        if me == odd && p > 1 {
            ensure!(
                matches!(got, Err(Error::InvalidArgument(ref e)) if e.contains("3 bytes")),
                "{alg:?}: scatter with another block_len than the root: {got:?}"
            );
        } else {
            ensure!(
                got? == blocks[0],
                "{alg:?}: scatter beside a wrong block_len"
            );
        }
    }
    // Gather with blocks of different lengths: the root says so (the others' sends
    // complete). The odd block is p/2's (p ≥ 4): in the hypercube tree its children see the
    // difference first, report it, and still pass their blocks on, so the root, which gets
    // blocks p/2..p−1 from p/2, sees it too (crates/hypercube/tests/equal_blocks.rs has
    // the case where the totals divide evenly).
    for alg in [Algorithm::Hypercube, Algorithm::Ecube] {
        let block = Bytes::from(vec![1u8; 2 + usize::from(me == p / 2 && p >= 4)]);
        let got = sc.with(alg).gather(s.base, block);
        if me == 0 && p >= 4 {
            ensure!(
                invalid_arg(got.map(drop)),
                "{alg:?}: gather of blocks of different lengths"
            );
        }
    }
    sc.barrier()?;
    // Still usable afterwards.
    ensure!(
        sc.allreduce(&[1u16], Op::Sum)? == [p as u16],
        "allreduce after the errors"
    );
    Ok(())
}
