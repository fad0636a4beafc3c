//! All-to-all personalized communication with every block in flight at once along its
//! e-cube route: each node posts its p − 1 receives, then starts its p − 1 sends in the
//! order of Grama's Alg. 4.10 (step j to node i XOR j, the congestion-free schedule of
//! §4.5.3), and the nodes on the way forward the blocks in their progress threads, cut
//! through as they arrive. Where Alg. 4.10 waits for each exchange before the next, here
//! no node waits for anything but its own blocks, so on *all-port* hardware — a node that
//! drives its d links at once, as the iPSC's and the emulated cube's (docs/cubenet.md) do —
//! every link of the cube carries traffic during the whole operation.
//!
//! e-cube routing of the complete exchange loads every directed link with exactly p/2
//! blocks (Johnsson & Ho, "Optimum broadcasting and personalized communication in
//! hypercubes", IEEE Trans. Computers 38(9), 1989, cited by the Bhatt seed), so its all-port
//! time is `(p − 1) t_s + t_w m p/2` plus the hop terms: the link bound (`docs/perf/
//! cubenet.md`). In Grama's one-port model it costs what Alg. 4.10 does, eq. 4.10:
//! `(t_s + t_w m)(p − 1)`. Blocks may differ in length, so this is also `alltoallv`.

use bytes::Bytes;

use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// The landing e-cube all-to-all lends its blocks from this size on, and copies smaller
/// ones (measured in one job, `osu alltoall --form into --alg auto --vs-alg
/// store-forward`, where the automatic choice is e-cube: with 64 KiB blocks lent, e-cube /
/// store-and-forward 1.15–1.16 on 8 ranks and 1.23–1.24 on 16 — the p − 1 lent blocks
/// waited for their acknowledgements when the call returned — against the byte form's
/// 0.84–0.96; copied: 0.75–0.89 on 4 ranks, 0.97–1.04 on 8, 1.15 on 16).
const LEND_ALL_FROM: usize = 128 << 10;

/// `blocks[t]` goes to relative rank t; returns the block from each relative rank.
pub(crate) fn alltoall(c: &Ctx<'_>, blocks: &[Bytes]) -> Result<Vec<Bytes>> {
    let p = c.p();
    let mut out = vec![Bytes::new(); p as usize];
    out[c.me as usize] = blocks[c.me as usize].clone();
    let recvs = (1..p)
        .map(|j| c.irecv(c.me ^ j).map(|r| (c.me ^ j, r)))
        .collect::<Result<Vec<_>>>()?;
    let sends = (1..p)
        .map(|j| c.isend(c.me ^ j, blocks[(c.me ^ j) as usize].clone()))
        .collect::<Result<Vec<_>>>()?;
    for (from, r) in recvs {
        out[from as usize] = r.wait()?.into_data();
    }
    for s in sends {
        s.wait()?;
    }
    Ok(out)
}

/// [`alltoall`] between the caller's memories, as `pairwise::alltoall_landing`: every
/// receive names its block of `out`, every send lends its block of `data`.
///
/// # Safety
/// `out .. out + p · m` must be writable and not otherwise used until this returns.
pub(crate) unsafe fn alltoall_landing(
    c: &Ctx<'_>,
    data: &[u8],
    m: usize,
    out: *mut u8,
) -> Result<()> {
    c.lend(|l| {
        let p = c.p();
        let me = c.me as usize;
        let recvs = (1..p)
            .map(|j| {
                let t = c.me ^ j;
                // SAFETY: block `t` of `out`, written by this receive only; every receive
                // is waited for or dropped before this returns.
                unsafe { c.irecv_landing(t, (out.add(t as usize * m), m)) }.map(|r| (t, r))
            })
            .collect::<Result<Vec<_>>>()?;
        let sends = (1..p)
            .map(|j| {
                let t = (c.me ^ j) as usize;
                let block = &data[t * m..(t + 1) * m];
                // Blocks below `LEND_ALL_FROM` are copied: lent, the p − 1 of them
                // keep more than `COPY_LENT_BELOW` waiting for acknowledgements
                // when the call returns (see the constant).
                if m < LEND_ALL_FROM {
                    c.isend(t as u32, Bytes::copy_from_slice(block))
                } else {
                    c.isend(t as u32, l.lend(block))
                }
            })
            .collect::<Result<Vec<_>>>()?;
        // This node's own block, copied while the others are under way.
        // SAFETY: block `me` of `out` (the caller's contract).
        unsafe { super::copy_block(data, out, me, m) };
        let mut other = None;
        for (from, r) in recvs {
            if let Some(b) = r.wait()? {
                other.get_or_insert((from, b));
            }
        }
        for s in sends {
            s.wait()?;
        }
        other.map_or(Ok(()), |(from, b)| Err(super::wrong_block(from, &b, m)))
    })
}
