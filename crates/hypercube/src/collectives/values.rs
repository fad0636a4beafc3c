//! Serde forms of the data-moving collectives: any `Serialize + DeserializeOwned` value,
//! encoded with [`crate::codec`] behind its type's fingerprint (8 bytes), carried by the
//! byte form (every algorithm of it applies) and decoded on arrival. A value of another type
//! than the receiver's is an [`Error::TypeMismatch`] naming the node it came from and the
//! types (also when the two decode from the same bytes, as `u64` and `f64`); a value that
//! does not decode is an [`Error::Codec`] naming the node and the type expected.

use bytes::Bytes;
use hypercube_topology::NodeId;
use serde::{de::DeserializeOwned, Serialize};

use super::{Algorithm, Subcube};
use crate::error::{Error, Result};
use crate::wire::codec;

impl Subcube<'_> {
    /// Broadcast a value of any size from `root`, which passes `Some(value)`; the others
    /// pass `None` (ignored if not). No length argument: a short encoding (where the
    /// automatic choice is Alg. 4.2) travels with a head byte in one broadcast; a longer
    /// one after a broadcast of its length, then with [`Subcube::bcast`] (the handle's
    /// algorithm). A root passing `None` is an error on every member (nobody hangs).
    pub fn bcast_value<V: Serialize + DeserializeOwned>(
        &self,
        root: NodeId,
        value: Option<V>,
    ) -> Result<V> {
        let at_root = self.node.mynode() == root;
        let bytes = match (&value, at_root) {
            (Some(v), true) => Some(Bytes::from(codec::encode_typed(v)?)),
            _ => None,
        };
        let nothing = || {
            format!("bcast_value: the root (node {root}) passed None; the root passes Some(value)")
        };
        let got = self.bcast_unsized(root, bytes.as_ref(), nothing)?;
        if at_root {
            if let Some(v) = value {
                return Ok(v);
            }
        }
        decode_from(&got, root)
    }

    /// Scatter values of any sizes: the root passes `Some(values)`, one per member by
    /// relative rank; every member returns its value. The others pass `None`. The root
    /// broadcasts the longest encoding first (automatic algorithm), then scatters blocks of that length (a
    /// length and the bytes, padded) with [`Subcube::scatter`]'s algorithm.
    pub fn scatter_values<V: Serialize + DeserializeOwned>(
        &self,
        root: NodeId,
        values: Option<Vec<V>>,
    ) -> Result<V> {
        let p = self.size() as usize;
        let at_root = self.node.mynode() == root;
        let mut encoded = Vec::new();
        // The root's width, as 8 bytes; `None` (the root had nothing to send) fails every
        // member alike.
        let mut head = None;
        if at_root {
            if let Some(vs) = values.as_ref().filter(|vs| vs.len() == p) {
                for v in vs {
                    encoded.push(codec::encode_typed(v)?);
                }
                let width = encoded.iter().map(|e| e.len() as u64 + 8).max();
                head = Some(Bytes::copy_from_slice(&width.unwrap_or(8).to_le_bytes()));
            }
        }
        let nothing = || {
            format!(
                "scatter_values: the root (node {root}) did not pass Some(values) with one \
                 value per member ({p})"
            )
        };
        // By the automatic choice: the handle's algorithm is the scatter's.
        let head = self
            .with(Algorithm::Auto)
            .bcast_unsized(root, head.as_ref(), nothing)?;
        let w = usize::try_from(read_u64(&head)).unwrap_or(usize::MAX);
        let blocks: Vec<Bytes> = encoded
            .iter()
            .map(|e| {
                let mut b = Vec::with_capacity(w);
                b.extend_from_slice(&(e.len() as u64).to_le_bytes());
                b.extend_from_slice(e);
                b.resize(w, 0);
                Bytes::from(b)
            })
            .collect();
        let mine = self.scatter(root, &blocks, w)?;
        let n = read_u64(&mine) as usize;
        let body = mine.get(8..8 + n).ok_or_else(|| {
            Error::Codec(format!(
                "scatter_values: a block from node {root} holds a bad length ({n} bytes)"
            ))
        })?;
        decode_from(body, root)
    }

    /// Gather values of any sizes: `root` returns them by relative rank (`Some`), the
    /// others `None` ([`Subcube::gatherv`]).
    pub fn gather_values<V: Serialize + DeserializeOwned>(
        &self,
        root: NodeId,
        value: &V,
    ) -> Result<Option<Vec<V>>> {
        match self.gatherv(root, Bytes::from(codec::encode_typed(value)?))? {
            Some(blocks) => Ok(Some(decode_all(&blocks, self.base())?)),
            None => Ok(None),
        }
    }

    /// All-gather values of any sizes: every member returns every member's value, by
    /// relative rank ([`Subcube::allgatherv`]). The one-line `comm.allgather(obj)`.
    pub fn allgather_value<V: Serialize + DeserializeOwned>(&self, value: &V) -> Result<Vec<V>> {
        decode_all(
            &self.allgatherv(Bytes::from(codec::encode_typed(value)?))?,
            self.base(),
        )
    }

    /// All-to-all of values of any sizes: `values[j]` goes to relative rank j; returns
    /// what each member sent to this one, by relative rank ([`Subcube::alltoallv`]).
    pub fn alltoall_values<V: Serialize + DeserializeOwned>(
        &self,
        values: Vec<V>,
    ) -> Result<Vec<V>> {
        let blocks = values
            .iter()
            .map(|v| codec::encode_typed(v).map(Bytes::from))
            .collect::<Result<Vec<_>>>()?;
        decode_all(&self.alltoallv(&blocks)?, self.base())
    }
}

/// The little-endian `u64` at the start of `b` (zero-padded if shorter).
pub(crate) fn read_u64(b: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let n = b.len().min(8);
    w[..n].copy_from_slice(&b[..n]);
    u64::from_le_bytes(w)
}

/// Decode a value that node `from` sent (with its type's fingerprint).
pub(crate) fn decode_from<V: DeserializeOwned>(bytes: &[u8], from: NodeId) -> Result<V> {
    codec::decode_typed(bytes, from)
}

/// Decode one value per member, by relative rank (`base` + rank is the sender).
fn decode_all<V: DeserializeOwned>(blocks: &[Bytes], base: NodeId) -> Result<Vec<V>> {
    blocks
        .iter()
        .enumerate()
        .map(|(j, b)| decode_from(b, base + j as u32))
        .collect()
}
