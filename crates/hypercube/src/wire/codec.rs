//! Serde values on the wire, public as `hypercube::codec`: what [`crate::Node::send_value`],
//! the serde forms of the collectives (`allgather_value`, `bcast_value`, ...) and of the
//! iPSC utilities (`gsend_value`, `gcat_values`) put in their messages. Use [`encode`] and
//! [`decode`] to build a message of your own from values the others decode alike.
//!
//! This is the only module that names bincode (pinned to 1.3.3 in the workspace), so a
//! change of codec touches one file; its byte format is pinned by
//! `tests/fuzz_decoders.rs`.

use serde::{de::DeserializeOwned, Serialize};

use crate::error::{Error, Result};

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
}
