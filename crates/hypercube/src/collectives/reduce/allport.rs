//! All-to-one reduction on **all-port** hardware: the pipelined broadcast of
//! `broadcast/allport.rs` run backwards over Johnsson & Ho's d edge-disjoint spanning
//! binomial trees ("Optimum broadcasting and personalized communication in hypercubes",
//! IEEE Trans. Computers 38(9), 1989, §IV; cited by the Bhatt seed, §1; the trees:
//! `collectives/esbt.rs`). The vector is cut into d parts, part t is reduced up tree t,
//! and each part is cut into n pieces: as soon as piece j of part t has come from all of a
//! node's children in tree t and been combined with the node's own, it goes on to the
//! parent, while piece j + 1 arrives.
//!
//! All-port time `(n + d)(t_s + t_w m/(d n))` plus the combining; at the best n
//! (`select::pieces`) it approaches the link bound `t_w m/d`, where Alg. 4.3 needs
//! `(t_s + t_w m) log p`. The trees combine partial results out of rank order: a
//! commutative ⊕ only.

use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode, Op};
use crate::collectives::esbt;
use crate::collectives::pod::Pod;
use crate::error::{Error, Result};

/// Every node's `data` → the reduction at relative rank `root`.
pub(crate) fn reduce<T: Pod>(
    c: &Ctx<'_>,
    root: u32,
    data: &[T],
    op: Op<'_, T>,
) -> Result<Option<Vec<T>>> {
    let n = crate::collectives::select::pieces(std::mem::size_of_val(data), c.k);
    reduce_in(c, root, data, op, n)
}

/// [`reduce`] with every part cut into `n ≥ 1` pieces (the same `n` on every member).
fn reduce_in<T: Pod>(
    c: &Ctx<'_>,
    root: u32,
    data: &[T],
    op: Op<'_, T>,
    n: usize,
) -> Result<Option<Vec<T>>> {
    let (len, d, n) = (data.len(), c.k, n as u32);
    if d == 0 {
        return Ok(Some(data.to_vec()));
    }
    let v = c.me ^ root;
    // The elements of piece j of part t.
    let piece = |t: u32, j: u32| esbt::piece(len, d, n, t, j);
    let mut acc = data.to_vec();
    let kids: Vec<Vec<u32>> = (0..d).map(|t| esbt::children(v, t, d)).collect();
    // Contributions still awaited per piece, and pieces heard per child.
    let mut need: Vec<Vec<usize>> = kids.iter().map(|k| vec![k.len(); n as usize]).collect();
    let mut heard = vec![0u32; 1 << d];
    let mut sends = Vec::new();
    let mut up = |t: u32, j: u32, acc: &[T]| -> Result<()> {
        let parent = esbt::parent(v, t, d) ^ root;
        sends.push(c.isend(parent, encode(&acc[piece(t, j)]))?);
        Ok(())
    };
    if v != 0 {
        // The leaves of a tree start its pipeline: piece j of every part before j + 1.
        for j in 0..n {
            for t in (0..d).filter(|&t| kids[t as usize].is_empty()) {
                up(t, j, &acc)?;
            }
        }
    }
    let awaited: usize = kids.iter().map(Vec::len).sum::<usize>() * n as usize;
    for _ in 0..awaited {
        let (src, bytes) = c.recv_any()?;
        let u = src ^ root;
        let t = esbt::tree_of(u, v, d).ok_or_else(|| esbt::stray(src, c.me))?;
        let j = heard[u as usize];
        if j >= n {
            return Err(too_many_pieces(src, n, len));
        }
        heard[u as usize] += 1;
        let at = piece(t, j);
        check_len::<T>(&bytes, at.len(), "reduce")?;
        op.combine_bytes(&mut acc[at], &bytes, true);
        need[t as usize][j as usize] -= 1;
        if need[t as usize][j as usize] == 0 && v != 0 {
            up(t, j, &acc)?;
        }
    }
    for s in sends {
        s.wait()?;
    }
    Ok((v == 0).then_some(acc))
}

/// A child sent a piece beyond the `n` that this node cuts each part into: its vector was
/// longer than this node's `len` elements (the number of pieces follows from the length).
fn too_many_pieces(src: u32, n: u32, len: usize) -> Error {
    let call = crate::collectives::blocks::Unit::current().map_or("reduce", |u| u.call);
    Error::InvalidArgument(format!(
        "{call}: node {src} sent more than the {n} piece{} per part that this node's {len} \
         element{} make: the members passed vectors of different lengths; every member must \
         pass the same number of elements",
        if n == 1 { "" } else { "s" },
        if len == 1 { "" } else { "s" },
    ))
}

#[cfg(test)]
mod tests {
    use crate::collectives::ctx::Ctx;
    use crate::collectives::element::Op;
    use crate::local::run_local;

    /// Every root, lengths that leave parts empty or uneven, one piece and many.
    #[test]
    fn pipelined_reduction_sums_every_element_at_every_root() {
        for d in 0..=4u32 {
            let results = run_local(d, move |node| -> crate::error::Result<()> {
                let p = 1u64 << d;
                for len in [0usize, 3, 1000, 20_000] {
                    for root in 0..p as u32 {
                        for n in [1usize, 3, 8] {
                            let c = Ctx::new(&node, d)?;
                            let me = u64::from(c.me);
                            let data: Vec<u64> = (0..len as u64).map(|i| i * 1000 + me).collect();
                            let got = super::reduce_in(&c, root, &data, Op::Sum, n)?;
                            if c.me == root {
                                let want: Vec<u64> = (0..len as u64)
                                    .map(|i| i * 1000 * p + p * (p - 1) / 2)
                                    .collect();
                                assert_eq!(got.as_deref(), Some(&want[..]), "d {d} root {root}");
                            } else {
                                assert!(got.is_none());
                            }
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

    /// A piece beyond those a node expects from a child is named as a length disagreement
    /// (what happened, what to do), not as a stray message.
    #[test]
    fn a_piece_too_many_is_a_length_disagreement() {
        let e = super::too_many_pieces(5, 1, 3).to_string();
        assert!(
            e.contains("reduce: node 5 sent more than the 1 piece per part"),
            "{e}"
        );
        assert!(e.contains("this node's 3 elements make"), "{e}");
        assert!(
            e.contains("every member must pass the same number of elements"),
            "{e}"
        );
    }
}
