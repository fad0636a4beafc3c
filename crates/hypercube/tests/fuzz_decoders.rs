//! The public decoders fed random and mutated bytes (issue 12, item 3): the serde codec,
//! the launcher control messages (`read_blocking`, `check_len`, the hex of the
//! environment) and the PMI-1 lines. Properties: no panic, a typed error, no allocation
//! beyond a bound fixed in advance (a global allocator notes the largest one each thread
//! makes), and round trips of valid values. The crate-private decoders (frame header,
//! handshake, link reader) are fuzzed by unit tests beside them.
//!
//! `HYPERCUBE_FUZZ_CASES` sets the cases per property; `docs/reliability.md` gives the
//! long run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::net::{Ipv6Addr, SocketAddr, SocketAddrV6};
use std::time::{Duration, Instant};

use hypercube::wire::codec;
use hypercube::wire::control::{self, ToLauncher, ToNode, MAX_CONTROL_LEN};
use hypercube::Error;
use proptest::prelude::*;
use serde::{de::DeserializeOwned, Serialize};

// The helpers the crate's unit tests use; not all of them are needed here.
#[allow(dead_code)]
#[path = "../src/wire/fuzz.rs"]
mod fuzz;

// ---------------------------------------------------------------------------------------
// Allocation bound: the largest single allocation a closure makes on its thread.

/// The system allocator, noting the size of each request on the requesting thread.
struct Noting;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // try_with: the slot may be gone while a thread exits; nothing is measured then.
    let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Noting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Noting = Noting;

/// Run `f`; its result and the largest single allocation it made.
fn largest_alloc<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LARGEST.with(|l| l.set(0));
    let r = f();
    (r, LARGEST.with(|l| l.get()))
}

/// What decoding `len` bytes may allocate at once: serde preallocates at most 1 MiB for a
/// sequence whatever its length claims; beyond that, only what the bytes really hold.
fn codec_bound(len: usize) -> usize {
    (2 << 20) + 16 * len
}

// ---------------------------------------------------------------------------------------
// Strategies.

fn socket_addr() -> impl Strategy<Value = SocketAddr> {
    prop_oneof![
        (any::<[u8; 4]>(), any::<u16>()).prop_map(SocketAddr::from),
        (any::<[u16; 8]>(), any::<u16>()).prop_map(|(s, port)| (Ipv6Addr::from(s), port).into()),
        (any::<[u16; 8]>(), any::<u16>(), any::<u32>()).prop_map(|(s, port, scope)| {
            SocketAddr::V6(SocketAddrV6::new(Ipv6Addr::from(s), port, 0, scope))
        }),
    ]
}

fn to_launcher() -> impl Strategy<Value = ToLauncher> {
    prop_oneof![
        (any::<u32>(), socket_addr(), any::<[u8; 32]>()).prop_map(|(rank, listen, proof)| {
            ToLauncher::Hello {
                rank,
                listen,
                proof,
            }
        }),
        any::<u32>().prop_map(|rank| ToLauncher::Ready { rank }),
        (any::<u32>(), any::<String>())
            .prop_map(|(rank, waiting_for)| ToLauncher::Blocked { rank, waiting_for }),
        any::<u32>().prop_map(|rank| ToLauncher::Running { rank }),
    ]
}

fn to_node() -> impl Strategy<Value = ToNode> {
    prop_oneof![
        (prop::collection::vec(socket_addr(), 0..40), any::<bool>())
            .prop_map(|(addrs, host)| ToNode::Table { addrs, host }),
        Just(ToNode::Go),
        any::<String>().prop_map(|reason| ToNode::Abort { reason }),
    ]
}

/// A mixture of the types the codec carries: integers, strings, sequences, options, a
/// bool and a char (each with values the decoder must refuse when mutated).
type Mixed = (u64, String, Vec<u32>, Option<Vec<u8>>, bool, char, i16);

// ---------------------------------------------------------------------------------------
// The codec.

/// Decode `b` as a `T`: no panic, a codec error or a value that encodes back to exactly
/// `b` (when `canonical`: the decoder accepts only what the encoder writes), and no
/// allocation beyond [`codec_bound`].
fn check_decode<T: DeserializeOwned + Serialize>(
    b: &[u8],
    canonical: bool,
) -> Result<(), TestCaseError> {
    let (r, largest) = largest_alloc(|| codec::decode::<T>(b));
    prop_assert!(
        largest <= codec_bound(b.len()),
        "{largest} bytes allocated to decode {} bytes as {}",
        b.len(),
        std::any::type_name::<T>()
    );
    match r {
        Ok(v) if canonical => prop_assert_eq!(codec::encode(&v).expect("encode"), b),
        Ok(_) => {}
        Err(Error::Codec(m)) => prop_assert!(!m.is_empty()),
        Err(e) => prop_assert!(false, "not a codec error: {e}"),
    }
    Ok(())
}

/// `b` decoded as each of the types below.
fn check_decode_all(b: &[u8]) -> Result<(), TestCaseError> {
    check_decode::<ToNode>(b, true)?;
    check_decode::<ToLauncher>(b, true)?;
    check_decode::<Mixed>(b, true)?;
    check_decode::<Vec<u8>>(b, true)?;
    check_decode::<String>(b, true)?;
    check_decode::<Vec<String>>(b, true)?;
    check_decode::<Vec<Vec<u64>>>(b, true)?;
    check_decode::<Vec<SocketAddr>>(b, true)?;
    // A map's keys may arrive out of order or twice: it decodes, but not canonically.
    check_decode::<BTreeMap<String, Vec<u8>>>(b, false)?;
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_codec_roundtrip(m in any::<Mixed>(), l in to_launcher(), n in to_node()) {
        prop_assert_eq!(codec::decode::<Mixed>(&codec::encode(&m).unwrap()).unwrap(), m);
        prop_assert_eq!(codec::decode::<ToLauncher>(&codec::encode(&l).unwrap()).unwrap(), l);
        prop_assert_eq!(codec::decode::<ToNode>(&codec::encode(&n).unwrap()).unwrap(), n);
    }

    #[test]
    fn fuzz_codec_random_bytes(b in fuzz::bytes(200)) {
        check_decode_all(&b)?;
    }

    #[test]
    fn fuzz_codec_mutated(
        m in any::<Mixed>(),
        l in to_launcher(),
        n in to_node(),
        muts in fuzz::mutations(),
    ) {
        check_decode_all(&fuzz::mutated(&codec::encode(&m).unwrap(), &muts))?;
        check_decode_all(&fuzz::mutated(&codec::encode(&l).unwrap(), &muts))?;
        check_decode_all(&fuzz::mutated(&codec::encode(&n).unwrap(), &muts))?;
    }
}

/// The wire format is bincode 1's fixed-width little-endian one (what `bincode::serialize`
/// writes): pinned byte for byte, so a change of options shows here.
#[test]
fn codec_format_is_pinned() {
    assert_eq!(codec::encode(&ToNode::Go).unwrap(), [1, 0, 0, 0]);
    assert_eq!(
        codec::encode(&ToLauncher::Ready { rank: 0x0102_0304 }).unwrap(),
        [1, 0, 0, 0, 4, 3, 2, 1]
    );
    assert_eq!(
        codec::encode(&ToNode::Abort {
            reason: "ab".into()
        })
        .unwrap(),
        [2, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, b'a', b'b']
    );
    let addr: SocketAddr = "10.0.0.2:4000".parse().unwrap();
    let table = ToNode::Table {
        addrs: vec![addr],
        host: true,
    };
    assert_eq!(
        codec::encode(&table).unwrap(),
        [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2, 0xa0, 0x0f, 0, 0, 0, 0, 1]
    );
    assert_eq!(
        codec::decode::<ToNode>(&codec::encode(&table).unwrap()).unwrap(),
        table
    );
}

/// Length fields claiming up to 2^64 − 1 elements are refused at once, before anything of
/// that size is allocated.
#[test]
fn codec_refuses_huge_lengths_before_allocating() {
    for claim in [u64::MAX, u64::MAX / 2, 1 << 40, u32::MAX as u64, 1 << 24] {
        let mut b = claim.to_le_bytes().to_vec();
        b.extend_from_slice(&[0; 16]);
        let t = Instant::now();
        let (r, largest) = largest_alloc(|| {
            [
                codec::decode::<Vec<u8>>(&b).err(),
                codec::decode::<String>(&b).err(),
                codec::decode::<Vec<u64>>(&b).err(),
                codec::decode::<Vec<String>>(&b).err(),
                codec::decode::<BTreeMap<u64, u64>>(&b).err(),
            ]
        });
        for e in r {
            assert!(matches!(e, Some(Error::Codec(_))), "{claim}: {e:?}");
        }
        assert!(largest <= codec_bound(b.len()), "{claim}: {largest} bytes");
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "{claim}: {:?}",
            t.elapsed()
        );
        // The table of addresses: variant 0, then the claim.
        let mut t = vec![0u8; 4];
        t.extend_from_slice(&b);
        let (r, largest) = largest_alloc(|| codec::decode::<ToNode>(&t));
        assert!(matches!(r, Err(Error::Codec(_))), "{claim}: {r:?}");
        assert!(largest <= codec_bound(t.len()), "{claim}: {largest} bytes");
    }
}

/// The codec drops an IPv6 address's flow label and scope id (serde writes an
/// `SocketAddrV6` as address and port): a link-local address with a scope does not
/// survive the control table. Pinned so that a change is seen; changing it changes the
/// wire format.
#[test]
fn codec_drops_ipv6_scope() {
    let a = SocketAddr::V6(SocketAddrV6::new("fe80::1".parse().unwrap(), 4000, 7, 3));
    let back: SocketAddr = codec::decode(&codec::encode(&a).unwrap()).unwrap();
    let SocketAddr::V6(b) = back else {
        panic!("not V6")
    };
    assert_eq!(
        (b.ip(), b.port(), b.flowinfo(), b.scope_id()),
        (&"fe80::1".parse::<Ipv6Addr>().unwrap(), 4000, 0, 0)
    );
}

/// The control messages keep the scope id (`control::scoped`): a link-local listener
/// `fe80::1%3` reaches every node with its interface, in the `Hello` and in the `Table`;
/// an IPv4 address with a scope id is refused.
#[test]
fn control_messages_keep_ipv6_scope() {
    let a: SocketAddr = "[fe80::1%3]:4000".parse().unwrap();
    let SocketAddr::V6(v6) = a else {
        panic!("not V6")
    };
    assert_eq!(v6.scope_id(), 3);
    let hello = ToLauncher::Hello {
        rank: 1,
        listen: a,
        proof: [7; 32],
    };
    let back: ToLauncher = codec::decode(&codec::encode(&hello).unwrap()).unwrap();
    assert_eq!(back, hello);
    let ToLauncher::Hello { listen, .. } = back else {
        panic!("not Hello")
    };
    assert_eq!(listen.to_string(), "[fe80::1%3]:4000");
    let v4: SocketAddr = "10.0.0.2:4000".parse().unwrap();
    let table = ToNode::Table {
        addrs: vec![v4, a],
        host: false,
    };
    let back: ToNode = codec::decode(&codec::encode(&table).unwrap()).unwrap();
    assert_eq!(back, table);
    // 10.0.0.2:4000 with scope 1: not an address.
    let mut bad = codec::encode(&ToNode::Table {
        addrs: vec![v4],
        host: false,
    })
    .unwrap();
    let at = bad.len() - 5;
    bad[at] = 1;
    assert!(matches!(
        codec::decode::<ToNode>(&bad),
        Err(Error::Codec(_))
    ));
}

// ---------------------------------------------------------------------------------------
// Control messages.

/// Read one control message of type `T` from `b`: no panic; a bootstrap error (bad length
/// or contents) or an I/O error (the stream ended early); no allocation beyond the
/// message limit plus the codec's bound; on success, exactly the frame was consumed.
fn check_read<T: DeserializeOwned + Serialize>(b: &[u8]) -> Result<(), TestCaseError> {
    let mut r = b;
    let (got, largest) = largest_alloc(|| control::read_blocking::<T>(&mut r));
    prop_assert!(
        largest <= MAX_CONTROL_LEN as usize + codec_bound(b.len()),
        "{largest}"
    );
    match got {
        Ok(v) => {
            let f = control::frame(&v).expect("frame");
            prop_assert_eq!(&b[..b.len() - r.len()], &f[..]);
        }
        Err(Error::Bootstrap(m)) => prop_assert!(!m.is_empty()),
        Err(Error::Io { source, .. }) => {
            prop_assert_eq!(source.kind(), std::io::ErrorKind::UnexpectedEof)
        }
        Err(e) => prop_assert!(false, "unexpected error: {e}"),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_control_roundtrip(l in to_launcher(), n in to_node()) {
        let mut stream = control::frame(&l).unwrap();
        stream.extend(control::frame(&n).unwrap());
        let mut r = &stream[..];
        prop_assert_eq!(control::read_blocking::<ToLauncher>(&mut r).unwrap(), l);
        prop_assert_eq!(control::read_blocking::<ToNode>(&mut r).unwrap(), n);
        prop_assert!(r.is_empty());
    }

    #[test]
    fn fuzz_control_random_bytes(b in fuzz::bytes(200)) {
        check_read::<ToNode>(&b)?;
        check_read::<ToLauncher>(&b)?;
    }

    #[test]
    fn fuzz_control_mutated(l in to_launcher(), n in to_node(), muts in fuzz::mutations()) {
        check_read::<ToLauncher>(&fuzz::mutated(&control::frame(&l).unwrap(), &muts))?;
        check_read::<ToNode>(&fuzz::mutated(&control::frame(&n).unwrap(), &muts))?;
    }

    /// The length prefix overwritten with any value.
    #[test]
    fn fuzz_control_length_prefix(n in to_node(), len in prop_oneof![any::<u32>(), 0..4096u32]) {
        let mut b = control::frame(&n).unwrap();
        b[..4].copy_from_slice(&len.to_le_bytes());
        check_read::<ToNode>(&b)?;
    }

    #[test]
    fn fuzz_check_len(len in any::<u32>()) {
        match control::check_len(len) {
            Ok(n) => prop_assert!(len <= MAX_CONTROL_LEN && n == len as usize),
            Err(Error::Bootstrap(_)) => prop_assert!(len > MAX_CONTROL_LEN),
            Err(e) => prop_assert!(false, "unexpected error: {e}"),
        }
    }

    /// Hex: what `to_hex` writes `from_hex` reads back; whatever `from_hex` accepts is
    /// exactly hex (it reads back to the same text, lowercased).
    #[test]
    fn fuzz_hex(b in fuzz::bytes(64), s in "[0-9a-fA-F+\\- é]{0,16}", t in any::<String>()) {
        prop_assert_eq!(control::from_hex(&control::to_hex(&b)), Some(b));
        for s in [s, t] {
            if let Some(v) = control::from_hex(&s) {
                prop_assert_eq!(control::to_hex(&v), s.to_ascii_lowercase());
            }
        }
    }
}

/// A length prefix of 2^32 − 1 is refused before the body is allocated or read.
#[test]
fn control_refuses_huge_length_before_allocating() {
    for len in [u32::MAX, MAX_CONTROL_LEN + 1, 1 << 31] {
        let mut b = len.to_le_bytes().to_vec();
        b.extend_from_slice(&[0; 64]);
        let mut r = &b[..];
        let t = Instant::now();
        let (got, largest) = largest_alloc(|| control::read_blocking::<ToNode>(&mut r));
        assert!(matches!(got, Err(Error::Bootstrap(_))), "{len}: {got:?}");
        assert_eq!(r.len(), 64, "{len}: the body was read");
        assert!(largest < 4096, "{len}: {largest} bytes allocated");
        assert!(t.elapsed() < Duration::from_secs(1));
    }
}
