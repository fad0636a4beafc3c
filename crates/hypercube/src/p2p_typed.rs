//! Typed point-to-point: slices of plain data ([`Pod`]) and serde values through
//! [`Node::send`], [`Node::recv`] and [`Node::sendrecv`], with no manual encoding. Sits
//! above `node.rs` and the collectives' element code (which it uses), below nothing.

use serde::{de::DeserializeOwned, Serialize};

use crate::collectives::element::{decode, encode};
use crate::collectives::Pod;
use crate::error::{Error, Result};
use crate::message::{MsgType, Select, Status};
use crate::node::Node;
use hypercube_topology::NodeId;

impl Node {
    /// [`Node::send`] of a slice of plain data (one copy into the message).
    pub fn send_slice<T: Pod>(&self, dest: NodeId, ty: MsgType, data: &[T]) -> Result<()> {
        self.send(dest, ty, encode(data))
    }

    /// [`Node::recv`] of a slice sent by [`Node::send_slice`] (any number of elements; a
    /// length that is not a whole number of elements is an [`Error::InvalidArgument`]).
    pub fn recv_slice<T: Pod>(&self, sel: impl Into<Select>) -> Result<(Vec<T>, Status)> {
        let m = self.recv(sel)?;
        Ok((decode(m.data(), None, "recv_slice")?, m.status()))
    }

    /// [`Node::sendrecv`] of slices: send `data` to `dest`, receive a slice matching `sel`
    /// (a halo exchange with a neighbour in one call, without deadlock at any size).
    pub fn sendrecv_slice<T: Pod>(
        &self,
        dest: NodeId,
        ty: MsgType,
        data: &[T],
        sel: impl Into<Select>,
    ) -> Result<(Vec<T>, Status)> {
        let m = self.sendrecv(dest, ty, encode(data), sel)?;
        Ok((decode(m.data(), None, "sendrecv_slice")?, m.status()))
    }

    /// [`Node::sendrecv`] of serde values: send `value` to `dest`, receive a value
    /// matching `sel` (a value that does not decode is an [`Error::Codec`] naming its
    /// source and the type expected).
    pub fn sendrecv_value<S: Serialize + ?Sized, R: DeserializeOwned>(
        &self,
        dest: NodeId,
        ty: MsgType,
        value: &S,
        sel: impl Into<Select>,
    ) -> Result<(R, Status)> {
        let m = self.sendrecv(dest, ty, crate::codec::encode(value)?, sel)?;
        let v = crate::codec::decode(m.data()).map_err(|e| {
            Error::Codec(format!(
                "the value from node {} does not decode as {}: {e}",
                m.source(),
                std::any::type_name::<R>()
            ))
        })?;
        Ok((v, m.status()))
    }
}
