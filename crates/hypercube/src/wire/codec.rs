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
//! [`fingerprint`] (8 bytes) in front of each encoded value, so that a value sent as one
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

/// Decode a value from bytes, refusing trailing garbage and absurd lengths.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    use bincode::Options;
    bincode::DefaultOptions::new()
        .with_fixint_encoding()
        .with_limit(bytes.len() as u64 + 64)
        .reject_trailing_bytes()
        .deserialize(bytes)
        .map_err(|e| Error::Codec(e.to_string()))
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

/// The types this process has fingerprinted, to name the sender's type in a mismatch when
/// this process knows it (in an SPMD program, it often does).
static NAMES: std::sync::Mutex<Vec<(u64, &'static str)>> = std::sync::Mutex::new(Vec::new());

/// Note the name of `V`'s fingerprint (once per type).
fn remember<V: ?Sized>(fp: u64) {
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if !names.iter().any(|(f, _)| *f == fp) && names.len() < 4096 {
        names.push((fp, std::any::type_name::<V>()));
    }
}

fn name_of(fp: u64) -> Option<&'static str> {
    let names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    names.iter().find(|(f, _)| *f == fp).map(|(_, n)| *n)
}

/// Encode a value behind its type's [`fingerprint`] (little-endian), as the collectives'
/// serde forms send it.
pub(crate) fn encode_typed<V: Serialize + ?Sized>(value: &V) -> Result<Vec<u8>> {
    let fp = fingerprint::<V>();
    remember::<V>(fp);
    let mut out = Vec::with_capacity(FINGERPRINT_LEN + 64);
    out.extend_from_slice(&fp.to_le_bytes());
    bincode::serialize_into(&mut out, value).map_err(|e| Error::Codec(e.to_string()))?;
    Ok(out)
}

/// Decode a value [`encode_typed`] encoded, which `source_node` sent: another type's
/// fingerprint is an [`Error::TypeMismatch`] naming both types where this process knows
/// the sender's; bytes that do not decode are an [`Error::Codec`] naming the sender and
/// the type expected.
pub(crate) fn decode_typed<V: DeserializeOwned>(bytes: &[u8], source_node: NodeId) -> Result<V> {
    let expected = std::any::type_name::<V>();
    let Some((head, body)) = bytes.split_first_chunk::<FINGERPRINT_LEN>() else {
        return Err(Error::Codec(format!(
            "a value from node {source_node} is {} bytes long, too short for the type \
             fingerprint of a collective's value (decoding as {expected})",
            bytes.len()
        )));
    };
    let fp = u64::from_le_bytes(*head);
    let want = fingerprint::<V>();
    if fp != want {
        remember::<V>(want);
        return Err(Error::TypeMismatch {
            source_node,
            expected: expected.to_string(),
            found: name_of(fp).map_or_else(
                || format!("another type (fingerprint {fp:#018x}, not one this node has used)"),
                |n| n.to_string(),
            ),
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
        // A type this process never used: named by its fingerprint.
        let mut b = b;
        b[..8].copy_from_slice(&0x1234u64.to_le_bytes());
        let e = decode_typed::<u64>(&b, 1).unwrap_err().to_string();
        assert!(e.contains("fingerprint 0x0000000000001234"), "{e}");
        assert!(e.contains("node 1"), "{e}");
        // Too short, and garbage after a right fingerprint.
        assert!(matches!(
            decode_typed::<u64>(&[1, 2], 0),
            Err(Error::Codec(_))
        ));
        let mut g = fingerprint::<u64>().to_le_bytes().to_vec();
        g.extend_from_slice(&[1, 2, 3]);
        let e = decode_typed::<u64>(&g, 2).unwrap_err().to_string();
        assert!(e.contains("node 2") && e.contains("u64"), "{e}");
    }
}
