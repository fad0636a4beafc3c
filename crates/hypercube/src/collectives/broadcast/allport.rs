//! One-to-all broadcast on **all-port** hardware: Johnsson & Ho's pipelined broadcast over
//! d edge-disjoint spanning binomial trees ("Optimum broadcasting and personalized
//! communication in hypercubes", IEEE Trans. Computers 38(9), 1989, §IV; cited by the
//! Bhatt seed, §1; the trees: `collectives/esbt.rs`). The message is cut into d parts,
//! part t goes down tree t, and each part is cut into n pieces: a node hands piece j on to
//! its children while piece j + 1 arrives. Since the trees share no directed link, every
//! link of every node can be busy at once.
//!
//! ```text
//!   root ═ part 0 ═▶ tree 0 ─▶ …      each part in n pieces:
//!        ═ part 1 ═▶ tree 1 ─▶ …      link  ▕p0▏p1▕p2▏…
//!        ═ part 2 ═▶ tree 2 ─▶ …      next    ▕p0▏p1▕p2▏…   (d + 1 links deep)
//! ```
//!
//! All-port time `(n + d)(t_s + t_w m/(d n))`; at the best n (`select::pieces`) it
//! approaches the link bound `t_w m/d`, where Alg. 4.2 needs `(t_s + t_w m) log p`.
//! One-port, each node serves its links in turn: `(n + d)(d t_s + t_w m/n)`.

use bytes::{Bytes, BytesMut};

use crate::collectives::ctx::Ctx;
use crate::collectives::esbt;
use crate::error::{Error, Result};

/// Broadcast `data` (meaningful at `root`, a relative rank) of `len` bytes.
pub(crate) fn bcast(c: &Ctx<'_>, root: u32, data: Bytes, len: usize) -> Result<Bytes> {
    bcast_in(
        c,
        root,
        data,
        len,
        crate::collectives::select::pieces(len, c.k),
    )
}

/// [`bcast`] with every part cut into `n ≥ 1` pieces (the same `n` on every member).
fn bcast_in(c: &Ctx<'_>, root: u32, data: Bytes, len: usize, n: usize) -> Result<Bytes> {
    let d = c.k;
    if d == 0 {
        return Ok(data);
    }
    let v = c.me ^ root;
    if v == 0 {
        if data.len() != len {
            return Err(Error::InvalidArgument(format!(
                "bcast: the root passed {} bytes for a broadcast of {len}",
                data.len()
            )));
        }
        // Piece j of every part before piece j + 1 of any: all d links start at once.
        let mut sends = Vec::with_capacity(n * d as usize);
        for j in 0..n as u32 {
            for t in 0..d {
                let bytes = data.slice(esbt::piece(len, d, n as u32, t, j));
                sends.push(c.isend(c.me ^ 1 << t, bytes)?);
            }
        }
        for s in sends {
            s.wait()?;
        }
        return Ok(data);
    }
    // Every other node: piece j of part t comes from the node's parent in tree t, about
    // `j + depth` piece-times after the start; the node takes the pieces in that order
    // (the order they arrive in), hands each on to its children in that tree at once and
    // puts it in place. Every node cuts the parts alike (`select::pieces` of the same
    // length), so a piece of another size is a member's error.
    let n = n as u32;
    let mut out = BytesMut::zeroed(len);
    let mut sends = Vec::new();
    let kids: Vec<Vec<u32>> = (0..d).map(|t| esbt::children(v, t, d)).collect();
    for (t, j) in esbt::arrival_order(v, d, n) {
        let src = esbt::parent(v, t, d) ^ root;
        let piece = c.recv(src)?;
        let at = esbt::piece(len, d, n, t, j);
        if piece.len() != at.len() {
            return Err(Error::InvalidArgument(format!(
                "bcast: piece {j} of part {t} from node {src} has {} bytes where a broadcast \
                 of {len} bytes has {}; every member must pass the same length",
                piece.len(),
                at.len()
            )));
        }
        for &kid in &kids[t as usize] {
            sends.push(c.isend(kid ^ root, piece.clone())?);
        }
        out[at].copy_from_slice(&piece);
    }
    for s in sends {
        s.wait()?;
    }
    Ok(out.freeze())
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use crate::collectives::ctx::Ctx;
    use crate::local::run_local;

    /// Every root, lengths that leave parts empty or uneven, one piece and many.
    #[test]
    fn pipelined_broadcast_delivers_every_byte_from_every_root() {
        for d in 0..=4u32 {
            let results = run_local(d, move |node| -> crate::error::Result<()> {
                for len in [0usize, 5, 10_000, 100_000] {
                    let want: Bytes = (0..len).map(|i| (i * 7 + len) as u8).collect();
                    for root in 0..1u32 << d {
                        for n in [1usize, 3, 8] {
                            let c = Ctx::new(&node, d)?;
                            let data = if c.me == root {
                                want.clone()
                            } else {
                                Bytes::new()
                            };
                            let got = super::bcast_in(&c, root, data, len, n)?;
                            assert_eq!(got, want, "d {d} len {len} root {root} n {n}");
                        }
                    }
                }
                Ok(())
            });
            for r in results {
                r.unwrap();
            }
        }
    }
}
