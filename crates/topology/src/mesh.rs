//! Embedding 1-, 2- and 3-D (or higher) meshes in the hypercube (MESH, §5).
//!
//! Each axis owns a field of consecutive bits of the node number, wide enough
//! for its side length rounded up to a power of two (the listing's `WORK`).
//! A coordinate is stored Gray-coded in its field, so stepping one place
//! along an axis changes one bit: mesh neighbors are cube neighbors. Axis 0
//! occupies the lowest bits, axis 1 the next, and so on.
//!
//! The seed's listing of MESH (§13) breaks off after the round-up loop; what
//! follows it here is a reconstruction from §5 and from the routines MESH
//! calls (GRAY, GINV, CUBEDIM): coordinates are `GINV` of each field, nodes
//! whose field decodes past the side length are "not used in the mesh", and a
//! mesh whose rounded-up size exceeds the cube is `MESH: TOO LARGE`. The
//! field order (axis 0 lowest) is our choice. Where the seed syslogs and
//! carries on, this module returns an error: [`Mesh::new`] rejects a mesh
//! that does not fit, and methods given a node outside the mesh return
//! [`TopologyError::NodeNotInMesh`] instead of the seed's all `-1`.
//!
//! Side lengths need not be powers of two (the seed rounds them up). With a
//! periodic boundary, the wrap-around step from the last coordinate back to 0
//! is a cube link only when the side is a power of two (or 1 or 2); other
//! wrap-around steps are valid mesh neighbors several hops apart.

use crate::cube::{check_dim, check_node, low_mask, NodeId};
use crate::error::TopologyError;
use crate::gray::{ginv, gray};

/// Boundary condition of one mesh axis (the seed's `PERBC`, §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Boundary {
    /// `PERBC(I) = 1`: the last node's successor is the first node and the
    /// first node's predecessor is the last (a ring along this axis).
    Periodic,
    /// `PERBC(I) = 0`: no successor at the last coordinate and no predecessor
    /// at coordinate 0 (the seed's `-1`, here `None`).
    Closed,
}

/// A rectangular mesh embedded in a hypercube so that mesh neighbors are
/// cube neighbors (MESH, §5). Built by [`Mesh::new`].
///
/// ```
/// use hypercube_topology::{hamming, Boundary, Mesh};
/// let mesh = Mesh::new(&[4, 4], &[Boundary::Periodic, Boundary::Closed], 4)?;
/// let node = mesh.node_at(&[1, 2])?;
/// assert_eq!(node, 13); // gray(1) | gray(2) << 2
/// assert_eq!(mesh.coords(node)?, vec![1, 2]);
/// let east = mesh.successor(node, 0)?.unwrap();
/// assert_eq!(hamming(node, east), 1);
/// assert_eq!(mesh.successor(mesh.node_at(&[0, 3])?, 1)?, None); // closed edge
/// # Ok::<(), hypercube_topology::TopologyError>(())
/// ```
#[doc(alias = "MESH")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mesh {
    shape: Vec<u32>,
    boundary: Vec<Boundary>,
    /// Width of each axis field in bits (log2 of the padded side).
    bits: Vec<u32>,
    /// Lowest bit of each axis field.
    offsets: Vec<u32>,
    /// Sum of `bits`: the dimension of the subcube the mesh occupies.
    needed_dim: u32,
    cube_dim: u32,
}

/// Everything the seed's MESH returns for one node (§5): its coordinates and
/// its neighbors before and after it along each axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeshPosition {
    /// The node's coordinates, `coords[i] < shape[i]` (the seed's `COORDS`).
    pub coords: Vec<u32>,
    /// The node before it along each axis; `None` at a closed boundary (`PRED`).
    pub pred: Vec<Option<NodeId>>,
    /// The node after it along each axis; `None` at a closed boundary (`SUCC`).
    pub succ: Vec<Option<NodeId>>,
}

/// Bits needed for a side of `side` nodes: `ceil(log2(side))`, as the
/// listing's `ALOG(FLOAT(LINDIM(I) - 1)) / ALOG(2.0) + 1` for `side > 1`.
fn side_bits(side: u32) -> u32 {
    if side <= 1 {
        0
    } else {
        NodeId::BITS - (side - 1).leading_zeros()
    }
}

impl Mesh {
    /// Embeds a mesh with side lengths `shape` (the seed's `LINDIM`) and one
    /// [`Boundary`] per axis (`PERBC`) in a cube of dimension `cube_dim`.
    ///
    /// Each side is rounded up to the next power of two; the mesh fits when
    /// the product of the rounded sides is at most `2^cube_dim`. It then
    /// occupies the subcube of nodes `0..2^needed_dim` (see
    /// [`Mesh::needed_dim`]); use [`mesh_shape_for`] for a mesh that fills
    /// the cube exactly.
    ///
    /// # Errors
    /// - [`TopologyError::DimensionTooLarge`] when `cube_dim > MAX_DIM`;
    /// - [`TopologyError::InvalidMesh`] when `shape` is empty, a side is 0, or
    ///   `boundary` does not have one entry per axis;
    /// - [`TopologyError::MeshTooLarge`] (`MESH: TOO LARGE`, §8) when the
    ///   rounded-up mesh needs more than `cube_dim` dimensions.
    pub fn new(shape: &[u32], boundary: &[Boundary], cube_dim: u32) -> Result<Mesh, TopologyError> {
        check_dim(cube_dim)?;
        if shape.is_empty() {
            return Err(TopologyError::InvalidMesh {
                reason: "the mesh has no axes".to_string(),
            });
        }
        if boundary.len() != shape.len() {
            return Err(TopologyError::InvalidMesh {
                reason: format!(
                    "{} side lengths but {} boundaries",
                    shape.len(),
                    boundary.len()
                ),
            });
        }
        if let Some(axis) = shape.iter().position(|&side| side == 0) {
            return Err(TopologyError::InvalidMesh {
                reason: format!("axis {axis} has side length 0"),
            });
        }
        let bits: Vec<u32> = shape.iter().map(|&side| side_bits(side)).collect();
        let needed_dim = bits.iter().fold(0u32, |sum, &b| sum.saturating_add(b));
        if needed_dim > cube_dim {
            let padded = bits
                .iter()
                .map(|&b| 1u32.checked_shl(b).unwrap_or(0))
                .collect();
            return Err(TopologyError::MeshTooLarge {
                shape: shape.to_vec(),
                padded,
                needed_dim,
                cube_dim,
            });
        }
        let offsets = bits
            .iter()
            .scan(0u32, |next, &b| {
                let offset = *next;
                *next += b;
                Some(offset)
            })
            .collect();
        Ok(Mesh {
            shape: shape.to_vec(),
            boundary: boundary.to_vec(),
            bits,
            offsets,
            needed_dim,
            cube_dim,
        })
    }

    /// The side lengths (the seed's `LINDIM`).
    pub fn shape(&self) -> &[u32] {
        &self.shape
    }

    /// The boundary condition of each axis (the seed's `PERBC`).
    pub fn boundary(&self) -> &[Boundary] {
        &self.boundary
    }

    /// The number of axes (the seed's `DIM` argument of MESH).
    pub fn ndims(&self) -> usize {
        self.shape.len()
    }

    /// The dimension of the cube the mesh is embedded in.
    pub fn cube_dim(&self) -> u32 {
        self.cube_dim
    }

    /// The side lengths rounded up to powers of two (the seed's `WORK`).
    pub fn padded_shape(&self) -> Vec<u32> {
        self.bits.iter().map(|&b| 1 << b).collect()
    }

    /// The dimension of the subcube `0..2^needed_dim` the mesh occupies: the
    /// sum over axes of `log2` of the padded side.
    pub fn needed_dim(&self) -> u32 {
        self.needed_dim
    }

    /// The number of mesh nodes, the product of the side lengths.
    pub fn node_count(&self) -> u32 {
        self.shape.iter().product()
    }

    /// Is `node` one of the mesh's nodes? False for nodes outside the cube,
    /// beyond the mesh's subcube, or in the power-of-two padding.
    pub fn contains(&self, node: NodeId) -> bool {
        self.coords(node).is_ok()
    }

    fn check_axis(&self, axis: usize) -> Result<(), TopologyError> {
        if axis >= self.ndims() {
            Err(TopologyError::AxisOutOfRange {
                axis,
                ndims: self.ndims(),
            })
        } else {
            Ok(())
        }
    }

    fn not_in_mesh(&self, node: NodeId) -> TopologyError {
        TopologyError::NodeNotInMesh {
            node,
            shape: self.shape.clone(),
        }
    }

    /// The coordinate of `node` along `axis`: GINV of its field. Assumes
    /// `axis` is valid; may return a coordinate in the padding.
    fn field_coord(&self, node: NodeId, axis: usize) -> u32 {
        ginv((node >> self.offsets[axis]) & low_mask(self.bits[axis]))
    }

    /// `node` with its `axis` field replaced by Gray-coded `coord`.
    fn with_coord(&self, node: NodeId, axis: usize, coord: u32) -> NodeId {
        let offset = self.offsets[axis];
        let mask = low_mask(self.bits[axis]) << offset;
        (node & !mask) | (gray(coord) << offset)
    }

    /// The coordinates of `node` in the mesh, each starting at 0 (the seed's
    /// `COORDS`, §5).
    ///
    /// # Errors
    /// [`TopologyError::NodeOutOfRange`] when `node` is not in the cube,
    /// [`TopologyError::NodeNotInMesh`] when the mesh does not use it (the
    /// seed returns all `-1`).
    pub fn coords(&self, node: NodeId) -> Result<Vec<u32>, TopologyError> {
        check_node(node, self.cube_dim)?;
        if node >> self.needed_dim != 0 {
            return Err(self.not_in_mesh(node));
        }
        let coords: Vec<u32> = (0..self.ndims())
            .map(|axis| self.field_coord(node, axis))
            .collect();
        if coords.iter().zip(&self.shape).any(|(c, side)| c >= side) {
            return Err(self.not_in_mesh(node));
        }
        Ok(coords)
    }

    /// The node at `coords` (the inverse of [`Mesh::coords`]).
    ///
    /// # Errors
    /// [`TopologyError::CoordsOutOfRange`] when `coords` does not have one
    /// entry per axis or a coordinate is not below its side length.
    pub fn node_at(&self, coords: &[u32]) -> Result<NodeId, TopologyError> {
        if coords.len() != self.ndims() || coords.iter().zip(&self.shape).any(|(c, side)| c >= side)
        {
            return Err(TopologyError::CoordsOutOfRange {
                coords: coords.to_vec(),
                shape: self.shape.clone(),
            });
        }
        Ok(coords
            .iter()
            .enumerate()
            .fold(0, |node, (axis, &c)| self.with_coord(node, axis, c)))
    }

    /// The node after `node` along `axis` (the seed's `SUCC(I)`): `None` at
    /// the last coordinate of a closed axis; the node at coordinate 0 at the
    /// last coordinate of a periodic one.
    ///
    /// # Errors
    /// [`TopologyError::AxisOutOfRange`] for a bad axis, and the errors of
    /// [`Mesh::coords`] for a node outside the mesh.
    pub fn successor(&self, node: NodeId, axis: usize) -> Result<Option<NodeId>, TopologyError> {
        self.check_axis(axis)?;
        let coords = self.coords(node)?;
        let side = self.shape[axis];
        let next = if coords[axis] + 1 < side {
            coords[axis] + 1
        } else {
            match self.boundary[axis] {
                Boundary::Periodic => 0,
                Boundary::Closed => return Ok(None),
            }
        };
        Ok(Some(self.with_coord(node, axis, next)))
    }

    /// The node before `node` along `axis` (the seed's `PRED(I)`): `None` at
    /// coordinate 0 of a closed axis; the node at the last coordinate at
    /// coordinate 0 of a periodic one.
    ///
    /// # Errors
    /// As for [`Mesh::successor`].
    pub fn predecessor(&self, node: NodeId, axis: usize) -> Result<Option<NodeId>, TopologyError> {
        self.check_axis(axis)?;
        let coords = self.coords(node)?;
        let prev = match (coords[axis], self.boundary[axis]) {
            (0, Boundary::Periodic) => self.shape[axis] - 1,
            (0, Boundary::Closed) => return Ok(None),
            (c, _) => c - 1,
        };
        Ok(Some(self.with_coord(node, axis, prev)))
    }

    /// Everything MESH computes for `node` (§5): coordinates, predecessors and
    /// successors along every axis.
    ///
    /// # Errors
    /// As for [`Mesh::coords`].
    #[doc(alias = "MESH")]
    pub fn locate(&self, node: NodeId) -> Result<MeshPosition, TopologyError> {
        let coords = self.coords(node)?;
        let mut pred = Vec::with_capacity(self.ndims());
        let mut succ = Vec::with_capacity(self.ndims());
        for axis in 0..self.ndims() {
            pred.push(self.predecessor(node, axis)?);
            succ.push(self.successor(node, axis)?);
        }
        Ok(MeshPosition { coords, pred, succ })
    }
}

/// The most balanced `ndims`-D mesh of power-of-two sides over all `2^d`
/// nodes: the `d` bits are dealt out as evenly as possible, the later axes
/// getting the extra ones. For 2-D that is `2^floor(d/2) x 2^ceil(d/2)`.
/// `ndims == 0` gives an empty shape. Pass the result to [`Mesh::new`] with
/// `cube_dim = d`.
///
/// # Panics
/// When `d > MAX_DIM`.
///
/// ```
/// use hypercube_topology::mesh_shape_for;
/// assert_eq!(mesh_shape_for(5, 2), vec![4, 8]);
/// assert_eq!(mesh_shape_for(4, 3), vec![2, 2, 4]);
/// ```
pub fn mesh_shape_for(d: u32, ndims: u32) -> Vec<u32> {
    assert!(
        d <= crate::MAX_DIM,
        "mesh_shape_for: dimension {d} exceeds MAX_DIM ({})",
        crate::MAX_DIM
    );
    if ndims == 0 {
        return Vec::new();
    }
    let (each, extra) = (d / ndims, d % ndims);
    (0..ndims)
        .map(|axis| {
            let bits = if axis >= ndims - extra {
                each + 1
            } else {
                each
            };
            1 << bits
        })
        .collect()
}

#[cfg(test)]
mod tests;
