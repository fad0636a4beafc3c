//! All-to-one reduction on the hypercube — Grama Alg. 4.3 (the broadcast's steps in
//! reverse), any root by the relabelling of Alg. 4.2; model time eq. 4.1:
//! `T = (t_s + t_w m) log p`. The lower rank's partial result is the left operand, so a
//! non-commutative ⊕ is combined in rank order whatever the root.

use crate::collectives::ctx::Ctx;
use crate::collectives::element::{check_len, encode, encode_vec, Op};
use crate::collectives::pod::Pod;
use crate::error::Result;

/// A leaf sends its vector lent from this many bytes on, copied below. Measured on
/// loopback, 4 and 8 ranks on 2 cores, the build that lent from 64 KiB against the one
/// before (which copied every vector), three rounds, call and barrier per iteration:
/// 64 KiB 1.04–1.34× the time, 256 KiB 0.78–1.26×, 1 MiB 0.59–0.93× (a lent message is
/// acknowledged at once and the leaf waits for it; a copy costs the shared cores more only
/// for long vectors; commands and figures in `docs/perf/analysis.md`, "Session of
/// 2026-11-27 (11:30– UTC)").
const LEND_FROM: usize = 512 << 10;

/// Every node's `data` → the reduction at relative rank `root`.
///
/// Copies: a node that sends before it has received (a leaf of the tree) sends `data`
/// itself, lent (`Ctx::lend`) from [`LEND_FROM`] bytes on (copied below); a node's first
/// receive is combined with `data` into a vector of its own in one pass
/// (`Op::combine_into`), later ones into that vector, which it sends as it is
/// (`encode_vec`). So a long `data` is never copied but at a root of a subcube of one
/// node.
pub(crate) fn reduce<T: Pod>(
    c: &Ctx<'_>,
    root: u32,
    data: &[T],
    op: Op<'_, T>,
) -> Result<Option<Vec<T>>> {
    let v = c.me ^ root;
    c.lend(|l| {
        // The partial result once this node has combined something; `None`: `data`.
        let mut acc: Option<Vec<T>> = None;
        for i in 0..c.k {
            let bit = 1u32 << i;
            if v & (bit - 1) != 0 {
                break;
            }
            let partner = (v ^ bit) ^ root;
            if v & bit != 0 {
                let partial = match acc.take() {
                    None if std::mem::size_of_val(data) >= LEND_FROM => l.lend_elems(data),
                    None => encode(data),
                    Some(a) => encode_vec(a).0,
                };
                c.send(partner, partial)?;
                return Ok(None);
            }
            let got = c.recv(partner)?;
            check_len::<T>(&got, data.len(), "reduce")?;
            let higher = partner > c.me;
            match &mut acc {
                Some(a) => op.combine_bytes(a, &got, higher),
                None => {
                    let mut a = Vec::with_capacity(data.len());
                    op.combine_into(&mut a, data, &got, higher);
                    acc = Some(a);
                }
            }
        }
        Ok((c.me == root).then(|| acc.unwrap_or_else(|| data.to_vec())))
    })
}
