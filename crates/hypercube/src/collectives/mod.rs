//! The basic communication operations of Grama et al., *Introduction to Parallel
//! Computing*, chapter 4, on the whole cube or on any subcube.
//!
//! Every operation is a method of [`Subcube`], a handle that names the subcube of
//! dimension `dim` containing the calling node (the nodes that differ from it only in the
//! low `dim` bits). [`Node::cube`] names the whole cube:
//!
//! ```no_run
//! use hypercube::collectives::{Algorithm, Op};
//! # fn f(node: &hypercube::Node) -> hypercube::Result<()> {
//! let sum = node.cube().allreduce(&[1.0f64, 2.0], Op::Sum)?;           // whole cube
//! let pair = node.subcube(1).allgather(bytes::Bytes::from_static(b"x"))?; // pairs
//! let ring = node.cube().with(Algorithm::Ring).allgather(bytes::Bytes::from_static(b"y"))?;
//! # Ok(()) }
//! ```
//!
//! Every member of the subcube must make the same collective calls in the same order with
//! matching arguments (the same root, the same lengths where the operation says so). Ranks
//! inside results and block lists are **relative** ranks `0 .. 2^dim` (physical node =
//! subcube base + relative rank); roots are physical node numbers and must lie in the
//! subcube ([`crate::Error::InvalidNode`] otherwise).
//!
//! Every data-moving operation also has a **typed form** over slices of plain data
//! ([`Pod`]: `bcast_slice`, `scatter_slice`, `gather_slice`, `gatherv_slice`,
//! `allgather_slice`, `allgatherv_slice`, `alltoall_slice`, `alltoallv_slice`,
//! `shift_slice`) and a **serde form** for values of any type and size (`bcast_value`,
//! `scatter_values`, `gather_values`, `allgather_value`, `alltoall_values`), built on the
//! byte form with the same algorithms. The reductions take any [`Pod`] element: the
//! named [`Op`]s for numbers and [`Loc`], user functions for any type. The typed forms
//! `bcast_vec`, `allgather_vec` and `alltoall_vec` take an owned vector and send its memory
//! without copying it.
//!
//! [`Subcube::exchange`] swaps blocks with the partner across one dimension (and
//! [`Subcube::exchange_neighbours`] across every dimension at once: a halo exchange),
//! without deadlock at any size; typed (`exchange_slice`, `exchange_vec`,
//! `exchange_neighbours_slice`) and serde (`exchange_value`) forms too.
//!
//! Each operation lives in its own folder, each algorithm in its own file citing the
//! book's algorithm and equation; [`select`] chooses among them (see `docs/collectives.md`).

pub(crate) mod blocks;
mod ctx;
pub(crate) mod element;
pub(crate) mod esbt;
mod op;
pub(crate) mod p2p;
pub(crate) mod pod;
pub mod select;

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod broadcast;
mod exchange;
mod gather;
mod into;
mod lend;
mod reduce;
mod reduce_scatter;
mod scan;
mod scatter;
mod shift;
mod shift_order;
mod typed;
mod typed_buf;
mod values;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_mixed;

/// Blocks of at least this many bytes are received by the typed forms into their result
/// in place and sent from the caller's memory (`node/landing.rs`, `lend.rs`): the
/// allgather's hypercube algorithm, the all-to-all's pairwise and e-cube exchanges (and the
/// last step of its store-and-forward exchange, half the result); the broadcast from
/// [`BCAST_LAND_FROM`]. Smaller ones go through message buffers, copied. Measured on
/// loopback in one job against the byte form (`osu --form into|slice --vs bytes`, 4 and 8
/// ranks, three jobs each): at 64 KiB landing took the all-to-all from 1.07–1.20× the byte
/// form's time to 1.00–1.08×, the 4-rank all-gather from 1.20–1.29× to 1.09–1.18× (once a
/// link reads a frame's header alone while a landing waits, `LinkIn::header_first`, and
/// lent memory of less than 256 KiB is copied at once when its lender returns instead of
/// waited for; before, 64 KiB cost the same both ways); at 1 MiB receiving in place saves
/// 10–30 %. The typed forms do not pick another algorithm to receive more in place, since
/// members that disagree on the length would then run different algorithms. Members on
/// either side of the limit exchange the same messages.
pub(crate) const LAND_FROM: usize = 64 << 10;

/// The broadcast's [`LAND_FROM`] (measured with temporary builds landing it from 32 KiB,
/// and the first, biased `--vs`: `docs/perf/typed.md`): landing 64 KiB, the typed broadcast on loopback took
/// 1.23–1.29× the byte form's time on 4 ranks and 1.31–1.41× on 8 (lent memory copied at
/// once), copying 1.12–1.22× and 1.16–1.26× (`osu bcast --form into --vs bytes`): a
/// broadcast's member passes on what it received, and its lent copy is rarely read by the
/// time it returns.
pub(crate) const BCAST_LAND_FROM: usize = 128 << 10;

pub use element::{Element, Op};
pub use pod::{Builtin, Loc, LocIndex, Pod};
pub use select::{Algorithm, Operation};
pub use shift_order::ShiftOrder;
pub use typed_buf::TypedBuf;

use hypercube_topology::NodeId;

use crate::error::{Error, Result};
use crate::node::Node;
use ctx::Ctx;
use select::choose;

/// The subcube of dimension `dim` that contains a node: the group a collective runs on,
/// with an optional per-call choice of algorithm.
#[derive(Clone, Copy, Debug)]
pub struct Subcube<'a> {
    node: &'a Node,
    dim: u32,
    alg: Algorithm,
}

impl Node {
    /// The subcube of dimension `dim` containing this node (`dim` ≤ [`Node::cubedim`];
    /// checked when an operation is called).
    pub fn subcube(&self, dim: u32) -> Subcube<'_> {
        Subcube {
            node: self,
            dim,
            alg: Algorithm::Auto,
        }
    }

    /// The whole cube as a [`Subcube`].
    pub fn cube(&self) -> Subcube<'_> {
        self.subcube(self.cubedim())
    }
}

impl<'a> Subcube<'a> {
    /// Use `alg` for the next calls made through this handle instead of the automatic
    /// choice (and instead of a `HYPERCUBE_ALG_<OP>` job setting). An algorithm that does
    /// not implement the operation is an [`crate::Error::InvalidArgument`].
    pub fn with(self, alg: Algorithm) -> Subcube<'a> {
        Subcube { alg, ..self }
    }

    /// The subcube's dimension.
    pub fn dim(&self) -> u32 {
        self.dim
    }

    /// The number of nodes, 2^dim.
    pub fn size(&self) -> u32 {
        1u32.checked_shl(self.dim).unwrap_or(0)
    }

    /// This node's relative rank in the subcube.
    pub fn rank(&self) -> u32 {
        self.node.mynode() & (self.size().wrapping_sub(1))
    }

    /// The lowest physical node of the subcube.
    pub fn base(&self) -> NodeId {
        hypercube_topology::subcube_base(self.node.mynode(), self.dim)
    }

    /// A member's own argument error in a collective call (a wrong block count, a root
    /// whose data does not match the length): the other members are in the call, or will
    /// be, and wait for this one. So the call is joined as they join it (its tag drawn, so
    /// that the next call's tags still agree) and left at once with a failure notice to
    /// every member (`Ctx::guard`): each of them fails with `e`, naming this member,
    /// instead of waiting. Returns `e` for the caller to return. An error that every member
    /// finds alike (a dimension out of range) is returned as it is.
    pub(crate) fn refuse(&self, e: Error) -> Error {
        match Ctx::new(self.node, self.dim) {
            Ok(c) => match c.guard::<()>(Err(e)) {
                Err(e) => e,
                Ok(()) => Error::InvalidArgument("a refused call".into()),
            },
            Err(_) => e,
        }
    }

    /// The first two steps of every operation: the algorithm that runs `op` on `m_bytes`
    /// ([`select::choose`]), then the context of the call (which checks the dimension and
    /// draws the call's tag).
    fn start(
        &self,
        op: Operation,
        m_bytes: usize,
        commutative: bool,
    ) -> Result<(Algorithm, Ctx<'a>)> {
        let alg = choose(op, self.alg, self.dim, m_bytes, commutative)?;
        let ctx = Ctx::new(self.node, self.dim)?.variant(alg);
        let ctx = if ctx.call.is_some() {
            ctx.traced(op.env_name(), &alg, m_bytes)
        } else {
            ctx
        };
        Ok((alg, ctx))
    }
}
