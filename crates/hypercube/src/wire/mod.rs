//! The only code that knows bytes on the wire: the link frame header, the link handshake,
//! the launcher control messages, the PMI-1 lines and the serde codec (bincode is confined to
//! `codec`; `budget` bounds the elements a decoded value may hold).
//!
//! `docs/protocol.md` describes the layouts byte by byte.

pub(crate) mod budget;
pub mod codec;
pub mod control;
pub(crate) mod frame;
#[cfg(test)]
pub(crate) mod fuzz;
pub(crate) mod handshake;
pub mod pmi;
