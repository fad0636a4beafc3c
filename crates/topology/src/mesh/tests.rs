//! Tests of `mesh.rs`: the balanced shapes, the 1-D mesh as the Gray ring, the 2-D layout,
//! padded sides, the errors (a mesh too large, invalid meshes and arguments), and as
//! properties: mesh neighbours are cube neighbours, periodic sides close each line.

use super::*;
use crate::cube::hamming;
use crate::gray::ring_successor;
use proptest::prelude::*;
use Boundary::{Closed, Periodic};

#[test]
fn balanced_shapes() {
    assert_eq!(mesh_shape_for(0, 2), vec![1, 1]);
    assert_eq!(mesh_shape_for(5, 1), vec![32]);
    assert_eq!(mesh_shape_for(6, 2), vec![8, 8]);
    assert_eq!(mesh_shape_for(7, 2), vec![8, 16]);
    assert_eq!(mesh_shape_for(7, 3), vec![4, 4, 8]);
    assert_eq!(mesh_shape_for(8, 3), vec![4, 8, 8]);
    assert!(mesh_shape_for(3, 0).is_empty());
    for d in 0..=12 {
        for n in 1..=4 {
            let shape = mesh_shape_for(d, n);
            assert_eq!(shape.iter().product::<u32>(), 1 << d);
            let mesh = Mesh::new(&shape, &vec![Periodic; n as usize], d).unwrap();
            assert_eq!(mesh.needed_dim(), d);
        }
    }
}

#[test]
fn one_d_mesh_is_the_gray_ring() {
    let mesh = Mesh::new(&[8], &[Periodic], 3).unwrap();
    for node in 0..8 {
        assert_eq!(
            mesh.successor(node, 0).unwrap(),
            ring_successor(node, 3).ok()
        );
        assert_eq!(mesh.coords(node).unwrap(), vec![ginv(node)]);
    }
}

#[test]
fn two_d_layout() {
    let mesh = Mesh::new(&[4, 4], &[Periodic, Closed], 4).unwrap();
    assert_eq!(mesh.node_at(&[1, 2]), Ok(13));
    assert_eq!(mesh.coords(13), Ok(vec![1, 2]));
    let pos = mesh.locate(13).unwrap();
    assert_eq!(pos.coords, vec![1, 2]);
    assert_eq!(pos.pred, vec![Some(12), Some(5)]); // [0,2], [1,1]
    assert_eq!(pos.succ, vec![Some(15), Some(9)]); // [2,2], [1,3]
                                                   // Periodic axis 0 wraps; closed axis 1 stops.
    assert_eq!(
        mesh.predecessor(mesh.node_at(&[0, 3]).unwrap(), 0),
        Ok(mesh.node_at(&[3, 3]).ok())
    );
    assert_eq!(mesh.successor(mesh.node_at(&[2, 3]).unwrap(), 1), Ok(None));
    assert_eq!(
        mesh.predecessor(mesh.node_at(&[2, 0]).unwrap(), 1),
        Ok(None)
    );
}

#[test]
fn non_power_of_two_sides_are_padded() {
    // 3 x 5 rounds up to 4 x 8: a 5-cube, as the listing's WORK.
    let mesh = Mesh::new(&[3, 5], &[Closed, Periodic], 6).unwrap();
    assert_eq!(mesh.padded_shape(), vec![4, 8]);
    assert_eq!(mesh.needed_dim(), 5);
    assert_eq!(mesh.node_count(), 15);
    assert_eq!((0..64).filter(|&n| mesh.contains(n)).count(), 15);
    // Field 0 = gray(3) = 2 decodes to coordinate 3: padding.
    assert_eq!(
        mesh.coords(2),
        Err(TopologyError::NodeNotInMesh {
            node: 2,
            shape: vec![3, 5]
        })
    );
    // Beyond the mesh's 5-subcube, but inside the 6-cube.
    assert!(!mesh.contains(32));
    assert_eq!(
        mesh.coords(64),
        Err(TopologyError::NodeOutOfRange { node: 64, dim: 6 })
    );
    // Periodic wrap on a side of 5 is a mesh edge but not a cube link.
    let last = mesh.node_at(&[1, 4]).unwrap();
    let first = mesh.node_at(&[1, 0]).unwrap();
    assert_eq!(mesh.successor(last, 1), Ok(Some(first)));
    assert!(hamming(last, first) > 1);
}

#[test]
fn too_large_names_the_seed_message() {
    let err = Mesh::new(&[4, 8], &[Closed, Closed], 4).unwrap_err();
    assert_eq!(
        err,
        TopologyError::MeshTooLarge {
            shape: vec![4, 8],
            padded: vec![4, 8],
            needed_dim: 5,
            cube_dim: 4
        }
    );
    let msg = err.to_string();
    assert!(msg.contains("MESH: TOO LARGE"), "{msg}");
    assert!(msg.contains("at least 5"), "{msg}");
    // 3 x 3 needs 4 x 4 after rounding: too large for a 3-cube, though 9 > 8 anyway;
    // 3 x 2 rounds to 4 x 2 = 8 and fits.
    assert!(Mesh::new(&[3, 2], &[Closed, Closed], 3).is_ok());
    assert!(Mesh::new(&[5, 1], &[Closed, Closed], 2).is_err());
    let huge = Mesh::new(&[u32::MAX, u32::MAX], &[Closed, Closed], 31).unwrap_err();
    assert!(matches!(
        huge,
        TopologyError::MeshTooLarge { needed_dim: 64, .. }
    ));
}

#[test]
fn invalid_meshes_and_arguments() {
    assert!(matches!(
        Mesh::new(&[], &[], 3),
        Err(TopologyError::InvalidMesh { .. })
    ));
    assert!(matches!(
        Mesh::new(&[2, 0], &[Closed, Closed], 3),
        Err(TopologyError::InvalidMesh { .. })
    ));
    let err = Mesh::new(&[2, 2], &[Closed], 3).unwrap_err();
    assert!(
        err.to_string().contains("2 side lengths but 1 boundaries"),
        "{err}"
    );
    assert!(matches!(
        Mesh::new(&[2], &[Closed], 32),
        Err(TopologyError::DimensionTooLarge { .. })
    ));
    let mesh = Mesh::new(&[2, 2], &[Closed, Closed], 2).unwrap();
    assert_eq!(
        mesh.successor(0, 2),
        Err(TopologyError::AxisOutOfRange { axis: 2, ndims: 2 })
    );
    assert!(matches!(
        mesh.node_at(&[0]),
        Err(TopologyError::CoordsOutOfRange { .. })
    ));
    assert!(matches!(
        mesh.node_at(&[0, 2]),
        Err(TopologyError::CoordsOutOfRange { .. })
    ));
    assert_eq!(mesh.shape(), &[2, 2]);
    assert_eq!(mesh.boundary(), &[Closed, Closed]);
    assert_eq!(mesh.ndims(), 2);
    assert_eq!(mesh.cube_dim(), 2);
}

#[test]
fn side_one_axes() {
    let mesh = Mesh::new(&[1, 4], &[Periodic, Closed], 2).unwrap();
    assert_eq!(mesh.successor(3, 0), Ok(Some(3))); // a ring of one
    let closed = Mesh::new(&[1], &[Closed], 0).unwrap();
    assert_eq!(closed.successor(0, 0), Ok(None));
    assert_eq!(closed.coords(0), Ok(vec![0]));
}

fn mesh_strategy() -> impl Strategy<Value = Mesh> {
    (
        proptest::collection::vec((1u32..=16, any::<bool>()), 1..=3),
        0u32..=2,
    )
        .prop_map(|(axes, extra)| {
            let shape: Vec<u32> = axes.iter().map(|a| a.0).collect();
            let boundary: Vec<Boundary> = axes
                .iter()
                .map(|a| if a.1 { Periodic } else { Closed })
                .collect();
            let needed: u32 = shape.iter().map(|&s| side_bits(s)).sum();
            Mesh::new(&shape, &boundary, needed + extra).unwrap()
        })
}

proptest! {
    #[test]
    fn mesh_neighbors_are_cube_neighbors(mesh in mesh_strategy()) {
        let mut members = 0;
        for node in 0..(1u32 << mesh.cube_dim()) {
            let Ok(coords) = mesh.coords(node) else { continue };
            members += 1;
            prop_assert_eq!(mesh.node_at(&coords), Ok(node));
            for axis in 0..mesh.ndims() {
                let side = mesh.shape()[axis];
                let succ = mesh.successor(node, axis).unwrap();
                let pred = mesh.predecessor(node, axis).unwrap();
                let wraps_forward = coords[axis] + 1 == side;
                let wraps_back = coords[axis] == 0;
                match mesh.boundary()[axis] {
                    Boundary::Closed => {
                        prop_assert_eq!(succ.is_none(), wraps_forward);
                        prop_assert_eq!(pred.is_none(), wraps_back);
                    }
                    Boundary::Periodic => {
                        prop_assert!(succ.is_some() && pred.is_some());
                    }
                }
                if let Some(s) = succ {
                    // successor and predecessor are inverse
                    prop_assert_eq!(mesh.predecessor(s, axis).unwrap(), Some(node));
                    let mut expected = coords.clone();
                    expected[axis] = if wraps_forward { 0 } else { coords[axis] + 1 };
                    prop_assert_eq!(mesh.coords(s).unwrap(), expected);
                    // Non-wrapping steps, and wraps on power-of-two sides > 1,
                    // are single cube links.
                    if !wraps_forward || (side.is_power_of_two() && side > 1) {
                        prop_assert_eq!(hamming(node, s), 1);
                    }
                }
                if let Some(p) = pred {
                    prop_assert_eq!(mesh.successor(p, axis).unwrap(), Some(node));
                }
            }
        }
        prop_assert_eq!(members, mesh.node_count());
    }

    #[test]
    fn periodic_wrap_closes_each_line(d in 1u32..=8, ndims in 1u32..=3) {
        let shape = mesh_shape_for(d, ndims);
        let mesh = Mesh::new(&shape, &vec![Periodic; ndims as usize], d).unwrap();
        for (axis, &side) in shape.iter().enumerate() {
            // Walking `side` successors from node 0 visits `side` distinct
            // nodes, one cube link at a time, and returns to node 0.
            let mut at = 0;
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..side {
                prop_assert!(seen.insert(at));
                let next = mesh.successor(at, axis).unwrap().unwrap();
                if side > 1 {
                    prop_assert_eq!(hamming(at, next), 1);
                }
                at = next;
            }
            prop_assert_eq!(at, 0);
        }
    }
}
