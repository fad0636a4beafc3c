//! Typed forms of the data-moving collectives: slices of plain data ([`Pod`]) in, vectors
//! out. Each encodes (one copy of the input into the message buffer, the bytes themselves
//! for primitives on little-endian targets), calls the byte form — so every algorithm of the
//! byte form applies, chosen the same way — and decodes (one copy out of the received
//! buffer). Counts are in elements.

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::element::{decode, decode_blocks, encode};
use super::pod::Pod;
use super::{ShiftOrder, Subcube};
use crate::error::{Error, Result};

impl Subcube<'_> {
    /// [`Subcube::bcast`] of `len` elements: every member returns the root's `data` (the
    /// others pass `&[]`). Every member passes the same `root` and `len`; for a value of
    /// unknown size use [`Subcube::bcast_value`].
    pub fn bcast_slice<T: Pod>(&self, root: NodeId, data: &[T], len: usize) -> Result<Vec<T>> {
        let at_root = self.node.mynode() == root;
        if at_root && data.len() != len {
            return Err(Error::InvalidArgument(format!(
                "bcast_slice: the root passed {} elements but len = {len}",
                data.len()
            )));
        }
        let bytes = if at_root { encode(data) } else { Bytes::new() };
        let got = self.bcast(root, bytes, len * T::WIRE_SIZE)?;
        decode(&got, Some(len), "bcast_slice")
    }

    /// [`Subcube::scatter`] of a slice: the root passes `count` elements per member,
    /// `count · size()` in all, in relative rank order (as `MPI_Scatter`); every member
    /// returns its `count` elements. The others pass `&[]`; every member passes the same
    /// `root` and `count`.
    pub fn scatter_slice<T: Pod>(&self, root: NodeId, data: &[T], count: usize) -> Result<Vec<T>> {
        let p = self.size() as usize;
        let blocks: Vec<Bytes> = if self.node.mynode() == root {
            if data.len() != count * p {
                return Err(Error::InvalidArgument(format!(
                    "scatter_slice: the root passed {} elements for {p} members of {count}",
                    data.len()
                )));
            }
            let all = encode(data);
            let b = count * T::WIRE_SIZE;
            (0..p).map(|j| all.slice(j * b..(j + 1) * b)).collect()
        } else {
            Vec::new()
        };
        let got = self.scatter(root, &blocks, count * T::WIRE_SIZE)?;
        decode(&got, Some(count), "scatter_slice")
    }

    /// [`Subcube::gather`] of slices of one common length: `root` returns them all, joined
    /// in relative rank order (`Some`), the others `None`.
    pub fn gather_slice<T: Pod>(&self, root: NodeId, data: &[T]) -> Result<Option<Vec<T>>> {
        match self.gather(root, encode(data))? {
            Some(blocks) => Ok(Some(decode_blocks(
                &blocks,
                data.len() * blocks.len(),
                "gather_slice",
            )?)),
            None => Ok(None),
        }
    }

    /// [`Subcube::gatherv`] of slices of any lengths: `root` returns each member's slice,
    /// by relative rank.
    pub fn gatherv_slice<T: Pod>(&self, root: NodeId, data: &[T]) -> Result<Option<Vec<Vec<T>>>> {
        match self.gatherv(root, encode(data))? {
            Some(blocks) => Ok(Some(decode_each(&blocks, "gatherv_slice")?)),
            None => Ok(None),
        }
    }

    /// [`Subcube::allgather`] of slices of one common length: every member returns them
    /// all, joined in relative rank order.
    pub fn allgather_slice<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        let blocks = self.allgather(encode(data))?;
        decode_blocks(&blocks, data.len() * blocks.len(), "allgather_slice")
    }

    /// [`Subcube::allgatherv`] of slices of any lengths: every member returns each
    /// member's slice, by relative rank.
    pub fn allgatherv_slice<T: Pod>(&self, data: &[T]) -> Result<Vec<Vec<T>>> {
        decode_each(&self.allgatherv(encode(data))?, "allgatherv_slice")
    }

    /// [`Subcube::alltoall`] of a slice: `data` holds `count · size()` elements, block j
    /// (elements `j·count .. (j+1)·count`) going to relative rank j; returns the blocks
    /// received, joined in relative rank order (as `MPI_Alltoall`).
    pub fn alltoall_slice<T: Pod>(&self, data: &[T]) -> Result<Vec<T>> {
        let p = self.size() as usize;
        if p == 0 || data.len() % p != 0 {
            return Err(Error::InvalidArgument(format!(
                "alltoall_slice: {} elements do not split into {p} equal blocks",
                data.len()
            )));
        }
        let all = encode(data);
        let b = data.len() / p * T::WIRE_SIZE;
        let blocks: Vec<Bytes> = (0..p).map(|j| all.slice(j * b..(j + 1) * b)).collect();
        let got = self.alltoall(&blocks)?;
        decode_blocks(&got, data.len(), "alltoall_slice")
    }

    /// [`Subcube::alltoallv`] of slices: `blocks[j]` (any length) goes to relative rank
    /// j; returns what each member sent to this one, by relative rank.
    pub fn alltoallv_slice<T: Pod, B: AsRef<[T]>>(&self, blocks: &[B]) -> Result<Vec<Vec<T>>> {
        let bytes: Vec<Bytes> = blocks.iter().map(|b| encode(b.as_ref())).collect();
        decode_each(&self.alltoallv(&bytes)?, "alltoallv_slice")
    }

    /// [`Subcube::shift`] of a slice (every member passes the same number of elements).
    pub fn shift_slice<T: Pod>(&self, data: &[T], q: i64, order: ShiftOrder) -> Result<Vec<T>> {
        let got = self.shift(encode(data), q, order)?;
        decode(&got, Some(data.len()), "shift_slice")
    }
}

/// Decode every block on its own (a whole number of elements each).
fn decode_each<T: Pod>(blocks: &[Bytes], what: &str) -> Result<Vec<Vec<T>>> {
    blocks.iter().map(|b| decode(b, None, what)).collect()
}
