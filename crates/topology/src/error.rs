//! The crate's one error type. Every message says what happened and what to do.
//!
//! The seed's utilities report misuse by syslogging a capitalised message that
//! starts with the routine name (Moler & Scott 1986, §8 "Error messages"). Where
//! an error corresponds to one of those messages, its `Display` text keeps the
//! seed's wording as a stable prefix (e.g. `MESH: TOO LARGE`) that callers and
//! log readers can match.

use crate::ids::NodeId;

/// Everything that can go wrong in this crate: a node, dimension, axis or mesh
/// that does not fit the hypercube it is used with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TopologyError {
    /// A node number is not in the `dim`-cube (it must be below `2^dim`).
    #[error(
        "node {node} is outside the {dim}-cube (valid nodes are 0..2^{dim}); \
         pass a node number below 2^{dim} or use a larger cube"
    )]
    NodeOutOfRange {
        /// The offending node number.
        node: NodeId,
        /// The dimension of the cube it was checked against.
        dim: u32,
    },

    /// A cube dimension larger than [`crate::MAX_DIM`] (node numbers are `u32`).
    #[error(
        "cube dimension {dim} is too large: node numbers are u32, so at most {max} \
         dimensions are supported; use a dimension of {max} or less"
    )]
    DimensionTooLarge {
        /// The requested dimension.
        dim: u32,
        /// The largest supported dimension ([`crate::MAX_DIM`]).
        max: u32,
    },

    /// A link index `k` that is not one of the `dim` links of the cube.
    #[error(
        "link {k} does not exist in the {dim}-cube (links are 0..{dim}); \
         pass a link index below the cube dimension"
    )]
    LinkOutOfRange {
        /// The requested link (bit) index.
        k: u32,
        /// The cube dimension.
        dim: u32,
    },

    /// The mesh, with every side rounded up to a power of two, needs more
    /// nodes than the cube has (seed §5 and §8: `MESH: TOO LARGE`).
    #[error(
        "MESH: TOO LARGE: the {shape:?} mesh is rounded up to {padded:?} and needs a \
         {needed_dim}-cube, but the cube has dimension {cube_dim}; run on a cube of \
         dimension at least {needed_dim} or use a smaller mesh (mesh_shape_for gives \
         one that fits exactly)"
    )]
    MeshTooLarge {
        /// The requested side lengths.
        shape: Vec<u32>,
        /// The side lengths rounded up to powers of two (the seed's `WORK`).
        padded: Vec<u32>,
        /// The cube dimension the padded mesh needs.
        needed_dim: u32,
        /// The cube dimension that was available.
        cube_dim: u32,
    },

    /// The mesh description itself is malformed (no axes, a zero side, or a
    /// boundary list of the wrong length).
    #[error(
        "invalid mesh: {reason}; give at least one axis, a side length of at least 1 \
         per axis and exactly one boundary per axis"
    )]
    InvalidMesh {
        /// What is wrong with the description.
        reason: String,
    },

    /// The node is in the cube but not used by the mesh: one of its axis fields
    /// decodes to a coordinate in the power-of-two padding (the seed's MESH
    /// returns all -1 for such a node).
    #[error(
        "node {node} is not part of the {shape:?} mesh (it falls in the padding up to \
         powers of two or beyond the mesh's subcube); only call mesh functions on \
         nodes for which Mesh::contains is true"
    )]
    NodeNotInMesh {
        /// The node that has no mesh position.
        node: NodeId,
        /// The mesh's side lengths.
        shape: Vec<u32>,
    },

    /// Coordinates with the wrong number of axes or a coordinate past its side.
    #[error(
        "coordinates {coords:?} are not in the {shape:?} mesh; give one coordinate per \
         axis, each below that axis's side length"
    )]
    CoordsOutOfRange {
        /// The offending coordinates.
        coords: Vec<u32>,
        /// The mesh's side lengths.
        shape: Vec<u32>,
    },

    /// An axis index past the mesh's number of dimensions.
    #[error("axis {axis} does not exist in a {ndims}-D mesh; pass an axis below {ndims}")]
    AxisOutOfRange {
        /// The requested axis.
        axis: usize,
        /// The mesh's number of axes.
        ndims: usize,
    },

    /// A sparse-send target that cannot be reached from `me` along a shortest
    /// path from `root` (`me` is not BETWEEN `root` and the target, seed §9).
    #[error(
        "target {target} cannot be reached from node {me} along a shortest path from \
         root {root}; only forward target lists produced by sparse_fanout from the \
         same root"
    )]
    TargetNotDownstream {
        /// The target that is off the shortest paths through `me`.
        target: NodeId,
        /// The forwarding node.
        me: NodeId,
        /// The root of the sparse send.
        root: NodeId,
    },
}
