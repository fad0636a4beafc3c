//! LSENDW/LRECVW, SPGSNW/SPGRCW and MESH (seed §5–§7).

use super::*;

pub(super) fn long(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    let to = (me + 1) % p;
    let from = (me + p - 1) % p;
    let c = hypercube::ipsc::SEED_CHUNK_BYTES;
    let lens = [0, 1, c - 1, c, c + 1, 3 * c, (3 << 20) + 11];
    for (i, &len) in lens.iter().enumerate() {
        let ty = MsgType(40 + i as u32);
        node.lsend(to, ty, pattern(me, i as u32, len))?;
    }
    // Receive in reverse type order: types select.
    for (i, &len) in lens.iter().enumerate().rev() {
        let ty = MsgType(40 + i as u32);
        let want = pattern(from, i as u32, len);
        if i % 2 == 0 {
            let m = node.lrecv(Some(from), ty)?;
            ensure!(
                m.source() == from && m.data()[..] == want[..],
                "lrecv len {len}"
            );
        } else {
            let mut buf = vec![0u8; len];
            let st = node.lrecv_into(None, ty, &mut buf)?;
            ensure!(
                st.source() == from && st.len() == len as u64 && buf == want,
                "lrecv_into len {len}"
            );
        }
    }
    // Two long messages of one type from one source arrive in order; other chunk sizes.
    node.lsend_chunked(to, MsgType(60), pattern(me, 1, 10_000), 1000)?;
    node.lsend_chunked(to, MsgType(60), pattern(me, 2, 999), 7)?;
    ensure!(
        node.lrecv(Some(from), MsgType(60))?.data()[..] == pattern(from, 1, 10_000)[..],
        "first"
    );
    ensure!(
        node.lrecv(None, MsgType(60))?.data()[..] == pattern(from, 2, 999)[..],
        "second"
    );
    Ok(())
}

/// Target sets for the sparse send from `root`.
fn sparse_sets(root: NodeId, p: u32) -> Vec<Vec<NodeId>> {
    let others: Vec<NodeId> = (0..p).filter(|&n| n != root).collect();
    let some: Vec<NodeId> = (0..p).filter(|&n| (n * 5 + root * 3) % 7 < 3).collect(); // may hold root
    vec![
        vec![],
        others.clone(),
        some,
        vec![root ^ (p - 1)],
        others
            .iter()
            .rev()
            .copied()
            .chain(others.iter().copied())
            .collect(), // duplicates
    ]
}

pub(super) fn sparse(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    let mut round = 0u32;
    for root in 0..p {
        for (k, targets) in sparse_sets(root, p).into_iter().enumerate() {
            round += 1;
            let ty = MsgType(1000 + round);
            let len = if k == 1 { 200_000 } else { k * 3 };
            let want = pattern(root, round, len);
            let list_before = targets.clone();
            if me == root {
                node.spgsend(ty, want.clone(), &targets)?;
                ensure!(targets == list_before, "the list was modified");
            } else if targets.contains(&me) {
                if k % 2 == 0 {
                    ensure!(
                        node.spgrecv(ty)?[..] == want[..],
                        "spgrecv root {root} set {k}"
                    );
                } else {
                    let mut buf = vec![0u8; len];
                    let n = node.spgrecv_into(ty, &mut buf)?;
                    ensure!(n == len && buf == want, "spgrecv_into root {root} set {k}");
                }
            }
        }
    }
    Ok(())
}

pub(super) fn mesh(node: &Node) -> Result<()> {
    let (me, d) = (node.mynode(), node.cubedim());
    for ndims in 1..=3u32 {
        for periodic in [false, true] {
            let shape = mesh_shape_for(d, ndims);
            let b = if periodic {
                Boundary::Periodic
            } else {
                Boundary::Closed
            };
            let pos = node
                .mesh(&shape, &vec![b; ndims as usize])?
                .context("every node is in a mesh that fills the cube")?;
            // Pass my number forward along each axis; check what comes from behind.
            let ty = MsgType(300 + ndims * 2 + periodic as u32);
            for axis in 0..ndims as usize {
                if let Some(s) = pos.succ[axis] {
                    ensure!(
                        s == me || hamming(s, me) == 1,
                        "successor {s} not a cube neighbor"
                    );
                    node.send_value(s, ty, &me)?;
                }
                if let Some(pr) = pos.pred[axis] {
                    let (v, _) =
                        node.recv_value::<u32>(Select::from_node(pr, TypeSel::Is(ty.0)))?;
                    ensure!(v == pr, "mesh message from {pr} said {v}");
                }
            }
        }
    }
    // A mesh that uses only part of the cube: 3 x 1 in a cube of d >= 2.
    if d >= 2 {
        let pos = node.mesh(&[3], &[Boundary::Closed])?;
        ensure!(
            pos.is_some() == (me == 0 || me == 1 || me == 3),
            "3-mesh membership of {me}: {pos:?}"
        );
    }
    Ok(())
}
