//! The node number, the one type every other file of the crate (errors included) builds on.

/// A node number in the hypercube (0 .. 2^d).
pub type NodeId = u32;
