//! The host process in the utilities (seed §2, §3, §4: root `-32768`). The host is
//! [`crate::HOST`], linked to node 0 (`hcrun --host PROGRAM`).
//!
//! - **Broadcast from the host** (§2: "If the host is the root, it just uses SENDMSG to send
//!   the message to any one of the receiving processes"; a node that receives from the host
//!   "sends it on to all of its neighbors"). Here the host sends to the *lowest* node of the
//!   target subcube, so every receiver knows which node enters the message; that node then
//!   broadcasts it on the subcube with the spanning tree of [`Node::gsend`].
//! - **GOP and GCAT to the host** (§3: "If root is specified as the host, then the message
//!   is accumulated in the lowest numbered node and then sent on to the host (with the same
//!   TYPE ...)"). The nodes run GOP/GCAT with the subcube's lowest node as root; that node
//!   sends the result to the host with the caller's message type, which the host receives
//!   like any message ([`Node::gop_result`] decodes GOP's vector).

use bytes::Bytes;
use hypercube_topology::{subcube_base, NodeId};

use super::checks::check_dim;
use crate::base::ids::HOST;
use crate::base::message::{MsgType, Select, TypeSel};
use crate::base::parts::IntoPayload;
use crate::collectives::Pod;
use crate::error::{Error, Result};
use crate::node::Node;

fn need_host(node: &Node, routine: &'static str) -> Result<()> {
    if !node.is_host() {
        return Err(Error::IpscArgument {
            routine,
            detail: "only the host process calls this; nodes call the node side".into(),
        });
    }
    Ok(())
}

fn entry_base(node: &Node, routine: &'static str, entry: NodeId, dim: u32) -> Result<NodeId> {
    if dim > node.cubedim() {
        return Err(Error::IpscArgument {
            routine,
            detail: format!(
                "subcube dimension {dim} exceeds the cube dimension {}",
                node.cubedim()
            ),
        });
    }
    if entry >= node.numnodes() {
        return Err(Error::InvalidNode {
            node: i64::from(entry),
            what: format!("{routine} subcube (cube of dimension {})", node.cubedim()),
            first: 0,
            last: node.numnodes() - 1,
        });
    }
    Ok(subcube_base(entry, dim))
}

impl Node {
    /// Host side of a broadcast (seed §2, GSENDW with the host as root): send `data` with
    /// message type `ty` into the subcube of dimension `dim` that contains node `entry`;
    /// its nodes receive it with [`Node::grecv_from_host`].
    #[doc(alias = "GSENDW")]
    pub fn gsend_from_host(
        &self,
        ty: MsgType,
        data: impl IntoPayload,
        entry: NodeId,
        dim: u32,
    ) -> Result<()> {
        need_host(self, "GSENDW")?;
        let base = entry_base(self, "GSENDW", entry, dim)?;
        self.send(base, ty, data)
    }

    /// Node side of a broadcast from the host (seed §2, GRECVW): every node of this node's
    /// subcube of dimension `dim` calls it; the subcube's lowest node takes the host's
    /// message of type `ty` and broadcasts it on. Returns the message.
    #[doc(alias = "GRECVW")]
    pub fn grecv_from_host(&self, ty: MsgType, dim: u32) -> Result<Bytes> {
        check_dim(self, "GRECVW", dim)?;
        let base = subcube_base(self.mynode(), dim);
        if self.mynode() == base {
            let m = self.recv(Select::from_node(HOST, TypeSel::Is(ty.0)))?;
            let data = m.into_data();
            if dim > 0 {
                self.gsend(data.clone(), dim)?;
            }
            Ok(data)
        } else {
            self.grecv(dim)
        }
    }

    /// Node side of GOP with the host as root (seed §3, `ROOT = -32768`): the vectors of the
    /// subcube of dimension `dim` are combined at its lowest node, which sends the result to
    /// the host with message type `ty`. On return `x` holds the seed's partial results
    /// (the full result at the lowest node).
    #[doc(alias = "GOP")]
    pub fn gop_to_host<'a, T: Pod>(
        &self,
        x: &mut [T],
        op: impl Into<crate::collectives::Op<'a, T>>,
        ty: MsgType,
        dim: u32,
    ) -> Result<()> {
        check_dim(self, "GOP", dim)?;
        let base = subcube_base(self.mynode(), dim);
        self.gop(x, op, base, dim)?;
        if self.mynode() == base {
            self.send(HOST, ty, crate::collectives::element::encode(x))?;
        }
        Ok(())
    }

    /// Host side of GOP: receive the result of type `ty` (from the lowest node of the
    /// subcube that ran [`Node::gop_to_host`]) as a vector of `T`.
    #[doc(alias = "GOP")]
    pub fn gop_result<T: Pod>(&self, ty: MsgType) -> Result<(NodeId, Vec<T>)> {
        need_host(self, "GOP")?;
        let m = self.recv(TypeSel::Is(ty.0))?;
        let bytes = m.data();
        if T::WIRE_SIZE == 0 || bytes.len() % T::WIRE_SIZE != 0 {
            return Err(Error::IpscArgument {
                routine: "GOP",
                detail: format!(
                    "the result from node {} is {} bytes, not a whole number of {}-byte {} \
                     elements; the host and the nodes must use the same element type",
                    m.source(),
                    bytes.len(),
                    T::WIRE_SIZE,
                    std::any::type_name::<T>()
                ),
            });
        }
        let v = crate::collectives::element::decode(bytes, None, "GOP")?;
        Ok((m.source(), v))
    }

    /// Node side of GCAT with the host as root (seed §4): the pieces of the subcube of
    /// dimension `dim` are concatenated in ascending node order at its lowest node, which
    /// sends the whole to the host with message type `ty` (the host receives it with
    /// `recv`).
    #[doc(alias = "GCAT")]
    pub fn gcat_to_host(&self, data: impl IntoPayload, ty: MsgType, dim: u32) -> Result<()> {
        check_dim(self, "GCAT", dim)?;
        let base = subcube_base(self.mynode(), dim);
        let all = self.gcat(data, base, dim)?;
        if self.mynode() == base {
            self.send(HOST, ty, all)?;
        }
        Ok(())
    }
}
