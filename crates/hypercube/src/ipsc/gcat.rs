//! Global concatenation, GCAT (seed §4 and the GCAT listing).
//!
//! Each member of the root's subcube contributes a byte string of any length (zero
//! included). With `diff = me XOR root`, a node's parent is `me XOR lowbit(diff)` and its
//! children are `me XOR b` for every link `b` below `lowbit(diff)` (all links at the root).
//! A node appends its children's partial results to its own contribution in ascending
//! link order and passes the result to its parent. So the root receives the contributions
//! ordered by `node XOR root`: in ascending node order when the root is 0, and "the
//! exclusive-or of the ascending order with the root" otherwise — position `k` holds the
//! contribution of node `k XOR root`. Every other node ends with the partial result of its
//! subtree (the seed's output semantics).
//!
//! The listing needs the types TYPE, TYPE+1, ..., TYPE+DIM−1 to keep the children apart;
//! here each child's message is received by its source, under one reserved tag per call.

use bytes::{Bytes, BytesMut};
use hypercube_topology::NodeId;

use super::checks::{check_dim, check_node};
use crate::base::parts::IntoPayload;
use crate::error::RecoveredData;
use crate::error::{Error, Result};
use crate::node::{Node, RecvRequest};

impl Node {
    /// Concatenate the contributions of every member of the root's subcube of dimension
    /// `dim` (seed §4, GCAT). Returns the concatenation at `root`, and this node's subtree's
    /// partial result elsewhere. Contributions may differ in length.
    ///
    /// The order at the root is by `node XOR root`: ascending node numbers when the root is 0.
    ///
    /// ```no_run
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?;
    /// let all = node.gcat(vec![node.mynode() as u8], 0, node.cubedim())?;
    /// if node.mynode() == 0 {
    ///     assert_eq!(all.len(), node.numnodes() as usize);
    ///     assert!(all.iter().enumerate().all(|(k, &b)| b as usize == k));
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::GcatNonParticipant`] (`GCAT: CALLED BY NON PARTICIPANT`) when this node is
    /// not in the `dim`-subcube of `root` (nothing was sent); [`Error::IpscArgument`] /
    /// [`Error::InvalidNode`] for a `dim` or `root` outside the cube.
    #[doc(alias = "GCAT")]
    pub fn gcat(&self, data: impl IntoPayload, root: NodeId, dim: u32) -> Result<Bytes> {
        check_dim(self, "GCAT", dim)?;
        check_node(self, "GCAT root", root)?;
        let me = self.mynode();
        let diff = me ^ root;
        if u64::from(diff) >> dim != 0 {
            return Err(Error::GcatNonParticipant { me, root, dim });
        }
        let tag = self.collective_tag(dim);
        let _call = crate::trace::Call::utility("GCAT", me, dim, Some(root), 0);
        // Children: links below lowbit(diff), ascending (all links at the root).
        let end = if diff == 0 {
            1u64 << dim
        } else {
            u64::from(diff & diff.wrapping_neg())
        };
        let mut children: Vec<RecvRequest> = Vec::new();
        let mut link = 1u64;
        while link < end {
            children.push(self.irecv_internal(Some(me ^ link as u32), tag)?);
            link <<= 1;
        }
        let own = data.into_payload();
        let result = if children.is_empty() {
            own
        } else {
            let mut parts = Vec::with_capacity(children.len());
            for req in children {
                parts.push(req.wait()?.into_data());
            }
            let total = own.len() + parts.iter().map(Bytes::len).sum::<usize>();
            let mut buf = BytesMut::with_capacity(total);
            buf.extend_from_slice(&own);
            for p in &parts {
                buf.extend_from_slice(p);
            }
            buf.freeze()
        };
        if diff != 0 {
            let parent = me ^ (diff & diff.wrapping_neg());
            self.send_internal(parent, tag, result.clone())?;
        }
        Ok(result)
    }

    /// [`Node::gcat`] in the seed's buffer form: this node's contribution is
    /// `buf[..msglen]`; the result replaces it in `buf` and its length (the seed's CNT) is
    /// returned.
    ///
    /// # Errors
    /// As [`Node::gcat`], and [`Error::GcatBufferExceeded`] (`GCAT: BUFFER LENGTH
    /// EXCEEDED`) when the result is longer than `buf`: the partial result was still passed
    /// on (the other nodes are not affected) and the whole result is returned inside the
    /// error; `buf` is left unchanged. `msglen > buf.len()` is [`Error::IpscArgument`].
    #[doc(alias = "GCAT")]
    pub fn gcat_into(
        &self,
        buf: &mut [u8],
        msglen: usize,
        root: NodeId,
        dim: u32,
    ) -> Result<usize> {
        if msglen > buf.len() {
            return Err(Error::IpscArgument {
                routine: "GCAT",
                detail: format!(
                    "the contribution length {msglen} exceeds the buffer length {}; pass \
                     msglen <= buf.len()",
                    buf.len()
                ),
            });
        }
        let result = self.gcat(&buf[..msglen], root, dim)?;
        if result.len() > buf.len() {
            return Err(Error::GcatBufferExceeded {
                needed: result.len() as u64,
                capacity: buf.len() as u64,
                data: RecoveredData(result),
            });
        }
        buf[..result.len()].copy_from_slice(&result);
        Ok(result.len())
    }
}
