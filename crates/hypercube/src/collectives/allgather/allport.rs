//! All-to-all broadcast on **all-port** hardware: every block is cut into d parts, and part
//! i runs Grama's Alg. 4.7 (recursive doubling) with its dimension order rotated by i —
//! dimensions i, i+1, …, i+d−1 (mod d). At every step the d parts use d different
//! dimensions, so each node drives all of its links at once: the d rotated spanning
//! binomial trees of Johnsson & Ho ("Optimum broadcasting and personalized communication
//! in hypercubes", IEEE Trans. Computers 38(9), 1989; cited by the Bhatt seed, §1).
//!
//! Step j moves `2^j m/d` bytes over each link, so the all-port time is
//! `d t_s log p + t_w m (p − 1)/d` (start-ups counted as the node's serial work): the link
//! bound `(p − 1) m/d` exactly, where Alg. 4.7 needs `(p − 1) m`. In Grama's one-port
//! model it costs `d t_s log p + t_w m (p − 1)`: more start-ups, the same bytes.

use bytes::{Bytes, BytesMut};

use crate::collectives::blocks::{bounds, pack, unpack_equal, Layout};
use crate::collectives::ctx::Ctx;
use crate::error::Result;

/// Every node's `mine` → all blocks by relative rank. Each part's slices travel in
/// `layout` ([`Layout::Given`]: part i of block j has `bounds(sizes[j], d, i)` bytes).
pub(crate) fn allgather(c: &Ctx<'_>, mine: Bytes, layout: Layout<'_>) -> Result<Vec<Bytes>> {
    let d = c.k;
    if d == 0 {
        return Ok(vec![mine]);
    }
    let own = mine.len();
    let given: Vec<Vec<usize>> = match layout {
        Layout::Given(sizes) => (0..d)
            .map(|i| sizes.iter().map(|&z| bounds(z, d, i).len()).collect())
            .collect(),
        _ => Vec::new(),
    };
    let part_layout = |i: u32| match layout {
        Layout::Given(_) => Layout::Given(&given[i as usize]),
        other => other,
    };
    // held[i]: part i of the blocks of the nodes held so far, by relative rank (sorted).
    let mut held: Vec<Vec<(u32, Bytes)>> = (0..d)
        .map(|i| vec![(c.me, mine.slice(bounds(own, d, i)))])
        .collect();
    for j in 0..d {
        let partner = |i: u32| c.me ^ (1 << ((i + j) % d));
        let recvs = (0..d)
            .map(|i| c.irecv(partner(i)))
            .collect::<Result<Vec<_>>>()?;
        let sends = (0..d)
            .map(|i| {
                let slices: Vec<Bytes> = held[i as usize].iter().map(|(_, b)| b.clone()).collect();
                c.isend(partner(i), pack(&slices, part_layout(i)))
            })
            .collect::<Result<Vec<_>>>()?;
        for (i, r) in (0..d).zip(recvs) {
            let bit = 1 << ((i + j) % d);
            let mut ids: Vec<u32> = held[i as usize].iter().map(|(n, _)| n ^ bit).collect();
            ids.sort_unstable();
            let got = r.wait()?.into_data();
            let part = bounds(own, d, i).len();
            let got = unpack_equal(got, &ids, part_layout(i), "allgather", (partner(i), part))?;
            let h = &mut held[i as usize];
            h.extend(ids.into_iter().zip(got));
            h.sort_unstable_by_key(|(n, _)| *n);
        }
        for s in sends {
            s.wait()?;
        }
    }
    // Every part now holds all p nodes' slices in rank order: join them per node.
    Ok((0..c.p() as usize)
        .map(|r| {
            let len = held.iter().map(|h| h[r].1.len()).sum();
            let mut b = BytesMut::with_capacity(len);
            for h in &held {
                b.extend_from_slice(&h[r].1);
            }
            b.freeze()
        })
        .collect())
}
