//! Pure hypercube bit math (no I/O): node numbers, subcubes, Gray codes,
//! e-cube routes, the sparse global send's BETWEEN/SPLIT, and mesh embedding.
//!
//! The seed is Moler & Scott, *Communication Utilities for the iPSC* (Intel
//! iPSC Technical Report No. 2, 1986); section numbers in the docs (§1, §5,
//! §9, ...) refer to it, and its routine names (GRAY, GINV, BETWEEN, SPLIT,
//! MESH, SPGSNW) are doc aliases. See `docs/topology.md` for an overview.
//!
//! | module | contents |
//! |---|---|
//! | `cube` | [`NodeId`], [`neighbor`], [`hamming`], subcubes (§1) |
//! | `gray` | [`gray`], [`ginv`], the Gray-code ring (§9, GRAY listing) |
//! | `route` | [`ecube_next_hop`], [`ecube_route`] |
//! | `plan` | [`Plan`], [`Route`]: balanced routes for a many-to-many exchange (Bhatt ch. 4) |
//! | `sparse` | [`between`], [`split`], [`sparse_fanout`] (§7, §9) |
//! | `mesh` | [`Mesh`], [`mesh_shape_for`] (§5) |
//! | `error` | [`TopologyError`] |
#![deny(missing_docs)]

mod cube;
mod error;
mod gray;
mod ids;
mod mesh;
pub mod plan;
mod route;
mod sparse;

pub use cube::{
    check_dim, check_node, checked_neighbor, hamming, in_subcube, neighbor, neighbors, node_count,
    subcube_base, subcube_members, NodeId, MAX_DIM,
};
pub use error::TopologyError;
pub use gray::{ginv, gray, gray_ring, ring_predecessor, ring_successor};
pub use mesh::{mesh_shape_for, Boundary, Mesh, MeshPosition};
pub use plan::{Leg, Plan, PlanOptions, Route, MAX_PLAN_DIM, MAX_ROUTE_HOPS};
pub use route::{ecube_next_hop, ecube_route};
pub use sparse::{
    between, sparse_fanout, sparse_send_plan, split, split_in_place, try_sparse_fanout, Split,
};
