//! Jobs of real TCP links inside one test process ([`tcp_job`]), and the transport tests
//! that need one.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hypercube_topology::{NodeId, Route};

use super::engine::relock;
use super::{TcpTransport, Tuning};
use crate::base::message::Select;
use crate::node::Node;
use crate::transport::Transport;

/// What one node of [`tcp_job`] runs before it finalizes.
pub(crate) type Program =
    fn(NodeId, &Node, &TcpTransport) -> Result<(), Box<dyn std::error::Error>>;

/// Run `program` on every node of an in-process job of dimension `dim` over real TCP links
/// (loopback sockets, one thread per node), then finalize every node. Panics with what
/// went wrong when a program fails or the job has not finalized within 30 s (a node stuck
/// in finalize is left behind: its thread ends with the test process).
pub(crate) fn tcp_job(dim: u32, program: Program) {
    tcp_job_tuned(dim, Tuning::default(), program);
}

/// [`tcp_job`] with every node's transport started with `tuning` (as if read from the
/// environment).
pub(crate) fn tcp_job_tuned(dim: u32, tuning: Tuning, program: Program) {
    let n = 1u32 << dim;
    let mut links: Vec<Vec<(NodeId, std::net::TcpStream)>> = (0..n).map(|_| Vec::new()).collect();
    for k in 0..dim {
        for a in (0..n).filter(|a| a & (1 << k) == 0) {
            let b = a | (1 << k);
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let dialed = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
            let (accepted, _) = listener.accept().unwrap();
            links[a as usize].push((b, dialed));
            links[b as usize].push((a, accepted));
        }
    }
    let addrs = vec![Some("127.0.0.1:0".parse().unwrap()); n as usize];
    let (tx, rx) = mpsc::channel();
    for (me, links) in (0..n).zip(links) {
        let t = TcpTransport::start(me, dim, links, addrs.clone(), false, tuning.clone());
        let t = Arc::new(t.unwrap());
        let tx = tx.clone();
        std::thread::spawn(move || {
            let node = Node::with_transport(t.clone());
            // One report per node: the program's error (sent before the node is dropped,
            // which finalizes and may then wait forever), or how finalize ended.
            let report = match program(me, &node, &t) {
                Err(e) => Err(format!("the program failed: {e}")),
                Ok(()) => node.finalize().map_err(|e| format!("finalize failed: {e}")),
            };
            let _ = tx.send((me, report));
        });
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut problems = Vec::new();
    let mut finalized = 0;
    for _ in 0..n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((_, Ok(()))) => finalized += 1,
            Ok((me, Err(e))) => problems.push(format!("node {me}: {e}")),
            Err(_) => break,
        }
    }
    if finalized + problems.len() < n as usize {
        problems.push(format!(
            "only {finalized} of {n} nodes finalized within 30 s"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A message on a longer route is not overtaken by its sender's `Fin`: node 0 sends 40
/// short messages to its neighbour node 1 the long way round (dimensions 1, 0, 1: through
/// nodes 2 and 3), while node 2 holds them up (its engine's state locked for 300 ms, so it
/// forwards nothing), and finalizes at once, its `Fin` going straight over the link it
/// shares with node 1; node 1 receives them all, whole and in order. (Before the `Fin`
/// carried the count of messages sent, node 1 took node 0 for finished when the `Fin`
/// arrived and failed the receive waiting for the detour with `PeerFinished`.)
#[test]
fn a_fin_does_not_overtake_messages_on_longer_routes() {
    const N: usize = 40;
    fn payload(i: usize) -> Vec<u8> {
        (0..1000usize).map(|j| (i * 7 + j) as u8).collect()
    }
    use std::sync::atomic::{AtomicBool, Ordering};
    /// Node 2 holds its state: node 0 may send (the nodes are threads of this process).
    static HELD: AtomicBool = AtomicBool::new(false);
    fn program(me: NodeId, _: &Node, t: &TcpTransport) -> Result<(), Box<dyn std::error::Error>> {
        let tag = 5;
        match me {
            0 => {
                let deadline = Instant::now() + Duration::from_secs(10);
                while !HELD.load(Ordering::SeqCst) {
                    if Instant::now() > deadline {
                        return Err("node 2 never held its state".into());
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                let detour = Route::from_dims(&[1, 0, 1]).ok_or("no route")?;
                let sends = (0..N)
                    .map(|i| t.isend_routed(1, tag, bytes::Bytes::from(payload(i)).into(), detour))
                    .collect::<crate::error::Result<Vec<_>>>()?;
                for s in sends {
                    t.wait_send(s)?;
                }
                Ok(())
            }
            1 => {
                for i in 0..N {
                    let r = t.post_recv(Select::internal(Some(0), tag))?;
                    let m = t.wait_recv(r, Some(Duration::from_secs(20)))?;
                    if m.data()[..] != payload(i) {
                        return Err(format!("message {i} from node 0 differs").into());
                    }
                }
                Ok(())
            }
            2 => {
                let held = t.engine.lock();
                HELD.store(true, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(300));
                drop(held);
                Ok(())
            }
            _ => Ok(()),
        }
    }
    tcp_job(2, program);
}

/// End to end over real sockets: a 1 MiB message received with `Node::recv_into` (and a
/// typed allgather of 1 MiB blocks) is read from the socket into the caller's memory — the
/// receiving link counts a landed frame — and arrives whole.
#[test]
fn large_messages_land_in_the_callers_memory() {
    const N: usize = 1 << 20;
    fn program(
        me: NodeId,
        node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let data: Vec<u8> = (0..N).map(|i| (i * 13 + me as usize) as u8).collect();
        if me == 0 {
            node.send(1, crate::MsgType(9), data)?;
        } else {
            let mut buf = vec![0u8; N];
            node.recv_into(Select::from_node(0, crate::TypeSel::Is(9)), &mut buf)?;
            if buf.iter().enumerate().any(|(i, &b)| b != (i * 13) as u8) {
                return Err("the message differs".into());
            }
        }
        let words: Vec<u32> = (0..N as u32 / 4).map(|i| i ^ (me << 28)).collect();
        let all = node.cube().allgather_slice(&words)?;
        let want: Vec<u32> = (0..2u32)
            .flat_map(|r| (0..N as u32 / 4).map(move |i| i ^ (r << 28)))
            .collect();
        if all != want {
            return Err("the allgather differs".into());
        }
        let landed = landed_frames(t);
        let want = if me == 1 { 2 } else { 1 };
        if landed < want {
            return Err(format!("node {me}: {landed} frames landed, {want} expected").into());
        }
        Ok(())
    }
    tcp_job(1, program);
}

/// The typed store-and-forward all-to-all lands every step (`alltoall/store_forward.rs`):
/// on 4 nodes with 64 KiB blocks, step 0's message of 128 KiB — one frame on loopback —
/// lands in two places (the block for this node in the result, the one it passes on in a
/// buffer), step 1's in the result; every node counts two landed frames, and the result
/// is whole. (A reader that stopped at the seam landed one.)
#[test]
fn store_and_forward_steps_land_in_two_places() {
    const M: usize = 16 << 10; // u32s per block: 64 KiB
    fn program(
        me: NodeId,
        node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let p = node.numnodes();
        let data: Vec<u32> = (0..p)
            .flat_map(|to| (0..M as u32).map(move |i| (me << 28) ^ (to << 24) ^ i))
            .collect();
        let mut out = vec![0u32; data.len()];
        let cube = node
            .cube()
            .with(crate::collectives::Algorithm::StoreForward);
        cube.alltoall_into(&data, &mut out)?;
        let want: Vec<u32> = (0..p)
            .flat_map(|from| (0..M as u32).map(move |i| (from << 28) ^ (me << 24) ^ i))
            .collect();
        if out != want {
            return Err(format!("node {me}: the all-to-all differs").into());
        }
        let landed = landed_frames(t);
        if landed < 2 {
            return Err(format!("node {me}: {landed} frames landed, 2 expected").into());
        }
        Ok(())
    }
    tcp_job(2, program);
}

/// The frames this node's links have read straight into a receive's memory.
fn landed_frames(t: &TcpTransport) -> u64 {
    t.engine
        .inputs
        .iter()
        .map(|i| relock(i.lock()).landed)
        .sum()
}

/// A message a few bytes past the eager limit still goes eagerly (`EAGER_SLACK`, for the
/// head bytes typed calls put in front of data of the limit's length): its send is done
/// when `isend` returns, before the receiver has posted anything; one longer than the
/// slack waits for a rendezvous. Both arrive whole.
#[test]
fn a_few_bytes_past_the_eager_limit_still_go_eagerly() {
    const LIMIT: usize = 64 << 10;
    fn program(
        me: NodeId,
        node: &Node,
        _: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let slack = super::protocol::EAGER_SLACK as usize;
        let sizes = [
            (LIMIT + 1, true),
            (LIMIT + slack, true),
            (LIMIT + slack + 1, false),
        ];
        if me == 0 {
            for (i, &(n, eager)) in sizes.iter().enumerate() {
                let s = node.isend(1, crate::MsgType(i as u32), vec![i as u8; n])?;
                let done = s.test()?;
                if done != eager {
                    return Err(format!("{n} bytes: done in isend = {done}").into());
                }
                // Node 1 receives the message only after this one.
                node.send(1, crate::MsgType(100 + i as u32), vec![])?;
                s.wait()?;
            }
        } else {
            for (i, &(n, _)) in sizes.iter().enumerate() {
                node.recv(Select::from_node(0, crate::TypeSel::Is(100 + i as u32)))?;
                let m = node.recv(Select::from_node(0, crate::TypeSel::Is(i as u32)))?;
                if m.data.len() != n || m.data.iter().any(|&b| b != i as u8) {
                    return Err(format!("the message of {n} bytes differs").into());
                }
            }
        }
        Ok(())
    }
    tcp_job(1, program);
}

/// A long eager message whose receive was posted with a landing is read from the socket
/// straight into it (`Mailbox::land_eager`), as on wires, where the eager limit is the
/// window: node 1 posts a landing receive of 1 MB, then asks node 0 for the message, which
/// comes eagerly (the limit raised to 4 MiB); the receiving link counts landed frames, the
/// message is whole, and the eager credit comes back (node 0 sends more eager messages than
/// its window holds: they would go by rendezvous otherwise).
#[test]
fn a_long_eager_message_lands_in_a_posted_receive() {
    long_eager_messages_land(false);
}

/// The same with the landing in two pieces (as the store-and-forward all-to-all's): the
/// credit of the whole message comes back, not of its first piece only (the message is
/// delivered as a view of that piece; counting its length, node 0's sends went by
/// rendezvous after the window's worth).
#[test]
fn a_long_eager_message_lands_in_two_pieces_and_its_whole_credit_comes_back() {
    long_eager_messages_land(true);
}

/// The two tests above: `split` lands each message's second half in a buffer of its own.
fn long_eager_messages_land(split: bool) {
    const N: usize = 1_000_000;
    fn program<const SPLIT: bool>(
        me: NodeId,
        node: &Node,
        t: &TcpTransport,
    ) -> Result<(), Box<dyn std::error::Error>> {
        // Three windows' worth: a credit leak of half of each message shows within it.
        let window = t.engine.tuning.eager_window as usize;
        let rounds = 3 * window / N + 2;
        for round in 0..rounds {
            let seed = round as u8;
            if me == 0 {
                node.recv(Select::from_node(1, crate::TypeSel::Is(2)))?;
                let data: Vec<u8> = (0..N).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect();
                let s = node.isend(1, crate::MsgType(1), data)?;
                if !s.test()? {
                    return Err(format!("round {round}: the message did not go eagerly").into());
                }
                s.wait()?;
                continue;
            }
            let mut buf = vec![0u8; N];
            let head = if SPLIT { N / 2 } else { N };
            let (a, b) = buf.split_at_mut(head);
            let sel = Select::from_node(0, crate::TypeSel::Is(1));
            // SAFETY: `buf` outlives the receive, which is waited for here.
            let r = unsafe {
                node.irecv_landing(sel, (a.as_mut_ptr(), head), (b.as_mut_ptr(), N - head))?
            };
            node.send(0, crate::MsgType(2), vec![])?;
            match r.wait()? {
                crate::node::landing::Landed::Here { .. } => {}
                crate::node::landing::Landed::Other(m) => {
                    return Err(format!("a message of {} bytes", m.data.len()).into())
                }
            }
            if buf
                .iter()
                .enumerate()
                .any(|(i, &b)| b != (i as u8).wrapping_mul(7) ^ seed)
            {
                return Err(format!("round {round}: the message differs").into());
            }
        }
        if me == 1 {
            let landed = landed_frames(t);
            if landed == 0 {
                return Err("no frame landed".into());
            }
        }
        Ok(())
    }
    let tuning = Tuning {
        eager_limit: 4 << 20,
        ..Tuning::default()
    };
    let program = if split {
        program::<true>
    } else {
        program::<false>
    };
    tcp_job_tuned(1, tuning, program);
}

/// [`crate::node::tests::a_dropped_receives_message_wakes_another_waiter`] over TCP.
#[test]
fn a_dropped_receives_message_wakes_another_waiter() {
    fn program(_: NodeId, node: &Node, _: &TcpTransport) -> Result<(), Box<dyn std::error::Error>> {
        Ok(crate::node::tests::a_dropped_receives_message_wakes_another_waiter(node)?)
    }
    tcp_job(0, program);
}

/// The links count their frames by kind (`link_stats.rs`): node 0 sends its neighbour 20
/// short messages (eager) and one of 1 MiB (past the 64 KiB eager limit: a request, a
/// clear-to-send back and one data frame); each side's counts say exactly that. Node 0
/// finalizes only after node 1 has counted (its finalize sends frames too).
#[test]
fn the_links_count_their_frames_by_kind() {
    use crate::wire::frame::Kind;
    fn program(me: NodeId, _: &Node, t: &TcpTransport) -> Result<(), Box<dyn std::error::Error>> {
        let counts = |t: &TcpTransport| t.link_counts().into_iter().next().ok_or("no link");
        let long = || bytes::Bytes::from(vec![7u8; 1 << 20]);
        match me {
            0 => {
                let mut sends = (0..20)
                    .map(|_| t.isend(1, 5, bytes::Bytes::from(vec![1u8; 1000]).into()))
                    .collect::<crate::error::Result<Vec<_>>>()?;
                sends.push(t.isend(1, 6, long().into())?);
                for s in sends {
                    t.wait_send(s)?;
                }
                let (peer, out, input) = counts(t)?;
                let got = [Kind::Eager, Kind::Rts, Kind::Data].map(|k| out.of(k));
                if peer != 1 || got != [20, 1, 1] || input.of(Kind::Cts) != 1 {
                    return Err(format!(
                        "node 0 wrote {got:?} (Eager, Rts, Data): {out:?}; read {input:?}"
                    )
                    .into());
                }
                let r = t.post_recv(Select::internal(Some(1), 7))?;
                t.wait_recv(r, Some(Duration::from_secs(20)))?;
                Ok(())
            }
            _ => {
                for tag in std::iter::repeat_n(5, 20).chain([6]) {
                    let r = t.post_recv(Select::internal(Some(0), tag))?;
                    t.wait_recv(r, Some(Duration::from_secs(20)))?;
                }
                let (_, out, input) = counts(t)?;
                let got = [Kind::Eager, Kind::Rts, Kind::Data].map(|k| input.of(k));
                if got != [20, 1, 1] || out.of(Kind::Cts) != 1 || input.calls == 0 {
                    return Err(format!(
                        "node 1 read {got:?} (Eager, Rts, Data): {input:?}; wrote {out:?}"
                    )
                    .into());
                }
                t.wait_send(t.isend(0, 7, Default::default())?)?;
                Ok(())
            }
        }
    }
    tcp_job(1, program);
}
