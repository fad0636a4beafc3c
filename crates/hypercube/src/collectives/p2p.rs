//! Typed point-to-point: slices of plain data ([`Pod`]) and serde values through
//! [`Node::send`], [`Node::recv`] and [`Node::sendrecv`], with no manual encoding. Not a
//! collective: it lives here because it is made of this folder's element code
//! (`element.rs`, `pod.rs`, `typed_buf.rs`), above `node/` like the collectives.

use serde::{de::DeserializeOwned, Serialize};

use super::element::{decode, encode};
use super::pod::Pod;
use super::typed_buf::TypedBuf;
use crate::base::message::{Message, MsgType, Select, Status};
use crate::error::{Error, Result};
use crate::node::Node;
use hypercube_topology::NodeId;

impl Node {
    /// [`Node::send`] of a slice of plain data (one copy into the message). `dest` may be
    /// `None` (no neighbour, the edge of a mesh): then nothing is sent.
    pub fn send_slice<T: Pod>(
        &self,
        dest: impl Into<Option<NodeId>>,
        ty: MsgType,
        data: &[T],
    ) -> Result<()> {
        match dest.into() {
            Some(d) => self.send(d, ty, encode(data)),
            None => crate::node::check_type(ty.0).map(|_| ()),
        }
    }

    /// [`Node::recv`] of a slice sent by [`Node::send_slice`] (any number of elements; a
    /// length that is not a whole number of elements is an [`Error::InvalidArgument`]).
    pub fn recv_slice<T: Pod>(&self, sel: impl Into<Select>) -> Result<(Vec<T>, Status)> {
        let m = self.recv(sel)?;
        Ok((decode(m.data(), None, "recv_slice")?, m.status()))
    }

    /// [`Node::recv`] of a slice viewed where it arrived (a [`TypedBuf`] of one part,
    /// which dereferences to `&[T]` without a copy), with the message's status. A length
    /// that is not a whole number of elements is an [`Error::InvalidArgument`].
    pub fn recv_buf<T: Pod>(&self, sel: impl Into<Select>) -> Result<(TypedBuf<T>, Status)> {
        let m = self.recv(sel)?;
        let st = m.status();
        Ok((TypedBuf::from_parts(vec![m.into_data()], "recv_buf")?, st))
    }

    /// [`Node::recv_into`] of a slice: receive the oldest message matching `sel` into the
    /// caller's memory (`MPI_Recv` into a buffer); returns the number of elements received
    /// (at most `buf.len()`) and the message's status. A message longer than `buf` is an
    /// [`Error::Truncated`] (it stays queued: receive it again with a larger buffer); one
    /// that is not a whole number of elements is an [`Error::InvalidArgument`].
    pub fn recv_slice_into<T: Pod>(
        &self,
        sel: impl Into<Select>,
        buf: &mut [T],
    ) -> Result<(usize, Status)> {
        let size = T::WIRE_SIZE.max(1);
        if T::MEMORY_IS_WIRE {
            let st = self.recv_into(sel, super::pod::as_bytes_mut(buf))?;
            let len = st.len as usize;
            if len % size != 0 {
                return Err(Error::InvalidArgument(format!(
                    "recv_slice_into: the message from node {} is {len} bytes, not a whole \
                     number of {size}-byte {} elements; send and receive the same element type",
                    st.source,
                    std::any::type_name::<T>()
                )));
            }
            return Ok((len / size, st));
        }
        let m = self.recv(sel)?;
        let n = m.len() / size;
        if n > buf.len() {
            return Err(Error::InvalidArgument(format!(
                "recv_slice_into: the message from node {} holds {n} elements but the buffer \
                 {}; the message was consumed",
                m.source(),
                buf.len()
            )));
        }
        super::element::decode_into(m.data(), &mut buf[..n], "recv_slice_into")?;
        Ok((n, m.status()))
    }

    /// [`Node::sendrecv`] of slices, the type given once: send `data` to `dest` with type
    /// `ty` and receive the slice of type `ty` that `from` sends (a halo exchange with a
    /// neighbour in one call, without deadlock at any size).
    ///
    /// `dest` and `from` are a [`NodeId`] or an `Option<NodeId>`, where `None` is no
    /// neighbour (MPI's `MPI_PROC_NULL`, the edge of a mesh): nothing is sent, or nothing
    /// received. The result follows `from`: a `Vec<T>` from a node, an `Option<Vec<T>>`
    /// from an optional one (`None` when `from` is `None`).
    ///
    /// ```
    /// use hypercube::MsgType;
    /// hypercube::local::run_local(2, |node| {
    ///     // A chain 0-1-2-3: every node sends its row up and receives the row from below.
    ///     let me = node.mynode();
    ///     let up = (me < 3).then(|| me + 1);
    ///     let down = me.checked_sub(1);
    ///     let row = [me as f64; 4];
    ///     let below = node.sendrecv_slice(up, MsgType(1), &row, down).unwrap();
    ///     assert_eq!(below, down.map(|d| vec![d as f64; 4]));
    /// });
    /// ```
    #[doc(alias = "MPI_Sendrecv")]
    pub fn sendrecv_slice<T: Pod, P: Peer>(
        &self,
        dest: impl Into<Option<NodeId>>,
        ty: MsgType,
        data: &[T],
        from: P,
    ) -> Result<P::Got<Vec<T>>> {
        let m = self.sendrecv_opt(dest.into(), ty, || encode(data), from.node())?;
        from.got(m.map(|m| decode(m.data(), None, "sendrecv_slice")))
    }

    /// [`Node::sendrecv`] of serde values, the type given once: send `value` to `dest`
    /// with type `ty` and receive the value of the same Rust type that `from` sends (a
    /// value that does not decode is an [`Error::Codec`] naming its source and the type
    /// expected). `dest` and `from` may be `None` (no neighbour), as in
    /// [`Node::sendrecv_slice`]; the result is a `V` from a node, an `Option<V>` from an
    /// optional one.
    ///
    /// ```
    /// use hypercube::MsgType;
    /// hypercube::local::run_local(1, |node| {
    ///     let other = node.mynode() ^ 1;
    ///     let got = node.sendrecv_value(other, MsgType(2), &format!("hi from {}", node.mynode()), other);
    ///     assert_eq!(got.unwrap(), format!("hi from {other}"));
    /// });
    /// ```
    #[doc(alias = "MPI_Sendrecv")]
    pub fn sendrecv_value<V: Serialize + DeserializeOwned, P: Peer>(
        &self,
        dest: impl Into<Option<NodeId>>,
        ty: MsgType,
        value: &V,
        from: P,
    ) -> Result<P::Got<V>> {
        let bytes = crate::wire::codec::encode(value)?;
        let m = self.sendrecv_opt(dest.into(), ty, || bytes.into(), from.node())?;
        from.got(m.map(|m| {
            crate::wire::codec::decode(m.data()).map_err(|e| {
                Error::Codec(format!(
                    "the value from node {} does not decode as {}: {e}",
                    m.source(),
                    std::any::type_name::<V>()
                ))
            })
        }))
    }

    /// Send to `dest` (if any) and receive type `ty` from `from` (if any), at once.
    fn sendrecv_opt(
        &self,
        dest: Option<NodeId>,
        ty: MsgType,
        data: impl FnOnce() -> bytes::Bytes,
        from: Option<NodeId>,
    ) -> Result<Option<Message>> {
        crate::node::check_type(ty.0)?;
        match (dest, from) {
            (Some(d), Some(f)) => self
                .sendrecv(d, ty, data(), Select::from_node(f, ty))
                .map(Some),
            (Some(d), None) => self.send(d, ty, data()).map(|()| None),
            (None, Some(f)) => self.recv(Select::from_node(f, ty)).map(Some),
            (None, None) => Ok(None),
        }
    }
}

/// The source of a receive that may not exist: a [`NodeId`] (a message always comes) or
/// an `Option<NodeId>` (`None` is no neighbour, MPI's `MPI_PROC_NULL`: nothing is
/// received). Decides what [`Node::sendrecv_slice`] and [`Node::sendrecv_value`] return.
pub trait Peer: Copy {
    /// What a receive from this peer returns: `V` from a node, `Option<V>` from an
    /// optional one.
    type Got<V>;
    /// The node, if there is one.
    fn node(self) -> Option<NodeId>;
    /// The result of a receive from [`Peer::node`] (`None` when there is no node).
    fn got<V>(self, v: Option<Result<V>>) -> Result<Self::Got<V>>;
}

impl Peer for NodeId {
    type Got<V> = V;
    fn node(self) -> Option<NodeId> {
        Some(self)
    }
    fn got<V>(self, v: Option<Result<V>>) -> Result<V> {
        v.unwrap_or_else(|| {
            Err(Error::InvalidRequest(format!(
                "no message was received from node {self}"
            )))
        })
    }
}

impl Peer for Option<NodeId> {
    type Got<V> = Option<V>;
    fn node(self) -> Option<NodeId> {
        self
    }
    fn got<V>(self, v: Option<Result<V>>) -> Result<Option<V>> {
        v.transpose()
    }
}
