//! Proptests of the link reader's frame parsing ([`LinkIn::read`]): valid frame streams
//! written in pieces come out as the same frames; random and mutated streams come out as
//! frames that encode back to a prefix of the input, then a protocol error or the end of
//! the stream — never a panic, a hang or an allocation beyond one frame's limit.
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

use super::{LinkIn, ReadError, ReadOutcome};
use crate::wire::frame::{strategy, Header, HEADER_LEN, MAX_FRAME_LEN};
use crate::wire::fuzz;

/// A link reading a socketpair, and the other end to write into.
fn link() -> (LinkIn, UnixStream) {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    ours.set_nonblocking(true).expect("non-blocking");
    (LinkIn::new(1, TcpStream::from(OwnedFd::from(ours))), theirs)
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
fn read_all(bytes: &[u8], num_nodes: u32, host: bool) -> (Vec<(Header, Bytes)>, End) {
    let (mut link, mut w) = link();
    // Inputs stay far below the socket buffer, so this does not block.
    w.write_all(bytes).expect("write");
    drop(w);
    let mut frames = Vec::new();
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
fn encode(frames: &[(Header, Bytes)]) -> Vec<u8> {
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
            let p: Vec<u8> = (0..h.frame_len)
                .map(|i| seed.wrapping_add(i as u8))
                .collect();
            (h, Bytes::from(p))
        });
        (Just(n), Just(host), prop::collection::vec(frame, 0..=8))
    })
}

/// What must hold whatever the input: the frames returned are valid and encode back to
/// the start of the input; a clean end means the whole input was frames.
fn check(input: &[u8], num_nodes: u32, host: bool) -> Result<(), TestCaseError> {
    let (got, end) = read_all(input, num_nodes, host);
    let again = encode(&got);
    prop_assert!(input.starts_with(&again), "frames that are not the input");
    for (h, _) in &got {
        prop_assert_eq!(Header::decode(&h.encode(), num_nodes, host), Ok(*h));
    }
    match end {
        End::Eof => prop_assert_eq!(again.len(), input.len()),
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
    ) {
        let bytes = encode(&sent);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let (mut link, mut w) = link();
        let mut got = Vec::new();
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
        prop_assert_eq!(got, sent);
    }

    /// Mutated valid streams (bit flips, truncation, extension, length fields overwritten).
    #[test]
    fn fuzz_link_mutated((n, host, sent) in frames(), muts in fuzz::mutations()) {
        check(&fuzz::mutated(&encode(&sent), &muts), n, host)?;
    }

    /// Random bytes, and random bytes after a valid frame.
    #[test]
    fn fuzz_link_random_bytes(
        (n, host, sent) in frames(),
        garbage in fuzz::bytes(300),
    ) {
        check(&garbage, n, host)?;
        let mut b = encode(&sent[..sent.len().min(1)]);
        b.extend_from_slice(&garbage);
        check(&b, n, host)?;
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
/// another thread, come out whole.
#[test]
fn large_frames_roundtrip() {
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
            let mut h = Header::control(crate::wire::frame::Kind::Eager, 1, 0, i as u64, 0);
            h.frame_len = len;
            h.total_len = len as u64;
            let p: Vec<u8> = (0..len).map(|j| (j % 251) as u8).collect();
            (h, Bytes::from(p))
        })
        .collect();
    let bytes = encode(&sent);
    let (mut link, mut w) = link();
    let writer = std::thread::spawn(move || w.write_all(&bytes).expect("write"));
    let mut got = Vec::new();
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
    assert_eq!(got, sent);
}
