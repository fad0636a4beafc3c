//! What every utility checks first (the subcube's dimension, a node number) and the
//! reserved tag a type-keyed utility sends under; with `high_bit`, the trees' bit helper.

use hypercube_topology::NodeId;

use crate::base::tags::{Keyed, MAX_RESERVED_USER_TYPE};
use crate::error::{Error, Result};
use crate::node::Node;

/// The reserved tag of a type-keyed utility message (the layout is in `crate::base::tags`).
pub(super) fn keyed_tag(routine: &'static str, slot: Keyed, ty: u32) -> Result<u32> {
    crate::base::tags::keyed(slot, ty).ok_or_else(|| Error::IpscArgument {
        routine,
        detail: format!(
            "message type {ty} is too large; this utility maps its type into a reserved \
             range and accepts types 0..={MAX_RESERVED_USER_TYPE}"
        ),
    })
}

/// Check `dim` against the cube: the subcube of dimension `dim` must exist.
pub(super) fn check_dim(node: &Node, routine: &'static str, dim: u32) -> Result<()> {
    if node.is_host() {
        return Err(Error::IpscArgument {
            routine,
            detail: "the host is not a member of any subcube; use the host variant \
                     (e.g. gsend_from_host, gop_result_at_host) on the host"
                .into(),
        });
    }
    if dim > node.cubedim() {
        return Err(Error::IpscArgument {
            routine,
            detail: format!(
                "subcube dimension {dim} exceeds the cube dimension {}; pass a dimension in \
                 0..={}",
                node.cubedim(),
                node.cubedim()
            ),
        });
    }
    Ok(())
}

/// Check that `node` is a node of the cube.
pub(super) fn check_node(node: &Node, what: &str, n: NodeId) -> Result<()> {
    if n >= node.numnodes() {
        return Err(Error::InvalidNode {
            node: i64::from(n),
            what: format!("{what} (cube of dimension {})", node.cubedim()),
            first: 0,
            last: node.numnodes() - 1,
        });
    }
    Ok(())
}

/// The highest set bit of a non-zero `x` (as a one-bit mask).
pub(super) fn high_bit(x: u32) -> u32 {
    1 << (31 - x.leading_zeros())
}
