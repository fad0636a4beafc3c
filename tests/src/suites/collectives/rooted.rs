//! The rooted operations (Grama 4.1, 4.4): broadcast, scatter, gather and gatherv from
//! every root the scope draws, short, uneven and long payloads.

use anyhow::{ensure, Result};
use bytes::Bytes;
use hypercube::collectives::Algorithm;

use super::data::*;
use super::{Scope, LONG};

pub(super) fn bcast(s: &Scope<'_>) -> Result<()> {
    for alg in [
        Algorithm::Hypercube,
        Algorithm::ScatterAllgather,
        Algorithm::AllPort,
        Algorithm::Auto,
    ] {
        for len in [0, 13, 101, LONG] {
            for &root in &s.roots {
                let want = long_bytes(s.seed(root) + len as u64, len);
                let data = if s.me == root {
                    want.clone()
                } else {
                    Bytes::new()
                };
                let got = s.with(alg).bcast(s.node_of(root), data, len)?;
                ensure!(got == want, "{alg:?} root {root} len {len}: wrong data");
            }
        }
    }
    Ok(())
}

/// The algorithms of scatter, gather and gatherv.
pub(super) const TREE_ALGS: [Algorithm; 4] = [
    Algorithm::Hypercube,
    Algorithm::Ecube,
    Algorithm::AllPort,
    Algorithm::Auto,
];

/// Block length of the block-wise checks.
pub(super) const M: usize = 9;

/// A long block (200 KiB: rendezvous, and 3 hops on the e-cube trees in a 3-cube).
pub(super) fn long_block(s: &Scope<'_>, j: usize) -> Bytes {
    long_bytes(s.seed(j) + 9, 200 << 10)
}

pub(super) fn scatter(s: &Scope<'_>) -> Result<()> {
    for alg in TREE_ALGS {
        let sa = s.with(alg);
        for &root in &s.roots {
            let block = |j: usize| bytes_of(s.seed(root) + j as u64, M);
            let blocks: Vec<Bytes> = if s.me == root {
                (0..s.p).map(block).collect()
            } else {
                Vec::new()
            };
            let got = sa.scatter(s.node_of(root), &blocks, M)?;
            ensure!(got == block(s.me), "{alg:?} root {root}");
        }
        let blocks: Vec<Bytes> = if s.me == 0 {
            (0..s.p).map(|j| long_block(s, j)).collect()
        } else {
            Vec::new()
        };
        let got = sa.scatter(s.base, &blocks, 200 << 10)?;
        ensure!(got == long_block(s, s.me), "{alg:?} long blocks");
    }
    Ok(())
}

pub(super) fn gather(s: &Scope<'_>) -> Result<()> {
    let block = |j: usize| bytes_of(s.seed(j), M);
    for alg in TREE_ALGS {
        let sa = s.with(alg);
        for &root in &s.roots {
            let got = sa.gather(s.node_of(root), block(s.me))?;
            ensure!(
                got == s.at_root(root, || (0..s.p).map(block).collect()),
                "{alg:?} root {root}"
            );
        }
        let got = sa.gather(s.base, long_block(s, s.me))?;
        ensure!(
            got == s.at_root(0, || (0..s.p).map(|j| long_block(s, j)).collect()),
            "{alg:?} long blocks"
        );
    }
    Ok(())
}

pub(super) fn gatherv(s: &Scope<'_>) -> Result<()> {
    // Block j has j bytes (the first is empty).
    let block = |j: usize| bytes_of(s.seed(j), j);
    for alg in TREE_ALGS {
        for &root in &s.roots {
            let got = s.with(alg).gatherv(s.node_of(root), block(s.me))?;
            ensure!(
                got == s.at_root(root, || (0..s.p).map(block).collect()),
                "{alg:?} root {root}"
            );
        }
    }
    Ok(())
}
