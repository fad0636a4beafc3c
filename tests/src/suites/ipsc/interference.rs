//! Non-interference (part 9) and the compatibility module's names and argument order.

use super::*;

/// Part 9: utilities called back to back with one user type, later calls' messages arriving
/// early, and user messages of that type pending — nothing is consumed wrongly.
pub(super) fn interference(node: &Node) -> Result<()> {
    let (me, d, p) = (node.mynode(), node.cubedim(), node.numnodes());
    let ty = 7;
    let dim = d as i32;
    node.send(me, MsgType(ty as u32), format!("self {me}"))?;
    let nb = me ^ 1;
    if d >= 1 {
        node.send(nb, MsgType(ty as u32), format!("from {me}"))?;
    }
    if me == 0 {
        // Everybody else is ahead: the later calls' messages reach node 0 early.
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let mut x = [me as f64 + 1.0];
    compat::gop(node, ty, &mut x, 1, '+', 0, dim, &mut [0.0])?;
    let mut buf = vec![0u8; 4 * p as usize];
    buf[..4].copy_from_slice(&me.to_le_bytes());
    let mut cnt = 0;
    compat::gcat(node, ty, &mut buf, 4 * p as i32, 4, &mut cnt, 0, dim)?;
    let mut b = [0u8; 8];
    if me == p - 1 {
        compat::gsendw(node, ty, &7.5f64.to_le_bytes(), 8, dim)?;
    } else {
        let mut c = 0;
        compat::grecvw(node, ty, &mut b, 8, &mut c, dim)?;
        ensure!(
            c == 8 && f64::from_le_bytes(b) == 7.5,
            "broadcast after gop and gcat"
        );
    }
    let mut m = [me as i64];
    compat::gop(node, ty, &mut m, 1, 'M', (p - 1) as i32, dim, &mut [0])?;
    if me == 0 {
        ensure!(x[0] == (p * (p + 1) / 2) as f64, "gop sum {x:?}");
        let want: Vec<u8> = (0..p).flat_map(|n| n.to_le_bytes()).collect();
        ensure!(cnt == 4 * p as i32 && buf == want, "gcat after gop");
    }
    if me == p - 1 {
        ensure!(m[0] == (p - 1) as i64, "gop max");
    }
    // The user's messages are still there, in order, untouched.
    let own = node.recv(Select::from_node(me, TypeSel::Is(ty as u32)))?;
    ensure!(
        own.data()[..] == *format!("self {me}").as_bytes(),
        "own user message"
    );
    if d >= 1 {
        let other = node.recv(Select::from_node(nb, TypeSel::Is(ty as u32)))?;
        ensure!(
            other.data()[..] == *format!("from {nb}").as_bytes(),
            "neighbor's user message"
        );
    }
    ensure!(node.iprobe(TypeSel::Any)?.is_none(), "a stray user message");
    Ok(())
}

/// The compatibility module: the seed's names and argument order.
pub(super) fn compat_api(node: &Node) -> Result<()> {
    let (me, d, p) = (node.mynode(), node.cubedim(), node.numnodes());
    for j in 0..128 {
        ensure!(
            compat::gray(j) as u32 == hypercube::topology::gray(j as u32),
            "gray"
        );
        ensure!(compat::ginv(compat::gray(j)) == j, "ginv");
    }
    ensure!(
        compat::xor(13, 4) == 9 && compat::between(0, 2, 6) && !compat::between(0, 1, 6),
        "xor/between"
    );
    let mut list = [7, 3, 4, 1, 6];
    let mut first = -1;
    compat::split(node, 5, &mut list, &mut first)?;
    if me == 0 {
        ensure!(
            first == 2 && list == [7, 3, 1, 4, 6],
            "split {list:?} {first}"
        );
    }
    ensure!(
        compat::split(node, 0, &mut list, &mut first).is_err(),
        "split of nothing"
    );
    // MESH: a 2-D mesh over the cube.
    let shape = mesh_shape_for(d, 2);
    let lindim = [shape[0] as i32, shape[1] as i32];
    let (mut coords, mut pred, mut succ, mut work) = ([0; 2], [0; 2], [0; 2], [0; 2]);
    compat::mesh(
        node,
        me as i32,
        2,
        &lindim,
        &[1, 0],
        &mut coords,
        &mut pred,
        &mut succ,
        &mut work,
    )?;
    let pos = node
        .mesh(&shape, &[Boundary::Periodic, Boundary::Closed])?
        .context("in mesh")?;
    ensure!(
        coords[0] == pos.coords[0] as i32 && succ[1] == pos.succ[1].map_or(-1, |v| v as i32),
        "mesh"
    );
    ensure!(work == lindim, "mesh work");
    let too_large = compat::mesh(
        node,
        0,
        1,
        &[2 * p as i32],
        &[0],
        &mut coords,
        &mut pred,
        &mut succ,
        &mut work,
    );
    ensure!(
        matches!(too_large, Err(Error::Topology(_))),
        "MESH: TOO LARGE"
    );
    // GSENDW / GRECVW on every subcube dimension, root 0 of each subcube.
    for dim in 0..=d as i32 {
        let data = pattern(dim as u32, 1, 20);
        if me % (1 << dim) == 0 {
            compat::gsendw(node, 5, &data, 20, dim)?;
        } else {
            let (mut buf, mut cnt) = ([0u8; 32], 0);
            compat::grecvw(node, 5, &mut buf, 32, &mut cnt, dim)?;
            ensure!(cnt == 20 && buf[..20] == data[..], "grecvw");
        }
    }
    // GOP with each operation character.
    for (op, want) in [
        ('+', (p * (p - 1) / 2) as f64),
        ('*', 0.0),
        ('M', (p - 1) as f64),
        ('m', 0.0),
    ] {
        let mut x = [me as f64, 0.0];
        compat::gop(node, 5, &mut x, 1, op, 0, d as i32, &mut [0.0])?;
        ensure!(me != 0 || x[0] == want, "gop {op}: {x:?}");
    }
    ensure!(
        compat::gop(node, 5, &mut [0.0f64], 1, '?', 0, d as i32, &mut [0.0]).is_err(),
        "op '?'"
    );
    // LSENDW / LRECVW.
    let (to, from) = ((me + 1) % p, (me + p - 1) % p);
    let data = pattern(me, 2, 40_000);
    compat::lsendw(node, 6, &data, 40_000, to as i32, 0)?;
    let mut buf = vec![0u8; 50_000];
    let (mut cnt4, mut src, mut pid) = (0i64, -1, -1);
    let r = compat::lrecvw(node, 6, &mut buf, 100, &mut cnt4, &mut src, &mut pid);
    ensure!(
        matches!(r, Err(Error::LrecvwTruncated { .. })) && cnt4 == 40_000,
        "lrecvw truncated"
    );
    compat::lrecvw(node, 6, &mut buf, 50_000, &mut cnt4, &mut src, &mut pid)?;
    ensure!(
        cnt4 == 40_000 && src == from as i32 && buf[..40_000] == pattern(from, 2, 40_000)[..],
        "lrecvw"
    );
    // SPGSNW / SPGRCW: node 0 to the odd nodes; the list is not destroyed.
    let odd: Vec<i32> = (0..p as i32).filter(|n| n % 2 == 1).collect();
    if me == 0 {
        let before = odd.clone();
        compat::spgsnw(node, 8, &data, 12, &odd, odd.len() as i32)?;
        ensure!(odd == before, "list destroyed");
    } else if me % 2 == 1 {
        let (mut buf, mut cnt) = ([0u8; 12], 0);
        compat::spgrcw(node, 8, &mut buf, 12, &mut cnt)?;
        ensure!(cnt == 12 && buf[..] == pattern(0, 2, 12)[..], "spgrcw");
    }
    // GCAT with the seed's buffer arguments, root p-1.
    let mut buf = vec![0u8; p as usize];
    buf[0] = me as u8;
    let mut cnt = 0;
    compat::gcat(
        node,
        9,
        &mut buf,
        p as i32,
        1,
        &mut cnt,
        (p - 1) as i32,
        d as i32,
    )?;
    if me == p - 1 {
        let want: Vec<u8> = (0..p).map(|k| (k ^ (p - 1)) as u8).collect();
        ensure!(
            cnt == p as i32 && buf == want,
            "gcat order for root {}: {buf:?}",
            p - 1
        );
    }
    Ok(())
}
