//! Unit tests of a link's output side: lent memory in kept frames, and the queue's order.

use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

use super::*;
use crate::base::lent;

/// A written frame keeps lent memory as it is while its lender is inside its call (no
/// copy when the acknowledgement comes first), and a copy once the lender is returning
/// (`Transport::release_lent`).
#[test]
fn a_kept_frame_holds_lent_memory_until_its_lender_returns() {
    let (mut out, _peer) = idle_link();
    let loan = Bytes::from(vec![5u8; 64]);
    lent::register(&loan);
    let mut h = Header::control(Kind::Eager, 0, 1, 0, 0);
    h.frame_len = 64;
    h.total_len = 64;
    out.queue
        .push_back(OutFrame::new(&h, Parts::from(loan.clone()), None));
    assert!(matches!(out.flush(&mut Vec::new()), Ok(Flush::Empty)));
    let kept = |o: &LinkOut| o.kept[0].1.payload.iter().next().cloned().expect("payload");
    assert_eq!(kept(&out).as_ptr(), loan.as_ptr(), "kept as it is");
    out.unlend_kept();
    assert_eq!(kept(&out).as_ptr(), loan.as_ptr(), "still inside its call");
    lent::returning(loan.as_ptr() as usize, loan.len());
    out.unlend_kept();
    assert_ne!(kept(&out).as_ptr(), loan.as_ptr(), "a copy once it returns");
    assert_eq!(kept(&out), loan);
    lent::unregister(loan.as_ptr() as usize, loan.len());
}

/// A frame whose payload points into lent memory asks to be acknowledged at once (its
/// header says so on the wire); one of the transport's own memory does not.
#[test]
fn a_frame_of_lent_memory_asks_to_be_acknowledged_at_once() {
    let loan = Bytes::from(vec![6u8; 32]);
    let own = Bytes::from(vec![7u8; 32]);
    let mut h = Header::control(Kind::Eager, 0, 1, 0, 32);
    h.frame_len = 32;
    lent::register(&loan);
    let flagged = |p: &Bytes| {
        let f = OutFrame::new(&h, Parts::from(p.clone()), None);
        Header::decode(&f.header, 2, false)
            .expect("a valid header")
            .ack_now
    };
    assert!(flagged(&loan), "lent memory");
    assert!(!flagged(&own), "the transport's own memory");
    lent::unregister(loan.as_ptr() as usize, loan.len());
    assert!(!flagged(&loan), "no longer lent");
}

/// A link whose peer never reads (the queue is all these tests look at).
fn idle_link() -> (LinkOut, UnixStream) {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    ours.set_nonblocking(true).expect("non-blocking");
    (
        LinkOut::new(1, TcpStream::from(OwnedFd::from(ours))),
        theirs,
    )
}

/// An eager frame of `len` payload bytes from node `src` with `hops` links to go, its
/// message id naming it.
fn frame(id: u64, src: NodeId, hops: u32, len: usize) -> OutFrame {
    let mut h = Header::control(Kind::Eager, src, 5, id, len as u64);
    h.frame_len = len as u32;
    let mut f = OutFrame::new(&h, Parts::from(Bytes::from(vec![0u8; len])), None);
    f.hops = hops;
    f
}

fn order(out: &LinkOut) -> Vec<u64> {
    out.queue.iter().map(|f| f.head.msg_id).collect()
}

/// Frames leave furthest first, in arrival order among equals; a frame begun stays in
/// front, and a flow-control frame goes ahead of every frame not begun.
#[test]
fn frames_queue_furthest_first_and_in_arrival_order_among_equals() {
    let (mut out, _peer) = idle_link();
    for (id, hops) in [(1, 1), (2, 3), (3, 2), (4, 3), (5, 1)] {
        out.enqueue(frame(id, 0, hops, 64));
    }
    assert_eq!(order(&out), [2, 4, 3, 1, 5]);

    out.queue[0].written = 10; // frame 2 is being written: nothing goes before it
    out.enqueue(frame(6, 3, 4, 64));
    assert_eq!(order(&out), [2, 6, 4, 3, 1, 5]);

    let mut cts = Header::control(Kind::Cts, 0, 5, 7, 0);
    cts.frame_len = 0;
    out.enqueue(OutFrame::new(&cts, Parts::default(), None));
    out.enqueue(frame(8, 0, 9, 64));
    assert_eq!(
        order(&out),
        [2, 7, 8, 6, 4, 3, 1, 5],
        "urgent, then by distance"
    );
}

/// A long message's data frames (its rendezvous chunks: one source and destination, so one
/// distance on a link) keep their order among themselves while frames going further pass
/// the ones not begun; and every frame reaches the socket whole, in the queue's order.
#[test]
fn data_frames_keep_their_order_while_further_frames_pass_them() {
    use std::io::Read;
    let (mut out, mut peer) = idle_link();
    // Chunk `i` of message 10 from node 0 (its bytes all `i`), one link to go.
    let chunk = |i: u8| {
        let mut h = Header::control(Kind::Data, 0, 5, 10, 300);
        h.frame_len = 100;
        let mut f = OutFrame::new(&h, Parts::from(Bytes::from(vec![i; 100])), None);
        f.hops = 1;
        f
    };
    out.enqueue(chunk(0));
    out.enqueue(frame(20, 2, 3, 64));
    out.enqueue(chunk(1));
    out.enqueue(frame(21, 2, 3, 64));
    out.enqueue(chunk(2));
    assert_eq!(order(&out), [20, 21, 10, 10, 10]);
    let total: usize = out.queue.iter().map(|f| f.len()).sum();
    assert!(matches!(out.flush(&mut Vec::new()), Ok(Flush::Empty)));
    let mut wire = vec![0u8; total];
    peer.read_exact(&mut wire)
        .expect("the frames on the socket");
    let mut seen = Vec::new();
    let mut at = 0;
    while at < wire.len() {
        let head: &[u8; HEADER_LEN] = wire[at..at + HEADER_LEN].try_into().expect("a header");
        let h = Header::decode(head, 8, false).expect("a valid header");
        let body = &wire[at + HEADER_LEN..at + HEADER_LEN + h.body_len()];
        seen.push((h.kind, h.msg_id, body[0]));
        at += HEADER_LEN + h.body_len();
    }
    assert_eq!(
        seen,
        [
            (Kind::Eager, 20, 0),
            (Kind::Eager, 21, 0),
            (Kind::Data, 10, 0),
            (Kind::Data, 10, 1),
            (Kind::Data, 10, 2)
        ]
    );
}

/// No frame is passed by more than `OVERTAKE_MAX` bytes: a stream of frames going further
/// queues behind it once that much went ahead.
#[test]
fn a_frame_is_overtaken_by_at_most_overtake_max_bytes() {
    let (mut out, _peer) = idle_link();
    out.enqueue(frame(1, 0, 1, 64));
    let big = OVERTAKE_MAX / 3;
    for id in 2..=5 {
        out.enqueue(frame(id, 2, 2, big));
    }
    // Frames 2 and 3 passed frame 1 (2 × big ≤ OVERTAKE_MAX with headers); 4 would
    // exceed it.
    assert_eq!(order(&out), [2, 3, 1, 4, 5]);
    assert!(out.queue[2].overtaken <= OVERTAKE_MAX);
}

/// A connected pair of TCP sockets on loopback.
fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let a = TcpStream::connect(l.local_addr().expect("address")).expect("connect");
    let (b, _) = l.accept().expect("accept");
    (a, b)
}

/// A link that comes back on a new connection (`relink.rs`, `LinkOut::reset`) asks for its
/// congestion control again: the new socket starts with the system's.
#[test]
fn a_relinked_connection_asks_for_its_congestion_control_again() {
    use crate::transport::tcp::sockopt::congestion_of;
    let (first, _first_peer) = tcp_pair();
    let system = congestion_of(&first);
    // One the system does not use by default, so that the test sees it asked for.
    let want: &'static [&'static str] = if system == "reno" {
        &["cubic"]
    } else {
        &["reno"]
    };
    let mut out = LinkOut::new(1, first);
    out.use_congestion(want);
    assert_eq!(congestion_of(&out.stream), want[0]);
    let (second, _second_peer) = tcp_pair();
    assert_eq!(
        congestion_of(&second),
        system,
        "a new socket has the system's"
    );
    out.reset(second);
    assert_eq!(
        congestion_of(&out.stream),
        want[0],
        "asked again on the new connection"
    );
}
