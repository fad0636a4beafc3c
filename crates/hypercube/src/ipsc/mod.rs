//! The Moler–Scott communication utilities for the iPSC (Intel iPSC Technical Report No. 2,
//! 1986; "the seed"), as methods on [`Node`]. Section numbers (§) refer to the seed.
//!
//! | seed routine | section | Rust | file |
//! |---|---|---|---|
//! | GSENDW / GRECVW | §2 | [`Node::gsend`], [`Node::grecv`], [`Node::grecv_into`]; serde values: [`Node::gsend_value`], [`Node::grecv_value`] | `broadcast.rs`, `values.rs`; long messages on slow links in pieces: `pieces.rs`, or down all the links: `gsend_esbt.rs` |
//! | GOP | §3 | [`Node::gop`], [`Node::gop_with`] | `gop.rs`; long vectors on slow links in pieces: `pieces.rs` |
//! | GCAT | §4 | [`Node::gcat`], [`Node::gcat_into`]; serde values: [`Node::gcat_values`] | `gcat.rs`, `values.rs` |
//! | MESH | §5 | [`Node::mesh`], [`mesh_position`] | `mesh.rs` |
//! | LSENDW / LRECVW | §6 | [`Node::lsend`], [`Node::lrecv`], [`Node::lrecv_into`] | `long.rs` |
//! | SPGSNW / SPGRCW | §7 | [`Node::spgsend`], [`Node::spgrecv`], [`Node::spgrecv_into`] | `sparse.rs` |
//! | error messages | §8 | the `Error` variants named after the seed's messages | `crate::Error` |
//! | GRAY, GINV, BETWEEN, SPLIT, XOR | §9 | [`crate::topology`] | — |
//! | everything, with the seed's names and argument order | §2–§9 | [`compat`] | `compat.rs` |
//!
//! The host process (the seed's root `-32768`, LSENDMSG) is not implemented: every root is
//! a node number.
//!
//! ## Subcubes and participation
//!
//! The utilities that take a dimension `dim` act on the subcube of dimension `dim` that
//! contains the caller: the `2^dim` nodes that agree with it above bit `dim` (§1). Every
//! member of that subcube must make the call; nodes outside it must not.
//!
//! ## No interference (message types)
//!
//! The seed asks for a message type per call and forbids any other message of that type
//! "in the system". Here the collective utilities (broadcast, GOP, GCAT) need no type at
//! all: each call takes a fresh tag from the reserved type space, numbered by a per-node,
//! per-subcube-dimension call counter. Every member of a subcube makes the same sequence
//! of calls on it, so the counters agree, and messages of two calls (or of a call and a
//! user's `send`) can never match each other, whichever arrives first. The condition is
//! the seed's own: the members of a subcube call the utilities on it in the same order.
//!
//! The point-to-point utilities whose receivers do not take part in every call (long
//! messages, the sparse send) are keyed by the caller's type instead, mapped into their own
//! reserved tag range, so they never consume user messages either; types for them must be
//! at most [`MAX_RESERVED_USER_TYPE`] (2^26 − 1).
//!
//! ## Errors
//!
//! Each of the seed's §8 conditions is an [`Error`] variant whose text starts with the
//! seed's message (`GCAT: BUFFER LENGTH EXCEEDED`, ...). Unlike the seed, no data is lost:
//! a receive that does not fit either leaves the message queued ([`Node::lrecv_into`]) or
//! hands the whole message back inside the error ([`RecoveredData`]), after forwarding it
//! to the rest of the tree so that the other nodes finish normally.

/// The names the documentation above links to.
#[cfg(doc)]
use crate::{error::Error, node::Node};

mod broadcast;
mod checks;
pub mod compat;
mod gcat;
mod gop;
mod gsend_esbt;
mod host;
mod long;
mod mesh;
mod pieces;
mod sparse;
mod values;

pub use gop::{Element, Op};
pub use long::SEED_CHUNK_BYTES;
pub use mesh::mesh_position;

pub use crate::base::tags::MAX_RESERVED_USER_TYPE;
pub use crate::error::RecoveredData;
