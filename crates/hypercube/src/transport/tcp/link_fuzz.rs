//! Proptests of the link reader's frame parsing ([`LinkIn::read`]): valid frame streams
//! written in pieces come out as the same frames; random and mutated streams come out as
//! frames that encode back to a prefix of the input, then a protocol error or the end of
//! the stream — never a panic, a hang or an allocation beyond one frame's limit. Each runs
//! with the reader receiving frames whole (store-and-forward) and handing frames for other
//! nodes on in pieces (cut-through, from a random size on): the pieces join to the same
//! frames.
//!
//! The link's socket is one end of a Unix socketpair: the reader only calls recv(2) on it,
//! which any stream socket answers, and a socketpair costs no port (a million cases over
//! loopback TCP would exhaust them).

use std::io::Write;
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

use bytes::Bytes;
use proptest::prelude::*;

use super::{Item, LinkIn, ReadError, ReadOutcome};
use crate::wire::frame::{strategy, Header, HEADER_LEN, MAX_FRAME_LEN};
use crate::wire::fuzz;

/// A link of node 0 reading a socketpair (passing frames for others on from `cut_through`
/// payload bytes, if given), and the other end to write into.
pub(super) fn link_ct(cut_through: Option<usize>) -> (LinkIn, UnixStream) {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    ours.set_nonblocking(true).expect("non-blocking");
    let stream = TcpStream::from(OwnedFd::from(ours));
    (LinkIn::new(1, stream, 0, cut_through), theirs)
}

/// A link that receives every frame whole.
pub(super) fn link() -> (LinkIn, UnixStream) {
    link_ct(None)
}

/// Frames out of read items: whole frames as they are, a frame passed on in pieces
/// once its last piece came; `partial` holds one still arriving.
#[derive(Default)]
struct Joined {
    frames: Vec<(Header, Bytes)>,
    partial: Option<(Header, Vec<u8>)>,
}

impl Joined {
    fn extend(&mut self, items: Vec<Item>) {
        for item in items {
            match item {
                Item::Frame(h, p) => {
                    assert!(
                        self.partial.is_none(),
                        "a whole frame inside a piecewise one"
                    );
                    self.frames.push((h, p));
                }
                Item::Start(h, first) => {
                    assert!(self.partial.is_none(), "a start inside a piecewise frame");
                    assert!(first.len() < h.body_len(), "a whole frame in pieces");
                    self.partial = Some((h, first.to_vec()));
                }
                Item::Landed(h, _) => panic!("frame {} landed, but no receive named memory", h.seq),
                Item::More(more, last) => {
                    let (h, mut b) = self.partial.take().expect("a piece without its start");
                    b.extend_from_slice(&more);
                    assert!(b.len() <= h.body_len(), "a piece beyond the frame");
                    assert_eq!(last, b.len() == h.body_len(), "last flag");
                    if last {
                        self.frames.push((h, Bytes::from(b)));
                    } else {
                        self.partial = Some((h, b));
                    }
                }
            }
        }
    }

    /// The bytes of what came, as the sender wrote them (an unfinished frame too).
    fn encoded(&self) -> Vec<u8> {
        let mut out = encode(&self.frames);
        if let Some((h, b)) = &self.partial {
            out.extend_from_slice(&h.encode());
            out.extend_from_slice(b);
        }
        out
    }
}

/// Cut-through off, or from a random payload size on.
fn cut_through() -> impl Strategy<Value = Option<usize>> {
    prop_oneof![Just(None), (1usize..3000).prop_map(Some)]
}

/// How a read pass ended, for assertions (ReadError has no Debug).
#[derive(Debug)]
enum End {
    /// End of file after the last complete frame.
    Eof,
    /// A protocol error (the message).
    Protocol(String),
}

/// Write `bytes`, close the writer, and read until the reader reports the end or an error:
/// the frames it returned and how it ended. Panics on an I/O error (a socketpair has none)
/// or if the reader keeps returning without reaching the end (a hang, in the real engine).
fn read_all(bytes: &[u8], num_nodes: u32, host: bool, ct: Option<usize>) -> (Joined, End) {
    let (mut link, mut w) = link_ct(ct);
    // Inputs stay far below the socket buffer, so this does not block.
    w.write_all(bytes).expect("write");
    drop(w);
    let mut frames = Joined::default();
    for _ in 0..1000 {
        match link.read(num_nodes, host) {
            Ok(ReadOutcome::Frames(f)) => frames.extend(f),
            Ok(ReadOutcome::Eof(f)) => {
                frames.extend(f);
                return (frames, End::Eof);
            }
            Err(ReadError::Protocol(e)) => return (frames, End::Protocol(e)),
            Err(ReadError::Io(e)) => panic!("I/O error on a socketpair: {e}"),
        }
    }
    panic!("the reader did not reach the end of {} bytes", bytes.len());
}

/// The bytes of frames as a sender puts them on the wire.
pub(super) fn encode(frames: &[(Header, Bytes)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (h, p) in frames {
        out.extend_from_slice(&h.encode());
        out.extend_from_slice(p);
    }
    out
}

/// Valid frames: a cube, then up to 8 headers with payloads of up to 2 KiB (a pattern from
/// a seed: the reader never looks inside).
fn frames() -> impl Strategy<Value = (u32, bool, Vec<(Header, Bytes)>)> {
    strategy::cube().prop_flat_map(|(n, host)| {
        let frame = (strategy::header(n, host, 2048), any::<u8>()).prop_map(|(h, seed)| {
            let p: Vec<u8> = (0..h.body_len() as u32)
                .map(|i| seed.wrapping_add(i as u8))
                .collect();
            (h, Bytes::from(p))
        });
        (Just(n), Just(host), prop::collection::vec(frame, 0..=8))
    })
}

/// What must hold whatever the input: the frames returned are valid and encode back to
/// the start of the input; a clean end means the whole input was frames.
fn check(input: &[u8], num_nodes: u32, host: bool, ct: Option<usize>) -> Result<(), TestCaseError> {
    let (got, end) = read_all(input, num_nodes, host, ct);
    let again = got.encoded();
    prop_assert!(input.starts_with(&again), "frames that are not the input");
    let partial = got.partial.as_ref().map(|(h, _)| h);
    for h in got.frames.iter().map(|(h, _)| h).chain(partial) {
        prop_assert_eq!(Header::decode(&h.encode(), num_nodes, host), Ok(*h));
    }
    match end {
        End::Eof => {
            prop_assert!(got.partial.is_none(), "a clean end inside a frame");
            prop_assert_eq!(again.len(), input.len())
        }
        End::Protocol(e) => prop_assert!(!e.is_empty()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    /// Valid frames written in pieces of random sizes, with a read after each piece,
    /// come out as the same frames, then a clean end of file.
    #[test]
    fn fuzz_link_roundtrip(
        (n, host, sent) in frames(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        ct in cut_through(),
    ) {
        let bytes = encode(&sent);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let (mut link, mut w) = link_ct(ct);
        let mut got = Joined::default();
        let mut at = 0;
        for c in cuts {
            w.write_all(&bytes[at..c]).expect("write");
            at = c;
            match link.read(n, host) {
                Ok(ReadOutcome::Frames(f)) => got.extend(f),
                Ok(ReadOutcome::Eof(_)) => prop_assert!(false, "end of file before the end"),
                Err(_) => prop_assert!(false, "an error on valid frames"),
            }
        }
        drop(w);
        match link.read(n, host) {
            Ok(ReadOutcome::Eof(f)) => got.extend(f),
            _ => prop_assert!(false, "no clean end of file"),
        }
        prop_assert_eq!(link.bytes_read, bytes.len() as u64);
        prop_assert!(got.partial.is_none());
        prop_assert_eq!(got.frames, sent);
    }

    /// Mutated valid streams (bit flips, truncation, extension, length fields overwritten).
    #[test]
    fn fuzz_link_mutated(
        (n, host, sent) in frames(),
        muts in fuzz::mutations(),
        ct in cut_through(),
    ) {
        check(&fuzz::mutated(&encode(&sent), &muts), n, host, ct)?;
    }

    /// Random bytes, and random bytes after a valid frame.
    #[test]
    fn fuzz_link_random_bytes(
        (n, host, sent) in frames(),
        garbage in fuzz::bytes(300),
        ct in cut_through(),
    ) {
        check(&garbage, n, host, ct)?;
        let mut b = encode(&sent[..sent.len().min(1)]);
        b.extend_from_slice(&garbage);
        check(&b, n, host, ct)?;
    }
}

/// A header claiming more than a frame may carry is refused before anything is reserved
/// for it; one claiming the limit gets at most the limit reserved, and a stream that ends
/// inside it is an error.
#[test]
fn huge_frame_lengths_are_bounded() {
    let mut h = Header::control(crate::wire::frame::Kind::Data, 0, 1, 0, u64::MAX);
    for frame_len in [MAX_FRAME_LEN + 1, u32::MAX] {
        h.frame_len = frame_len;
        let (mut link, mut w) = link();
        w.write_all(&h.encode()).expect("write");
        let t = std::time::Instant::now();
        match link.read(2, false) {
            Err(ReadError::Protocol(e)) => assert!(e.contains("exceeds the limit"), "{e}"),
            _ => panic!("a frame of {frame_len} bytes was not refused"),
        }
        assert!(t.elapsed().as_secs() < 1);
        assert!(link.buf.capacity() <= 1 << 20, "{}", link.buf.capacity());
    }
    h.frame_len = MAX_FRAME_LEN;
    let mut b = h.encode().to_vec();
    b.extend_from_slice(&[7; 100]);
    let (mut link, mut w) = link();
    w.write_all(&b).expect("write");
    drop(w);
    let end = loop {
        match link.read(2, false) {
            Ok(ReadOutcome::Frames(f)) if f.is_empty() => continue,
            Err(ReadError::Protocol(e)) => break e,
            _ => panic!("a truncated frame was not refused"),
        }
    };
    assert!(end.contains("middle of a frame"), "{end}");
    assert!(link.buf.capacity() <= 2 * (HEADER_LEN + MAX_FRAME_LEN as usize));
}

/// Frames of the largest size, and around the reader's 64 KiB read size, written by
/// another thread, come out whole — received whole, and passed on in pieces (node 1's
/// frames pass through node 0 from 1 KiB on).
#[test]
fn large_frames_roundtrip() {
    large_frames(None);
    large_frames(Some(1024));
}

fn large_frames(ct: Option<usize>) {
    let sizes = [
        MAX_FRAME_LEN,
        (64 << 10) - 40,
        64 << 10,
        (64 << 10) + 1,
        0,
        1,
    ];
    let sent: Vec<(Header, Bytes)> = sizes
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            // Alternately for this node and for another one.
            let dest = (i % 2) as u32;
            let mut h =
                Header::control(crate::wire::frame::Kind::Eager, 1 - dest, dest, i as u64, 0);
            h.frame_len = len;
            h.total_len = len as u64;
            let p: Vec<u8> = (0..len).map(|j| (j % 251) as u8).collect();
            (h, Bytes::from(p))
        })
        .collect();
    let bytes = encode(&sent);
    let (mut link, mut w) = link_ct(ct);
    let writer = std::thread::spawn(move || w.write_all(&bytes).expect("write"));
    let mut got = Joined::default();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match link.read(2, false) {
            Ok(ReadOutcome::Frames(f)) if f.is_empty() => {
                std::thread::sleep(std::time::Duration::from_millis(1))
            }
            Ok(ReadOutcome::Frames(f)) => got.extend(f),
            Ok(ReadOutcome::Eof(f)) => {
                got.extend(f);
                break;
            }
            Err(_) => panic!("an error on valid frames"),
        }
        assert!(std::time::Instant::now() < deadline, "stuck");
    }
    writer.join().expect("writer");
    assert!(got.partial.is_none());
    assert_eq!(got.frames, sent);
}

/// A whole frame's payload of up to `COPY_BELOW` bytes is copied out of the read buffer,
/// so that it holds no one else's memory (a small message waiting to be received does not
/// keep the reader's 64 KiB buffer alive); a longer one is a view into the buffer, which
/// small ones read with it in one `recv` would otherwise share.
#[test]
fn small_payloads_are_copied_out_of_the_read_buffer() {
    use super::COPY_BELOW;
    let sent: Vec<(Header, Bytes)> = [8, COPY_BELOW + 1, COPY_BELOW]
        .iter()
        .enumerate()
        .map(|(i, &len)| {
            let mut h = Header::control(crate::wire::frame::Kind::Eager, 1, 0, i as u64, 0);
            h.frame_len = len as u32;
            h.total_len = len as u64;
            (h, Bytes::from(vec![i as u8; len]))
        })
        .collect();
    let (mut link, mut w) = link();
    w.write_all(&encode(&sent)).expect("write");
    drop(w);
    let mut got = Vec::new();
    for _ in 0..1000 {
        match link.read(2, false) {
            Ok(ReadOutcome::Frames(f)) => got.extend(f),
            Ok(ReadOutcome::Eof(f)) => {
                got.extend(f);
                break;
            }
            Err(_) => panic!("an error on valid frames"),
        }
    }
    let payloads: Vec<Bytes> = got
        .into_iter()
        .map(|i| match i {
            Item::Frame(_, p) => p,
            _ => panic!("a frame for this node passed on"),
        })
        .collect();
    assert_eq!(
        payloads,
        sent.iter().map(|f| f.1.clone()).collect::<Vec<_>>()
    );
    assert!(payloads[0].is_unique(), "8 bytes: a copy of their own");
    assert!(
        payloads[2].is_unique(),
        "COPY_BELOW bytes: a copy of their own"
    );
}
