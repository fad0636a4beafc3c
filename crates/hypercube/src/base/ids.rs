//! Node numbers beyond the cube's own `0..2^d` ([`NodeId`]s, from `hypercube-topology`):
//! the host process. Defined here, at the bottom of the crate, because every layer from
//! the wire format up knows the host's number; `lib.rs` re-exports it as `hypercube::HOST`.

use hypercube_topology::NodeId;

/// The node number of the host process (iPSC: node `-32768`), when the job has one
/// (`hcrun --host PROGRAM`). The host is linked to node 0; messages to and from it are
/// forwarded like any other. `-32768_i32 as u32`.
pub const HOST: NodeId = 0xFFFF_8000;
