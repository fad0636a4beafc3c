//! The typed forms with messages large enough to be received in place (`node/landing.rs`:
//! over TCP, read from the socket straight into the caller's memory): point to point into
//! a buffer, allgather (every algorithm, also in the byte form), the all-port all-reduce
//! and reduce-scatter, `allreduce_into` (every algorithm), all-to-all (pairwise, e-cube and store-and-forward, whose steps land
//! in two places each) and broadcast, each against a sequential expectation. Part of the typed suite (`typed.rs`, check "in place"), so it
//! runs over TCP and on threads.

use anyhow::{ensure, Result};
use hypercube::collectives::Algorithm;
use hypercube::{MsgType, Node, TypeSel};

/// Every check on this node's cube; an error names the first that failed.
pub fn run(node: &Node) -> Result<()> {
    let me = node.mynode();
    let p = node.numnodes();
    let cube = node.cube();
    if p > 1 {
        let other = me ^ 1;
        // 1 MiB into the caller's buffer (read from the socket straight into it, over TCP),
        // a buffer longer than the message, and the buffer written nowhere else.
        let n = 1usize << 18;
        let mine: Vec<u32> = (0..n as u32).map(|i| (me << 24) ^ i).collect();
        let want: Vec<u32> = (0..n as u32).map(|i| (other << 24) ^ i).collect();
        let mut buf = vec![7u32; n + 3];
        let bytes: Vec<u8> = mine.iter().flat_map(|x| x.to_le_bytes()).collect();
        let send = node.isend(other, MsgType(6), bytes)?;
        let sel = hypercube::Select::from_node(other, TypeSel::Is(6));
        let (got, st) = node.recv_slice_into(sel, &mut buf)?;
        send.wait()?;
        ensure!(
            got == n && st.source == other,
            "recv_slice_into: {got} from {}",
            st.source
        );
        ensure!(
            buf[..n] == want[..] && buf[n..] == [7; 3],
            "recv_slice_into 1 MiB"
        );
    }
    for alg in [
        Algorithm::Hypercube,
        Algorithm::Ring,
        Algorithm::Mesh,
        Algorithm::AllPort,
    ] {
        // 1 MiB per rank: over TCP a rendezvous message, which the hypercube algorithm
        // reads from the socket straight into the result (`node/landing.rs`).
        let n = 1usize << 18;
        let big: Vec<u32> = (0..n as u32).map(|i| (me << 20) ^ i).collect();
        let want: Vec<u32> = (0..p)
            .flat_map(|r| (0..n as u32).map(move |i| (r << 20) ^ i))
            .collect();
        let c = cube.with(alg);
        ensure!(
            c.allgather_slice(&big)? == want,
            "allgather_slice 1 MiB {alg:?}"
        );
        ensure!(
            c.allgather_vec(big.clone())? == want,
            "allgather_vec 1 MiB {alg:?}"
        );
        let mut out = vec![0u32; want.len()];
        c.allgather_into(&big, &mut out)?;
        ensure!(out == want, "allgather_into 1 MiB {alg:?}");
        // In place (`MPI_IN_PLACE`): this member's block already at its rank, sent from
        // there; the others' land around it.
        let mut buf = vec![0u32; want.len()];
        let at = me as usize * n;
        buf[at..at + n].copy_from_slice(&big);
        c.allgather_in_place(&mut buf)?;
        ensure!(buf == want, "allgather_in_place 1 MiB {alg:?}");
        // The byte form.
        let raw: Vec<u8> = big.iter().flat_map(|x| x.to_le_bytes()).collect();
        let blocks = c.allgather(bytes::Bytes::from(raw))?;
        let flat: Vec<u32> = blocks
            .iter()
            .flat_map(|b| {
                b.chunks_exact(4)
                    .map(|x| u32::from_le_bytes([x[0], x[1], x[2], x[3]]))
            })
            .collect();
        ensure!(flat == want, "allgather 1 MiB {alg:?}");
    }
    // The all-port all-reduce and reduce-scatter of a long vector (256 KiB blocks; the
    // reduce-scatter's first step lent from the caller's vector).
    {
        let n = (p as usize) << 16;
        let v: Vec<f32> = (0..n).map(|i| ((i as u32 ^ me) % 251) as f32).collect();
        let sum = |i: usize| (0..p).map(|r| ((i as u32 ^ r) % 251) as f32).sum::<f32>();
        let c = cube.with(Algorithm::AllPort);
        let all = c.allreduce(&v, hypercube::collectives::Op::Sum)?;
        ensure!(
            all.len() == n && (0..n).all(|i| all[i] == sum(i)),
            "allreduce AllPort 256 KiB blocks"
        );
        let mine = c.reduce_scatter(&v, hypercube::collectives::Op::Sum)?;
        let at = me as usize * (1 << 16);
        ensure!(
            mine.len() == 1 << 16 && (0..1 << 16).all(|i| mine[i] == sum(at + i)),
            "reduce_scatter AllPort 256 KiB blocks"
        );
    }
    // `allreduce_into` lands the reduce-scatter + all-gather's result in the caller's
    // buffer (one-port and all-port): a length that does not divide into p blocks (blocks
    // of unequal lengths, long enough to be lent), into a buffer of garbage that every
    // element must overwrite; the other algorithms compute and copy.
    {
        let n = ((p as usize) << 15) + 3;
        let v: Vec<f32> = (0..n).map(|i| ((i as u32 ^ me) % 251) as f32).collect();
        let sum = |i: usize| (0..p).map(|r| ((i as u32 ^ r) % 251) as f32).sum::<f32>();
        for alg in [
            Algorithm::ReduceScatterAllgather,
            Algorithm::AllPort,
            Algorithm::Hypercube,
            Algorithm::Ring,
        ] {
            let mut out = vec![f32::NAN; n];
            cube.with(alg)
                .allreduce_into(&v, &mut out, hypercube::collectives::Op::Sum)?;
            ensure!(
                (0..n).all(|i| out[i] == sum(i)),
                "allreduce_into {alg:?}, {n} elements"
            );
        }
    }
    // All-to-all of 256 KiB blocks, received in place by pairwise and e-cube exchange, and
    // by store-and-forward (the blocks for this member in the result, the ones it passes
    // on in a buffer of the step's own) — also with 64 KiB blocks, whose step messages of
    // p/2 blocks it lands from 4 members on.
    for (alg, n) in [
        (Algorithm::Pairwise, 1usize << 16),
        (Algorithm::Ecube, 1 << 16),
        (Algorithm::StoreForward, 1 << 16),
        (Algorithm::StoreForward, 1 << 14),
    ] {
        let kib = (n * 4) >> 10;
        let data: Vec<u32> = (0..p)
            .flat_map(|t| (0..n as u32).map(move |i| (me << 24) ^ (t << 16) ^ i))
            .collect();
        let want: Vec<u32> = (0..p)
            .flat_map(|s| (0..n as u32).map(move |i| (s << 24) ^ (me << 16) ^ i))
            .collect();
        let c = cube.with(alg);
        ensure!(
            c.alltoall_slice(&data)? == want,
            "alltoall_slice {kib} KiB {alg:?}"
        );
        ensure!(
            c.alltoall_vec(data.clone())? == want,
            "alltoall_vec {kib} KiB {alg:?}"
        );
        let mut out = vec![0u32; want.len()];
        c.alltoall_into(&data, &mut out)?;
        ensure!(out == want, "alltoall_into {kib} KiB {alg:?}");
    }
    // Broadcasts of 96 KiB (below the broadcast's landing limit: copied out of message
    // buffers) and 1 MiB (received in place) by the hypercube algorithm, from the last
    // rank and from node 0.
    for (alg, kib, root) in [
        (Algorithm::Hypercube, 96, p - 1),
        (Algorithm::Hypercube, 96, 0),
        (Algorithm::Hypercube, 1024, p - 1),
        (Algorithm::ScatterAllgather, 1024, p - 1),
    ] {
        let n = kib << 8;
        let want: Vec<u32> = (0..n as u32)
            .map(|i| i.wrapping_mul(2_654_435_761) ^ root)
            .collect();
        let data = if me == root { want.clone() } else { Vec::new() };
        let c = cube.with(alg);
        ensure!(
            c.bcast_slice(root, &data, n)? == want,
            "bcast_slice {kib} KiB from {root} {alg:?}"
        );
        ensure!(
            c.bcast_vec(root, data.clone())? == want,
            "bcast_vec {kib} KiB from {root} {alg:?}"
        );
        let mut buf = if me == root {
            want.clone()
        } else {
            vec![0u32; n]
        };
        c.bcast_into(root, &mut buf)?;
        ensure!(buf == want, "bcast_into {kib} KiB from {root} {alg:?}");
    }
    Ok(())
}
