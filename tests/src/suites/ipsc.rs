//! The iPSC utility suite (Moler & Scott 1986), one for both transports: every routine,
//! every root, every subcube dimension, empty and large payloads, every §8 error condition,
//! non-interference and the compat module. [`run`] is called by the node program
//! `ipsc_suite` (real processes over TCP, through the launcher, Hydra or Slurm) and by
//! `tests/tests/ipsc.rs` on a 5-cube of threads (`hypercube::transport::local`).

use anyhow::{bail, ensure, Context, Result};
use hypercube::ipsc::{compat, Op};
use hypercube::topology::{hamming, mesh_shape_for, subcube_base, Boundary};
use hypercube::{Error, MsgType, Node, NodeId, Select, TypeSel};

/// Deterministic bytes for a (node, tag, len).
fn pattern(a: u32, b: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|k| (a as usize * 131 + b as usize * 17 + k * 7 + (k >> 8)) as u8)
        .collect()
}

/// The roots of every subcube of dimension `dim`, as this node's subcube sees them.
fn roots(me: NodeId, dim: u32) -> impl Iterator<Item = NodeId> {
    let base = subcube_base(me, dim);
    (0..1u32 << dim).map(move |r| base | r)
}

fn high_bit(x: u32) -> u32 {
    1 << (31 - x.leading_zeros())
}

/// Members of `me`'s subtree in the broadcast/GOP tree rooted at `root` (parent =
/// me ^ highbit(me ^ root)).
fn gop_subtree(me: NodeId, root: NodeId, dim: u32) -> Vec<NodeId> {
    let dm = me ^ root;
    (0..1u32 << dim)
        .filter(|&dn| dm == 0 || dn & ((high_bit(dm) << 1) - 1) == dm)
        .map(|dn| dn ^ root)
        .collect()
}

/// Diffs (node ^ root) of `me`'s subtree in the GCAT tree (parent = me ^ lowbit(diff)),
/// ascending.
fn gcat_subtree_diffs(me: NodeId, root: NodeId, dim: u32) -> Vec<u32> {
    let dm = me ^ root;
    let low = if dm == 0 {
        1u64 << dim
    } else {
        u64::from(dm & dm.wrapping_neg())
    };
    (0..1u32 << dim)
        .filter(|&dn| u64::from(dn) & !(low - 1) == u64::from(dm))
        .collect()
}

fn gcat_piece(n: NodeId, dim: u32) -> Vec<u8> {
    pattern(n, dim, ((n as usize) * 7 + dim as usize) % 13)
}

/// GSENDW `want` from `root` on `dim`-subcubes: the root sends, every other member checks
/// what GRECVW gives it (`what` names the case in the error).
fn gsend_and_check(node: &Node, root: NodeId, dim: u32, want: &[u8], what: &str) -> Result<()> {
    if node.mynode() == root {
        node.gsend(want.to_vec(), dim)?;
    } else {
        let got = node.grecv(dim)?;
        ensure!(
            got[..] == want[..],
            "{what} dim {dim} root {root}: wrong data"
        );
    }
    Ok(())
}

fn broadcast(node: &Node) -> Result<()> {
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

fn gop(node: &Node) -> Result<()> {
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

fn gcat(node: &Node) -> Result<()> {
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

fn long(node: &Node) -> Result<()> {
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

fn sparse(node: &Node) -> Result<()> {
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

fn mesh(node: &Node) -> Result<()> {
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

/// Every §8 condition is a typed error with the seed's text, and nobody hangs.
fn errors(node: &Node) -> Result<()> {
    let (me, d, p) = (node.mynode(), node.cubedim(), node.numnodes());
    fn starts(e: &Error, seed: &str) -> Result<()> {
        ensure!(
            e.to_string().starts_with(seed),
            "error text {e} does not start with {seed}"
        );
        Ok(())
    }
    // Non-participants: refused before any communication.
    if d >= 1 {
        let other = me ^ (1 << (d - 1));
        match node.gcat(vec![1u8], other, d - 1) {
            Err(e @ Error::GcatNonParticipant { .. }) => {
                starts(&e, "GCAT: CALLED BY NON PARTICIPANT")?
            }
            r => bail!("gcat by a non participant: {r:?}"),
        }
        match node.gop(&mut [1.0f64], Op::Sum, other, d - 1) {
            Err(e @ Error::GopNonParticipant { .. }) => {
                starts(&e, "GOP: CALLED BY NON PARTICIPANT")?
            }
            r => bail!("gop by a non participant: {r:?}"),
        }
    }
    // GCAT: BUFFER LENGTH EXCEEDED at every node with children; the result is in the error.
    let want: Vec<u8> = gcat_subtree_diffs(me, 0, d)
        .into_iter()
        .map(|n| n as u8)
        .collect();
    let mut buf = [me as u8; 1];
    match node.gcat_into(&mut buf, 1, 0, d) {
        Ok(n) => ensure!(
            want.len() == 1 && n == 1 && buf[0] == me as u8,
            "gcat_into at {me}"
        ),
        Err(e @ Error::GcatBufferExceeded { .. }) => {
            starts(&e, "GCAT: BUFFER LENGTH EXCEEDED")?;
            if let Error::GcatBufferExceeded {
                needed,
                capacity,
                data,
            } = e
            {
                ensure!(capacity == 1 && needed == want.len() as u64, "sizes");
                ensure!(data.bytes()[..] == want[..], "recovered gcat data");
                ensure!(buf[0] == me as u8, "buffer changed");
            }
        }
        Err(e) => bail!("gcat_into: {e}"),
    }
    // GOP: LONG / SHORT MESSAGE: node p-1 is a leaf of the tree rooted at 0.
    if d >= 1 {
        let leaf = p - 1;
        let parent = leaf ^ (p / 2);
        for extra in [1i32, -1] {
            let n = if me == leaf { (4 + extra) as usize } else { 4 };
            let mut x = vec![1.0f64; n];
            let r = node.gop(&mut x, Op::Sum, 0, d);
            match (me == parent, extra, r) {
                (true, 1, Err(e @ Error::GopLongMessage { .. })) => {
                    starts(&e, "GOP: LONG MESSAGE")?
                }
                (true, -1, Err(e @ Error::GopShortMessage { .. })) => {
                    starts(&e, "GOP: SHORT MESSAGE")?
                }
                (false, _, Ok(())) => {}
                (_, _, r) => bail!("gop with a {extra:+} element at {me}: {r:?}"),
            }
            if me == 0 {
                let last = if extra == 1 { p } else { p - 1 };
                ensure!(
                    x[0] == p as f64 && x[3] == last as f64,
                    "gop result after mismatch: {x:?}"
                );
            }
        }
    }
    // GRECVW: MESSAGE TRUNCATED: the message is forwarded whole and handed back.
    let msg = pattern(0, 3, 100);
    if me == 0 {
        node.gsend(msg.clone(), d)?;
    } else {
        match node.grecv_into(&mut [0u8; 10], d) {
            Err(e @ Error::GrecvwTruncated { .. }) => {
                starts(&e, "GRECVW: MESSAGE TRUNCATED")?;
                if let Error::GrecvwTruncated { data, .. } = e {
                    ensure!(data.bytes()[..] == msg[..], "recovered broadcast");
                }
            }
            r => bail!("grecv_into with a small buffer: {r:?}"),
        }
    }
    // SPGRCW: TRUNCATED MESSAGE, from the last node to all others.
    let all: Vec<NodeId> = (0..p).collect();
    if me == p - 1 {
        node.spgsend(MsgType(90), msg.clone(), &all)?;
    } else {
        match node.spgrecv_into(MsgType(90), &mut [0u8; 99]) {
            Err(e @ Error::SpgrcwTruncated { .. }) => {
                starts(&e, "SPGRCW: TRUNCATED MESSAGE")?;
                if let Error::SpgrcwTruncated { data, .. } = e {
                    ensure!(data.bytes()[..] == msg[..], "recovered sparse message");
                }
            }
            r => bail!("spgrecv_into with a small buffer: {r:?}"),
        }
    }
    // LRECVW: TRUNCATED MESSAGE loses nothing; a user message of the same type is untouched.
    let (to, from) = ((me + 1) % p, (me + p - 1) % p);
    node.send(to, MsgType(77), &b"user"[..])?;
    node.lsend(to, MsgType(77), pattern(me, 77, 50_000))?;
    for _ in 0..2 {
        match node.lrecv_into(Some(from), MsgType(77), &mut [0u8; 1000]) {
            Err(e @ Error::LrecvwTruncated { needed: 50_000, .. }) => {
                starts(&e, "LRECVW: TRUNCATED MESSAGE")?
            }
            r => bail!("lrecv_into with a small buffer: {r:?}"),
        }
    }
    let mut big = vec![0u8; 60_000];
    let st = node.lrecv_into(None, MsgType(77), &mut big)?;
    ensure!(
        st.len() == 50_000 && big[..50_000] == pattern(from, 77, 50_000)[..],
        "long message after truncation"
    );
    let m = node.recv(Select::from_node(from, TypeSel::Is(77)))?;
    ensure!(
        &m.data()[..] == b"user",
        "user message of the long message's type"
    );
    // MESH: TOO LARGE.
    match node.mesh(&[1 << (d + 1)], &[Boundary::Closed]) {
        Err(e @ Error::Topology(_)) => starts(&e, "MESH: TOO LARGE")?,
        r => bail!("a too large mesh: {r:?}"),
    }
    // Bad arguments are refused before anything is sent.
    ensure!(
        matches!(node.gsend(vec![], d + 1), Err(Error::IpscArgument { .. })),
        "gsend dim"
    );
    ensure!(
        matches!(node.grecv(d + 1), Err(Error::IpscArgument { .. })),
        "grecv dim"
    );
    ensure!(
        matches!(
            node.gop(&mut [0u8], Op::Sum, p, d),
            Err(Error::InvalidNode { .. })
        ),
        "gop root"
    );
    ensure!(
        matches!(node.gcat(vec![], p, d), Err(Error::InvalidNode { .. })),
        "gcat root"
    );
    ensure!(
        matches!(
            node.lsend(0, MsgType(1 << 26), vec![]),
            Err(Error::IpscArgument { .. })
        ),
        "lsend type"
    );
    ensure!(
        matches!(
            node.lsend(p, MsgType(1), vec![]),
            Err(Error::InvalidNode { .. })
        ),
        "lsend dest"
    );
    ensure!(
        matches!(
            node.spgsend(MsgType(1), vec![], &[p]),
            Err(Error::InvalidNode { .. })
        ),
        "spgsend target"
    );
    ensure!(
        matches!(node.grecv(0), Err(Error::IpscArgument { .. })),
        "grecv dim 0"
    );
    Ok(())
}

/// Part 9: utilities called back to back with one user type, later calls' messages arriving
/// early, and user messages of that type pending — nothing is consumed wrongly.
fn interference(node: &Node) -> Result<()> {
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
fn compat_api(node: &Node) -> Result<()> {
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

/// One named check of the suite.
type Check = fn(&Node) -> Result<()>;

/// The checks in the order they run.
const CHECKS: [(&str, Check); 9] = [
    ("broadcast", broadcast),
    ("gop", gop),
    ("gcat", gcat),
    ("long", long),
    ("sparse", sparse),
    ("mesh", mesh),
    ("errors", errors),
    ("interference", interference),
    ("compat", compat_api),
];

/// The names of the checks, in the order [`run`] runs them.
pub const CHECK_NAMES: [&str; CHECKS.len()] = {
    let mut names = [""; CHECKS.len()];
    let mut i = 0;
    while i < CHECKS.len() {
        names[i] = CHECKS[i].0;
        i += 1;
    }
    names
};

/// Run the checks named in `only` (all when empty) on this node; every node of the cube
/// must call it with the same `only`. Returns the names of the passed checks; the first
/// failure is an error naming the check.
pub fn run(node: &Node, only: &[String]) -> Result<Vec<String>> {
    let want = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    let mut passed = Vec::new();
    for (name, check) in CHECKS {
        if want(name) {
            check(node).with_context(|| format!("check {name} failed"))?;
            passed.push(name.to_string());
        }
    }
    Ok(passed)
}
