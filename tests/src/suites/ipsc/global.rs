//! GSENDW/GRECVW, GOP and GCAT (seed §2–§4): every root, every subcube dimension, empty,
//! short and long payloads.

use super::*;

pub(super) fn broadcast(node: &Node) -> Result<()> {
    let (me, d) = (node.mynode(), node.cubedim());
    for dim in 0..=d {
        for root in roots(me, dim) {
            for len in [0usize, 37] {
                let want = pattern(root, dim + len as u32, len);
                gsend_and_check(node, root, dim, &want, &format!("len {len}"))?;
            }
            let want = pattern(root, 99, 16);
            if me == root {
                node.gsend(want.clone(), dim)?;
            } else {
                let mut buf = [0u8; 16];
                let n = node.grecv_into(&mut buf, dim)?;
                ensure!(n == 16 && buf[..] == want[..], "grecv_into: wrong data");
            }
        }
    }
    // Long messages on every subcube of dimension 2 and more, from every root: on slow
    // links they go down the spanning trees (`ipsc/gsend_esbt.rs`), elsewhere the seed's.
    for dim in 2..=d {
        for root in roots(me, dim) {
            let want = pattern(root, 11 + dim, 70_001);
            gsend_and_check(node, root, dim, &want, "long broadcast")?;
        }
    }
    // Large payloads from two roots over the whole cube.
    for root in [0, node.numnodes() - 1] {
        let want = pattern(root, 7, (1 << 20) + 5);
        gsend_and_check(node, root, d, &want, "large broadcast")?;
    }
    Ok(())
}

pub(super) fn gop(node: &Node) -> Result<()> {
    let (me, d) = (node.mynode(), node.cubedim());
    for dim in 0..=d {
        for root in roots(me, dim) {
            let sub = gop_subtree(me, root, dim);
            let subset: Vec<u64> = sub.iter().map(|&n| n as u64).collect();
            // f64 sum, over a vector.
            let mut x = [me as f64, 1.0, -(me as f64) * 0.5];
            node.gop(&mut x, Op::Sum, root, dim)?;
            let s: f64 = subset.iter().map(|&n| n as f64).sum();
            ensure!(
                x == [s, sub.len() as f64, -s * 0.5],
                "f64 sum dim {dim} root {root}: {x:?} (subtree {sub:?})"
            );
            // i32 max and min, u64 product, f32 min, i64 sum.
            let mut m = [me as i32, -(me as i32)];
            node.gop(&mut m, Op::Max, root, dim)?;
            let mx = *sub.iter().max().unwrap_or(&me) as i32;
            let mn = *sub.iter().min().unwrap_or(&me) as i32;
            ensure!(m == [mx, -mn], "i32 max dim {dim} root {root}: {m:?}");
            let mut m = [me];
            node.gop(&mut m, Op::Min, root, dim)?;
            ensure!(m == [mn as u32], "u32 min dim {dim} root {root}");
            let mut pr = [me as u64 + 1];
            node.gop(&mut pr, Op::Prod, root, dim)?;
            let want = subset.iter().fold(1u64, |a, &n| a.wrapping_mul(n + 1)); // GOP wraps
            ensure!(
                pr == [want],
                "u64 product dim {dim} root {root}: {pr:?} != {want}"
            );
            let mut f = [me as f32];
            node.gop(&mut f, Op::Min, root, dim)?;
            ensure!(f == [mn as f32], "f32 min");
            let mut i = [me as i64 - 3];
            node.gop(&mut i, Op::Sum, root, dim)?;
            let want: i64 = sub.iter().map(|&n| n as i64 - 3).sum();
            ensure!(i == [want], "i64 sum");
            // A user operation: bitwise OR.
            let mut bits = [1u64 << me];
            node.gop_with(&mut bits, |a, b| a | b, root, dim)?;
            let want = sub.iter().fold(0u64, |acc, &n| acc | 1 << n);
            ensure!(bits == [want], "OR closure: {:#x} != {want:#x}", bits[0]);
            // Empty vectors are fine.
            node.gop::<f64>(&mut [], Op::Sum, root, dim)?;
        }
    }
    // A large vector.
    let mut big = vec![1.0f64; 100_000];
    node.gop(&mut big, Op::Sum, 0, d)?;
    if me == 0 {
        ensure!(
            big.iter().all(|&v| v == node.numnodes() as f64),
            "large gop"
        );
    }
    Ok(())
}

pub(super) fn gcat(node: &Node) -> Result<()> {
    let (me, d) = (node.mynode(), node.cubedim());
    for dim in 0..=d {
        for root in roots(me, dim) {
            let got = node.gcat(gcat_piece(me, dim), root, dim)?;
            let want: Vec<u8> = gcat_subtree_diffs(me, root, dim)
                .into_iter()
                .flat_map(|dn| gcat_piece(dn ^ root, dim))
                .collect();
            ensure!(
                got[..] == want[..],
                "gcat dim {dim} root {root}: wrong result"
            );
            // The buffer form, with room for exactly the result at the root.
            let total: usize = (0..1u32 << dim)
                .map(|dn| gcat_piece(dn ^ root, dim).len())
                .sum();
            let mut buf = vec![0u8; total.max(64)];
            let piece = gcat_piece(me, dim);
            buf[..piece.len()].copy_from_slice(&piece);
            let n = node.gcat_into(&mut buf, piece.len(), root, dim)?;
            ensure!(buf[..n] == want[..], "gcat_into dim {dim} root {root}");
        }
    }
    // Root 0: ascending node order; large contributions.
    let all = node.gcat(pattern(me, 5, 70_000), 0, d)?;
    if me == 0 {
        let want: Vec<u8> = (0..node.numnodes())
            .flat_map(|n| pattern(n, 5, 70_000))
            .collect();
        ensure!(all[..] == want[..], "large gcat in ascending order");
    }
    Ok(())
}
