//! Serde forms of the broadcast (GSENDW/GRECVW) and of GCAT: values encoded with
//! [`crate::codec`], so a receiver needs neither a buffer length nor a byte layout.

use bytes::Bytes;
use hypercube_topology::NodeId;
use serde::{de::DeserializeOwned, Serialize};

use crate::error::{Error, Result};
use crate::node::Node;
use crate::wire::codec;

impl Node {
    /// [`Node::gsend`] of a serde value of any size: the others call
    /// [`Node::grecv_value`] with the same `dim`.
    #[doc(alias = "GSENDW")]
    pub fn gsend_value<V: Serialize + ?Sized>(&self, value: &V, dim: u32) -> Result<()> {
        self.gsend(codec::encode(value)?, dim)
    }

    /// [`Node::grecv`] of a value sent by [`Node::gsend_value`] (passed on to this node's
    /// subtree before it is decoded, so a decoding error here stops nobody else).
    #[doc(alias = "GRECVW")]
    pub fn grecv_value<V: DeserializeOwned>(&self, dim: u32) -> Result<V> {
        let b = self.grecv(dim)?;
        codec::decode(&b).map_err(|e| {
            Error::Codec(format!(
                "GRECVW: the broadcast value does not decode as {}: {e}",
                std::any::type_name::<V>()
            ))
        })
    }

    /// [`Node::gcat`] of serde values: every member of the root's subcube contributes one
    /// value (of any size). Returns the values in GCAT's order (by `node XOR root`:
    /// ascending node numbers when the root is 0) at `root`, and the values of this node's
    /// subtree elsewhere (the seed's output semantics). Each value travels as an 8-byte
    /// length and its encoding.
    #[doc(alias = "GCAT")]
    pub fn gcat_values<V: Serialize + DeserializeOwned>(
        &self,
        value: &V,
        root: NodeId,
        dim: u32,
    ) -> Result<Vec<V>> {
        let e = codec::encode(value)?;
        let mut framed = Vec::with_capacity(8 + e.len());
        framed.extend_from_slice(&(e.len() as u64).to_le_bytes());
        framed.extend_from_slice(&e);
        let all: Bytes = self.gcat(framed, root, dim)?;
        let mut out = Vec::new();
        let mut rest = &all[..];
        while !rest.is_empty() {
            let bad = || Error::Codec("GCAT: a framed value is truncated".into());
            let head = rest.get(..8).ok_or_else(bad)?;
            let n = u64::from_le_bytes(head.try_into().map_err(|_| bad())?) as usize;
            let body = rest.get(8..8usize.saturating_add(n)).ok_or_else(bad)?;
            out.push(codec::decode(body).map_err(|e| {
                Error::Codec(format!(
                    "GCAT: contribution {} does not decode as {}: {e}",
                    out.len(),
                    std::any::type_name::<V>()
                ))
            })?);
            rest = &rest[8 + n..];
        }
        Ok(out)
    }
}
