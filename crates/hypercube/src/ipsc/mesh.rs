//! Mesh embedding, MESH (seed §5): this node's place in a 1-, 2- or 3-D (or higher) mesh
//! whose neighbors are cube neighbors, through Gray codes. The bit math is
//! [`crate::topology::Mesh`]; this file binds it to a node and to the runtime's errors.

use hypercube_topology::{Boundary, Mesh, MeshPosition, NodeId};

use crate::error::Result;
use crate::node::Node;

/// MESH for any node `me` of a cube of dimension `cube_dim` (seed §5): its coordinates and
/// its predecessor and successor along each axis of a mesh with side lengths `shape` and
/// one [`Boundary`] per axis. `Ok(None)` when `me` is not used by the mesh (the seed returns
/// all `-1`). Useful for the diagonal neighbors the seed mentions: call it with a
/// neighbor's number.
///
/// # Errors
/// [`crate::Error::Topology`] wrapping `MeshTooLarge` (text `MESH: TOO LARGE`, §8) when the
/// mesh, its sides rounded up to powers of two, needs more than `2^cube_dim` nodes; or
/// `InvalidMesh` for an empty shape, a zero side or a boundary list of another length.
#[doc(alias = "MESH")]
pub fn mesh_position(
    me: NodeId,
    shape: &[u32],
    boundary: &[Boundary],
    cube_dim: u32,
) -> Result<Option<MeshPosition>> {
    let mesh = Mesh::new(shape, boundary, cube_dim)?;
    if !mesh.contains(me) {
        return Ok(None);
    }
    Ok(Some(mesh.locate(me)?))
}

impl Node {
    /// This node's place in a mesh embedded in the whole cube (seed §5, MESH): coordinates,
    /// and the predecessor and successor along each axis (`None` at a closed boundary).
    /// Mesh neighbors are cube neighbors (a periodic wrap is one link when the side is a
    /// power of two). `Ok(None)` when this node is not used by the mesh.
    ///
    /// ```no_run
    /// use hypercube::topology::Boundary;
    /// # fn main() -> hypercube::Result<()> {
    /// let node = hypercube::init()?; // a 4-cube
    /// let pos = node.mesh(&[4, 4], &[Boundary::Periodic, Boundary::Closed])?.unwrap();
    /// let east = pos.succ[0].unwrap(); // always present: periodic in x
    /// # let _ = east; Ok(()) }
    /// ```
    ///
    /// # Errors
    /// As [`mesh_position`]: `MESH: TOO LARGE` when the mesh does not fit this cube.
    #[doc(alias = "MESH")]
    pub fn mesh(&self, shape: &[u32], boundary: &[Boundary]) -> Result<Option<MeshPosition>> {
        mesh_position(self.mynode(), shape, boundary, self.cubedim())
    }
}
