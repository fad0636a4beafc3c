//! Serde values on the wire, public as `hypercube::codec`: what [`crate::Node::send_value`],
//! the serde forms of the collectives (`allgather_value`, `bcast_value`, ...) and of the
//! iPSC utilities (`gsend_value`, `gcat_values`) put in their messages. Use [`encode`] and
//! [`decode`] to build a message of your own from values the others decode alike.
//!
//! This is the only module that names bincode (pinned to 1.3.3 in the workspace), so a
//! change of codec touches one file; its byte format is pinned by
//! `tests/fuzz_decoders.rs`.
//!
//! The serde forms of the collectives (`allgather_value`, `bcast_value`, ...) put a type
//! [`fingerprint`] (8 bytes) and the type's name in front of each encoded value, so that a value sent as one
//! type and decoded as another is an [`Error::TypeMismatch`] even when the two happen to
//! decode from the same bytes (`u64` and `f64`, two structs of the same fields). The plain
//! [`encode`] and [`decode`] (used by `send_value`, the iPSC `*_value` utilities and the
//! launcher's control messages) carry no fingerprint.

use serde::{de::DeserializeOwned, Serialize};

use crate::error::{Error, Result};
use hypercube_topology::NodeId;

/// Encode a value to bytes.
pub fn encode<T: Serialize + ?Sized>(value: &T) -> Result<Vec<u8>> {
    bincode::serialize(value).map_err(|e| Error::Codec(e.to_string()))
}

/// Elements a message may hold beyond one per byte: sequences of zero-sized elements
/// (`Vec<()>`) read no bytes, so the bound is the message's length plus this many
/// (decoding that many takes milliseconds).
pub(crate) const ZERO_SIZED_ELEMENTS: u64 = 1 << 20;

/// Decode a value from bytes, refusing trailing garbage, absurd lengths, and more
/// elements than the bytes can hold (a sequence of zero-sized elements claiming 2^64
/// entries is an error at once, not an endless loop: `wire/budget.rs`).
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    use bincode::Options;
    let left = std::cell::Cell::new(bytes.len() as u64 + ZERO_SIZED_ELEMENTS);
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_limit(bytes.len() as u64 + 64)
        .reject_trailing_bytes()
        .deserialize_seed(Budgeted::<T>::new(&left), bytes)
        .map_err(|e| Error::Codec(e.to_string()))
}

/// `T`, decoded under an element budget ([`super::budget::Counted`]).
struct Budgeted<'b, T> {
    left: &'b std::cell::Cell<u64>,
    t: std::marker::PhantomData<T>,
}

impl<'b, T> Budgeted<'b, T> {
    fn new(left: &'b std::cell::Cell<u64>) -> Self {
        Budgeted {
            left,
            t: std::marker::PhantomData,
        }
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::de::DeserializeSeed<'de> for Budgeted<'_, T> {
    type Value = T;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> std::result::Result<T, D::Error> {
        T::deserialize(super::budget::Counted::new(d, self.left))
    }
}

/// Bytes of the [`fingerprint`] in front of a value of the collectives' serde forms.
pub(crate) const FINGERPRINT_LEN: usize = 8;

/// The fingerprint of a type: the FNV-1a hash (64 bits) of its `std::any::type_name`.
/// Equal in every process of one program (the same build); two types of one name (a type
/// and its renamed copy in another version of a crate) share it.
pub fn fingerprint<V: ?Sized>() -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in std::any::type_name::<V>().bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The longest type name carried in front of a value (a longer one is cut at a character
/// boundary; the fingerprint still tells the types apart).
const MAX_NAME: usize = 255;

/// Encode a value behind its type's [`fingerprint`] (little-endian) and its type's name
/// (a length byte, then up to 255 bytes of `std::any::type_name`), as the collectives'
/// serde forms send it: the receiver of a value of another type names both types.
pub(crate) fn encode_typed<V: Serialize + ?Sized>(value: &V) -> Result<Vec<u8>> {
    let fp = fingerprint::<V>();
    let name = short_name(std::any::type_name::<V>());
    let mut out = Vec::with_capacity(FINGERPRINT_LEN + 1 + name.len() + 64);
    out.extend_from_slice(&fp.to_le_bytes());
    out.push(name.len() as u8);
    out.extend_from_slice(name.as_bytes());
    bincode::serialize_into(&mut out, value).map_err(|e| Error::Codec(e.to_string()))?;
    Ok(out)
}

/// `name` cut to at most [`MAX_NAME`] bytes at a character boundary.
fn short_name(name: &str) -> &str {
    let mut end = name.len().min(MAX_NAME);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// Decode a value [`encode_typed`] encoded, which `source_node` sent: another type's
/// fingerprint is an [`Error::TypeMismatch`] naming both types (the sender's name travels
/// with the value); bytes that do not decode are an [`Error::Codec`] naming the sender and
/// the type expected.
pub(crate) fn decode_typed<V: DeserializeOwned>(bytes: &[u8], source_node: NodeId) -> Result<V> {
    let expected = std::any::type_name::<V>();
    let short = || {
        Error::Codec(format!(
            "a value from node {source_node} is {} bytes long, too short for the type \
             fingerprint and name of a collective's value (decoding as {expected})",
            bytes.len()
        ))
    };
    let (head, rest) = bytes
        .split_first_chunk::<FINGERPRINT_LEN>()
        .ok_or_else(short)?;
    let (&name_len, rest) = rest.split_first().ok_or_else(short)?;
    let name_len = usize::from(name_len);
    if rest.len() < name_len {
        return Err(short());
    }
    let (name, body) = rest.split_at(name_len);
    let fp = u64::from_le_bytes(*head);
    if fp != fingerprint::<V>() {
        return Err(Error::TypeMismatch {
            source_node,
            expected: expected.to_string(),
            found: String::from_utf8_lossy(name).into_owned(),
        });
    }
    decode(body).map_err(|e| {
        Error::Codec(format!(
            "a value from node {source_node} does not decode as {expected}: {e}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_garbage() {
        let v = (3u32, String::from("hi"), vec![1.5f64, 2.5]);
        let b = encode(&v).unwrap();
        assert_eq!(decode::<(u32, String, Vec<f64>)>(&b).unwrap(), v);
        assert!(decode::<(u32, String, Vec<f64>)>(&b[..b.len() - 1]).is_err());
        // A length prefix claiming 2^60 elements must fail, not allocate.
        let mut evil = vec![0xffu8; 8];
        evil.extend_from_slice(&[0u8; 8]);
        assert!(decode::<Vec<u64>>(&evil).is_err());
    }

    /// Zero-sized elements read no bytes: 2^64 − 1 of them (in a Vec, a map, an option, an
    /// enum, a struct) fail at once on the element budget, not after centuries.
    #[test]
    fn zero_sized_elements_claiming_2_pow_64_fail_fast() {
        use std::collections::BTreeMap;
        #[derive(serde::Deserialize, Debug)]
        struct Empty {}
        #[derive(serde::Deserialize, Debug)]
        enum E {
            #[allow(dead_code)]
            A(Vec<()>),
        }
        let t0 = std::time::Instant::now();
        let huge = u64::MAX.to_le_bytes();
        let e = decode::<Vec<()>>(&huge).unwrap_err().to_string();
        assert!(e.contains("more elements"), "{e}");
        assert!(decode::<Vec<Empty>>(&huge).is_err());
        assert!(decode::<BTreeMap<(), ()>>(&huge).is_err());
        let mut some = vec![1u8];
        some.extend_from_slice(&huge);
        assert!(decode::<Option<Vec<()>>>(&some).is_err());
        let mut variant = 0u32.to_le_bytes().to_vec();
        variant.extend_from_slice(&huge);
        assert!(decode::<E>(&variant).is_err());
        let mut nested = 1u64.to_le_bytes().to_vec();
        nested.extend_from_slice(&huge);
        assert!(decode::<Vec<Vec<()>>>(&nested).is_err());
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            t0.elapsed()
        );
        // Honest values still decode, zero-sized elements included.
        let v: Vec<()> = vec![(); 1000];
        assert_eq!(decode::<Vec<()>>(&encode(&v).unwrap()).unwrap(), v);
        let m: BTreeMap<u32, Vec<u8>> = (0..100).map(|i| (i, vec![i as u8; 50])).collect();
        assert_eq!(
            decode::<BTreeMap<u32, Vec<u8>>>(&encode(&m).unwrap()).unwrap(),
            m
        );
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        enum F {
            A(u32),
            B { x: Vec<i16>, y: Option<String> },
            C,
        }
        let fs = vec![
            F::A(3),
            F::B {
                x: vec![-1, 2],
                y: Some("s".into()),
            },
            F::C,
        ];
        assert_eq!(decode::<Vec<F>>(&encode(&fs).unwrap()).unwrap(), fs);
    }

    #[test]
    fn same_size_types_are_told_apart() {
        let b = encode_typed(&7u64).unwrap();
        assert_eq!(decode_typed::<u64>(&b, 3).unwrap(), 7);
        // f64 decodes from any 8 bytes: only the fingerprint tells.
        match decode_typed::<f64>(&b, 3) {
            Err(Error::TypeMismatch {
                source_node,
                expected,
                found,
            }) => {
                assert_eq!(source_node, 3);
                assert_eq!(expected, "f64");
                assert_eq!(found, "u64");
            }
            other => panic!("{other:?}"),
        }
        // A user type this process never used: named all the same (its name travels).
        #[derive(Serialize)]
        struct Sample {
            key: u64,
        }
        let b = encode_typed(&Sample { key: 9 }).unwrap();
        let e = decode_typed::<u64>(&b, 1).unwrap_err().to_string();
        assert!(e.contains("Sample") && e.contains("u64"), "{e}");
        assert!(e.contains("node 1") && !e.contains("fingerprint"), "{e}");
        // A name cut in the middle of a character stays valid text.
        assert_eq!(short_name(&"é".repeat(200)).len(), 254);
        // Too short, and garbage after a right fingerprint.
        assert!(matches!(
            decode_typed::<u64>(&[1, 2], 0),
            Err(Error::Codec(_))
        ));
        let mut g = fingerprint::<u64>().to_le_bytes().to_vec();
        g.extend_from_slice(&[3, b'u', b'6', b'4', 1, 2, 3]);
        let e = decode_typed::<u64>(&g, 2).unwrap_err().to_string();
        assert!(e.contains("node 2") && e.contains("u64"), "{e}");
        // A name longer than the bytes that follow: too short, not a panic.
        g.truncate(8);
        g.push(200);
        assert!(matches!(decode_typed::<u64>(&g, 0), Err(Error::Codec(_))));
    }
}
