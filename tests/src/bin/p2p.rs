//! Node program for the point-to-point tests: every call of the node API, checked across
//! real processes. Prints `OK <check>` per check; any failure exits non-zero.

use std::time::Duration;

use anyhow::{ensure, Context, Result};
use bytes::Bytes;
use hypercube::{Error, MsgType, Node, Parts, Select, TypeSel};

fn check(name: &str, r: Result<()>) -> Result<()> {
    r.with_context(|| format!("check {name} failed"))?;
    println!("OK {name}");
    Ok(())
}

fn payload(src: u32, dest: u32, i: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|k| (src as usize * 31 + dest as usize * 7 + i as usize * 13 + k) as u8)
        .collect()
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let p = node.numnodes();
    let d = node.cubedim();
    ensure!(p == 1 << d, "numnodes {p} != 2^{d}");
    check("identity", Ok(()))?;

    // Every node sends two messages to every other node (forwarded over up to d hops),
    // with types chosen so that type selection matters.
    check("all_pairs_forwarding", all_pairs(&node))?;
    check("type_selection_and_any", type_selection(&node))?;
    check("order_per_source_and_type", ordering(&node))?;
    check("nonblocking_and_probe", nonblocking(&node))?;
    check("truncation_keeps_message", truncation(&node))?;
    check("serde_values", values(&node))?;
    check("bad_arguments", bad_args(&node))?;
    check("self_send", self_send(&node))?;
    check("forwarding_while_busy", forwarding_while_busy(&node))?;
    check("multi_part_messages", multi_part(&node))?;
    Ok(())
}

/// Messages sent as several buffers (`Parts`, one gather write) arrive as
/// one contiguous message: eager and rendezvous sizes, more parts than one `writev` takes,
/// empty parts, to every other node (forwarded) and to itself.
fn multi_part(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    let shapes: [(usize, usize); 4] = [(3, 10), (600, 7), (5, 100_000), (40, 150_000)];
    let make = |src: u32, dest: u32, i: usize| -> Vec<Bytes> {
        let (n, len) = shapes[i];
        (0..n)
            .map(|k| {
                let l = if k % 4 == 1 { 0 } else { len + k % 3 };
                Bytes::from(payload(src, dest, (i * 1000 + k) as u32, l))
            })
            .collect()
    };
    let mut reqs = Vec::new();
    for dest in 0..p {
        for i in 0..shapes.len() {
            let parts = Parts::from(make(me, dest, i));
            reqs.push(node.isend(dest, MsgType(140 + i as u32), parts)?);
        }
    }
    for src in 0..p {
        for i in 0..shapes.len() {
            let m = node.recv(Select::from_node(src, TypeSel::Is(140 + i as u32)))?;
            let want: Vec<u8> = make(src, me, i).concat();
            ensure!(
                m.data()[..] == want[..],
                "multi-part message {i} from {src}: {} bytes, {} expected",
                m.data().len(),
                want.len()
            );
        }
    }
    for r in reqs {
        r.wait()?;
    }
    Ok(())
}

fn all_pairs(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    let mut reqs = Vec::new();
    for dest in (0..p).filter(|&x| x != me) {
        reqs.push(node.isend(dest, MsgType(100), payload(me, dest, 0, 100))?);
    }
    for _ in 1..p {
        let m = node.recv(TypeSel::Is(100))?;
        ensure!(m.msg_type() == MsgType(100));
        let want = payload(m.source(), me, 0, 100);
        ensure!(
            m.data()[..] == want[..],
            "payload from {} corrupted",
            m.source()
        );
    }
    for r in reqs {
        r.wait()?;
    }
    Ok(())
}

fn barrier(node: &Node, ty: u32) -> Result<()> {
    // A simple dissemination barrier over the cube links.
    let me = node.mynode();
    for k in 0..node.cubedim() {
        let peer = me ^ (1 << k);
        node.send(peer, MsgType(ty), b"")?;
        node.recv(Select::from_node(peer, TypeSel::Is(ty)))?;
    }
    Ok(())
}

fn type_selection(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    if p == 1 {
        return Ok(());
    }
    // Node 0 sends types 201, 202, 203 to the farthest node; it receives 203 first,
    // then any (202 — the oldest remaining), then 201 by exact type.
    let far = p - 1;
    if me == 0 {
        node.send(far, MsgType(201), b"a")?;
        node.send(far, MsgType(202), b"bb")?;
        node.send(far, MsgType(203), b"ccc")?;
    }
    if me == far {
        let st = node.probe(TypeSel::Is(203))?;
        ensure!(st.source() == 0 && st.len() == 3, "probe {st:?}");
        let m = node.recv(TypeSel::Is(203))?;
        ensure!(&m.data()[..] == b"ccc");
        // (Other nodes' barrier messages may be here too: select the source.)
        let m = node.recv(Select::from_node(0, TypeSel::Any))?;
        ensure!(
            m.msg_type() == MsgType(201) && &m.data()[..] == b"a",
            "any got {:?}",
            m.msg_type()
        );
        let m = node.recv(Select::from_node(0, TypeSel::Is(202)))?;
        ensure!(&m.data()[..] == b"bb");
        // Nothing else of those types is waiting.
        for t in 201..=203 {
            ensure!(
                node.iprobe(TypeSel::Is(t))?.is_none(),
                "type {t} still queued"
            );
        }
    }
    barrier(node, 299)
}

fn ordering(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    // Every node sends 200 numbered messages of two types, mixed sizes (eager and large),
    // to its antipode; the receiver checks per-(source, type) order.
    let anti = me ^ (p - 1);
    let n = 200u32;
    let mut reqs = Vec::new();
    for i in 0..n {
        let ty = 300 + (i % 2);
        let len = if i % 50 == 7 {
            200_000
        } else {
            8 + (i as usize % 5)
        };
        let mut v = payload(me, anti, i, len);
        v[..4].copy_from_slice(&i.to_le_bytes());
        reqs.push(node.isend(anti, MsgType(ty), v)?);
    }
    let mut next = [0u32, 1u32];
    for _ in 0..n {
        // Alternate exact-type and any-type receives.
        let m = node.recv(Select::from_node(anti, TypeSel::Any))?;
        let ty = m.msg_type().0 - 300;
        let i = u32::from_le_bytes(m.data()[..4].try_into()?);
        ensure!(
            i == next[ty as usize],
            "type {} got #{i}, expected #{}",
            ty + 300,
            next[ty as usize]
        );
        next[ty as usize] += 2;
    }
    for r in reqs {
        r.wait()?;
    }
    barrier(node, 399)
}

fn nonblocking(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    // The neighbor across the highest dimension (itself in a 0-cube).
    let peer = if p == 1 { me } else { me ^ (p >> 1) };
    let mut r = node.irecv(Select::from_node(peer, TypeSel::Is(400)))?;
    // Not here yet: test says so (the peer sends only after the barrier).
    ensure!(r.test()?.is_none(), "message arrived before it was sent");
    barrier(node, 401)?;
    let s = node.isend(peer, MsgType(400), Bytes::from(vec![me as u8; 3000]))?;
    let m = loop {
        if let Some(m) = r.test()? {
            break m;
        }
        std::thread::sleep(Duration::from_micros(50));
    };
    ensure!(m.source() == peer && m.len() == 3000 && m.data()[0] == peer as u8);
    while !s.test()? {
        std::thread::sleep(Duration::from_micros(50));
    }
    s.wait()?;
    // Blocking probe reports source, type and length without consuming.
    node.send(peer, MsgType(402), vec![1u8; 77])?;
    let st = node.probe(Select::from_node(peer, TypeSel::Is(402)))?;
    ensure!(st.source() == peer && st.msg_type() == MsgType(402) && st.len() == 77);
    let st2 = node.iprobe(TypeSel::Is(402))?.context("iprobe lost it")?;
    ensure!(st2.len() == 77);
    let m = node.recv(TypeSel::Is(402))?;
    ensure!(m.len() == 77 && m.source() == peer);
    // Cancel an unmatched receive.
    let mut c = node.irecv(TypeSel::Is(403))?;
    ensure!(c.cancel(), "cancel failed");
    // Dropping a receive request never loses the message bound to it.
    let r = node.irecv(Select::from_node(peer, TypeSel::Is(406)))?;
    node.send(peer, MsgType(406), b"not lost")?;
    std::thread::sleep(Duration::from_millis(30));
    drop(r);
    let m = node.recv(Select::from_node(peer, TypeSel::Is(406)))?;
    ensure!(&m.data()[..] == b"not lost");
    // A receive with a deadline times out with a typed error.
    match node.recv_timeout(TypeSel::Is(404), Duration::from_millis(20)) {
        Err(Error::Timeout { .. }) => {}
        other => anyhow::bail!("expected a timeout, got {other:?}"),
    }
    barrier(node, 405)
}

fn truncation(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    let src = (me + 1) % p;
    let dest = (me + p - 1) % p;
    node.send(dest, MsgType(500), payload(me, dest, 5, 1000))?;
    let mut small = [0u8; 10];
    match node.recv_into(TypeSel::Is(500), &mut small) {
        Err(Error::Truncated {
            needed, capacity, ..
        }) => {
            ensure!(
                needed == 1000 && capacity == 10,
                "needed {needed} capacity {capacity}"
            );
        }
        other => anyhow::bail!("expected truncation, got {other:?}"),
    }
    // Still queued: receive it properly.
    let mut big = vec![0u8; 4096];
    let st = node.recv_into(TypeSel::Is(500), &mut big)?;
    ensure!(st.len() == 1000 && st.source() == src);
    ensure!(big[..1000] == payload(src, me, 5, 1000)[..]);
    barrier(node, 501)
}

fn values(node: &Node) -> Result<()> {
    let (me, p) = (node.mynode(), node.numnodes());
    let dest = (me + 1) % p;
    let v: (u32, String, Vec<f64>) = (me, format!("node {me}"), vec![me as f64; 3]);
    node.send_value(dest, MsgType(600), &v)?;
    let ((from, s, xs), st) = node.recv_value::<(u32, String, Vec<f64>)>(TypeSel::Is(600))?;
    ensure!(st.source() == from && s == format!("node {from}") && xs == vec![from as f64; 3]);
    // Decoding the wrong type is an error, not a panic.
    node.send(dest, MsgType(601), b"\x01")?;
    ensure!(node.recv_value::<(u64, u64)>(TypeSel::Is(601)).is_err());
    barrier(node, 602)
}

fn bad_args(node: &Node) -> Result<()> {
    let p = node.numnodes();
    match node.send(p, MsgType(1), b"x") {
        Err(Error::InvalidNode { node: n, .. }) => ensure!(n == p as i64),
        other => anyhow::bail!("send to node {p}: {other:?}"),
    }
    match node.send(0, MsgType(0x8000_0000), b"x") {
        Err(Error::InvalidType { .. }) => {}
        other => anyhow::bail!("reserved type: {other:?}"),
    }
    ensure!(node.recv(TypeSel::Is(0x9000_0000)).is_err());
    Ok(())
}

fn self_send(node: &Node) -> Result<()> {
    let me = node.mynode();
    node.send(me, MsgType(700), b"me")?;
    let m = node.recv(Select::from_node(me, TypeSel::Is(700)))?;
    ensure!(&m.data()[..] == b"me");
    Ok(())
}

/// Node 0 and node 3 exchange messages whose e-cube route runs through node 1 while node 1's
/// program computes (no communication call) and node 2's program blocks in an unrelated
/// receive: forwarding must not depend on them. Node 1 computes right after a receive of its
/// own (the moment its progress thread has just stepped aside for the caller), for much
/// longer than the exchange takes when node 1 forwards while computing — so an exchange
/// that waited for node 1's next library call would take longer than node 1's computation.
fn forwarding_while_busy(node: &Node) -> Result<()> {
    if node.numnodes() < 4 {
        return Ok(());
    }
    // Node 1 computes this long; the exchange must end in half of it.
    const COMPUTE: Duration = Duration::from_millis(3000);
    let me = node.mynode();
    let rounds = 20u32;
    match me {
        0 => {
            node.send(1, MsgType(804), b"go")?;
            let t = std::time::Instant::now();
            for i in 0..rounds {
                node.send(3, MsgType(800), i.to_le_bytes().to_vec())?;
                let m = node.recv(Select::from_node(3, TypeSel::Is(801)))?;
                ensure!(m.data()[..] == (i + 1).to_le_bytes()[..]);
            }
            let took = t.elapsed();
            ensure!(
                took < COMPUTE / 2,
                "{rounds} round trips through node 1 took {took:?} while node 1 computed for \
                 {COMPUTE:?}: forwarding waited for node 1's program"
            );
            node.send(2, MsgType(802), b"done")?;
        }
        3 => {
            for i in 0..rounds {
                let m = node.recv(Select::from_node(0, TypeSel::Is(800)))?;
                ensure!(m.data()[..] == i.to_le_bytes()[..]);
                node.send(0, MsgType(801), (i + 1).to_le_bytes().to_vec())?;
            }
        }
        1 => {
            node.recv(Select::from_node(0, TypeSel::Is(804)))?;
            // Compute for a while without calling the library.
            let t = std::time::Instant::now();
            let mut x = 0u64;
            while t.elapsed() < COMPUTE {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            std::hint::black_box(x);
        }
        2 => {
            node.recv(Select::from_node(0, TypeSel::Is(802)))?;
        }
        _ => {}
    }
    barrier(node, 803)
}
