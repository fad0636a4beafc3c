//! Tests of the frame header: round trips, validation of what a peer may send (proptests
//! of random and mutated headers), the limits.

use proptest::prelude::*;

use super::strategy::*;
use super::*;
use crate::wire::fuzz;

/// What must hold of any 48 bytes: decoding does not panic, and a header it accepts is
/// valid and encodes back to exactly those bytes (the encoding is canonical).
fn check(b: &[u8; HEADER_LEN], num_nodes: u32, host: bool) -> Result<(), TestCaseError> {
    match Header::decode(b, num_nodes, host) {
        Ok(h) => {
            prop_assert_eq!(&h.encode(), b);
            let valid = |n: NodeId| n < num_nodes || (host && n == crate::HOST);
            prop_assert!(valid(h.src) && valid(h.dest));
            prop_assert!(h.frame_len <= MAX_FRAME_LEN);
            match h.kind {
                Kind::Eager => prop_assert_eq!(h.total_len, h.frame_len as u64),
                Kind::Data => prop_assert!(h.frame_len as u64 <= h.total_len),
                _ => prop_assert_eq!(h.frame_len, 0),
            }
        }
        Err(e) => prop_assert!(!e.is_empty()),
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_header_roundtrip(
        (n, host, h) in cube().prop_flat_map(|(n, host)| {
            (Just(n), Just(host), header(n, host, MAX_FRAME_LEN))
        })
    ) {
        prop_assert_eq!(Header::decode(&h.encode(), n, host), Ok(h));
    }

    #[test]
    fn fuzz_header_random_bytes(
        b in prop::array::uniform::<_, HEADER_LEN>(any::<u8>()),
        (n, host) in cube(),
    ) {
        check(&b, n, host)?;
    }

    #[test]
    fn fuzz_header_mutated(
        (n, host, h) in cube().prop_flat_map(|(n, host)| {
            (Just(n), Just(host), header(n, host, MAX_FRAME_LEN))
        }),
        muts in fuzz::mutations(),
    ) {
        // The header is a fixed 48 bytes: truncation and extension are padded or cut
        // back to 48 (the link reader's tests cover short and long streams).
        let mut b = fuzz::mutated(&h.encode(), &muts);
        b.resize(HEADER_LEN, 0);
        check(&b.try_into().expect("48 bytes"), n, host)?;
    }
}

#[test]
fn oversized_lengths_are_refused() {
    for frame_len in [MAX_FRAME_LEN + 1, 1 << 31, u32::MAX] {
        for kind in [Kind::Eager, Kind::Data] {
            let h = Header {
                kind,
                src: 0,
                dest: 1,
                tag: 0,
                msg_id: 0,
                total_len: u64::MAX,
                frame_len,
                route: Route::ECUBE,
                seq: 0,
                trailer: false,
                ack_now: false,
            };
            let e = Header::decode(&h.encode(), 2, false).unwrap_err();
            assert!(e.contains("exceeds the limit"), "{e}");
        }
    }
    // An Eager frame whose message length disagrees with its payload.
    let mut h = Header::control(Kind::Eager, 0, 1, 0, u64::MAX);
    h.frame_len = 8;
    assert!(Header::decode(&h.encode(), 2, false).is_err());
}

#[test]
fn roundtrip() {
    let h = Header {
        kind: Kind::Data,
        src: 3,
        dest: 5,
        tag: 77,
        msg_id: 1 << 40,
        total_len: 5 << 30,
        frame_len: 1 << 20,
        route: Route::from_dims(&[2, 0, 1]).unwrap(),
        seq: CONTROL_STREAM | 12,
        trailer: true,
        ack_now: true,
    };
    assert_eq!(Header::decode(&h.encode(), 8, false), Ok(h));
    // A trailer only on frames with a payload.
    let mut b = Header::control(Kind::Cts, 0, 1, 0, 0).encode();
    b[2] = 1;
    assert!(Header::decode(&b, 8, false)
        .unwrap_err()
        .contains("trailer"));
    b[2] = 2;
    assert!(Header::decode(&b, 8, false)
        .unwrap_err()
        .contains("acknowledged at once"));
    b[2] = 4;
    assert!(Header::decode(&b, 8, false)
        .unwrap_err()
        .contains("reserved"));
}

#[test]
fn rejects_garbage() {
    let mut b = [0u8; HEADER_LEN];
    assert!(Header::decode(&b, 8, false).is_err());
    b[0] = 1;
    b[8..12].copy_from_slice(&9u32.to_le_bytes());
    assert!(Header::decode(&b, 8, false)
        .unwrap_err()
        .contains("cube of 8"));
    b[8..12].copy_from_slice(&crate::HOST.to_le_bytes());
    assert!(Header::decode(&b, 8, false).is_err());
    assert!(Header::decode(&b, 8, true).is_ok());
    let mut h = Header::control(Kind::Rts, 0, 1, 0, 10).encode();
    h[32] = 1;
    assert!(Header::decode(&h, 8, false).is_err());
    // Routes: more than 8 hops, a hop beyond the cube, bits beyond the last hop.
    let mut h = Header::control(Kind::Rts, 0, 1, 0, 10).encode();
    h[1] = 9;
    assert!(Header::decode(&h, 8, false).unwrap_err().contains("route"));
    h[1] = 1;
    h[36] = 3;
    assert!(Header::decode(&h, 8, false).unwrap_err().contains("3-cube"));
    h[36] = 0x12;
    assert!(Header::decode(&h, 8, false).is_err());
    h[36] = 2;
    assert!(Header::decode(&h, 8, false).is_ok());
}

#[test]
fn never_panics_on_random_bytes() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..10_000 {
        let mut b = [0u8; HEADER_LEN];
        for v in b.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *v = (x & 7) as u8;
        }
        let _ = Header::decode(&b, 16, true);
    }
}
