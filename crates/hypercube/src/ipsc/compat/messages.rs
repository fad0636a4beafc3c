//! The seed's point-to-point routines: long messages (§6, LSENDW / LRECVW) and the sparse
//! send (§7, SPGSNW / SPGRCW).

use hypercube_topology::NodeId;

use super::args::{count, length, nonneg};
use crate::base::message::MsgType;
use crate::error::{Error, Result};
use crate::node::Node;

/// LSENDW (§6): send `buf[..len4]` to `node` as a long message. `pid` is ignored.
#[doc(alias = "LSENDW")]
pub fn lsendw(ci: &Node, type_: i32, buf: &[u8], len4: i64, node: i32, pid: i32) -> Result<()> {
    let _ = pid;
    let ty = nonneg("LSENDW", "TYPE", type_)?;
    let len = length("LSENDW", "LEN4", len4, buf.len())?;
    ci.lsend(nonneg("LSENDW", "NODE", node)?, MsgType(ty), &buf[..len])
}

/// LRECVW (§6): receive a long message of this type from any node into `buf[..len4]`;
/// sets `cnt4` to its length, `node` to its source and `pid` to 0.
///
/// # Errors
/// `LRECVW: TRUNCATED MESSAGE` when it is longer than `len4`: `cnt4` and `node` are set,
/// nothing is received, and the message stays pending for the next LRECVW.
#[doc(alias = "LRECVW")]
#[allow(clippy::too_many_arguments)] // the seed's calling sequence
pub fn lrecvw(
    ci: &Node,
    type_: i32,
    buf: &mut [u8],
    len4: i64,
    cnt4: &mut i64,
    node: &mut i32,
    pid: &mut i32,
) -> Result<()> {
    let ty = nonneg("LRECVW", "TYPE", type_)?;
    let len = length("LRECVW", "LEN4", len4, buf.len())?;
    *pid = 0;
    match ci.lrecv_into(None, MsgType(ty), &mut buf[..len]) {
        Ok(st) => {
            *cnt4 = st.len() as i64;
            *node = st.source() as i32;
            Ok(())
        }
        Err(e) => {
            if let Error::LrecvwTruncated {
                needed,
                source_node,
                ..
            } = &e
            {
                *cnt4 = *needed as i64;
                *node = *source_node as i32;
            }
            Err(e)
        }
    }
}

/// SPGSNW (§7): send `buf[..len]` to the `number` nodes of `list` through SPLIT's fan-out
/// tree. Unlike the seed, `list` is not destroyed and `buf` needs no room for it.
#[doc(alias = "SPGSNW")]
pub fn spgsnw(
    ci: &Node,
    type_: i32,
    buf: &[u8],
    len: i32,
    list: &[i32],
    number: i32,
) -> Result<()> {
    let ty = nonneg("SPGSNW", "TYPE", type_)?;
    let len = length("SPGSNW", "LEN", i64::from(len), buf.len())?;
    let number = length("SPGSNW", "NUMBER", i64::from(number), list.len())?;
    let targets = list[..number]
        .iter()
        .map(|&v| nonneg("SPGSNW", "a node number in LIST", v))
        .collect::<Result<Vec<NodeId>>>()?;
    ci.spgsend(MsgType(ty), &buf[..len], &targets)
}

/// SPGRCW (§7): receive a sparse global send into `buf[..len]` and forward it; `cnt` is
/// set to the message length (exact: not rounded to the integer size, and `len` need not
/// hold the appended list).
///
/// # Errors
/// `SPGRCW: TRUNCATED MESSAGE` when the message is longer than `len`: `cnt` is set, the
/// message was still forwarded, and it is returned whole in the error.
#[doc(alias = "SPGRCW")]
pub fn spgrcw(ci: &Node, type_: i32, buf: &mut [u8], len: i32, cnt: &mut i32) -> Result<()> {
    let ty = nonneg("SPGRCW", "TYPE", type_)?;
    let len = length("SPGRCW", "LEN", i64::from(len), buf.len())?;
    match ci.spgrecv_into(MsgType(ty), &mut buf[..len]) {
        Ok(n) => {
            *cnt = count(n);
            Ok(())
        }
        Err(e) => {
            if let Error::SpgrcwTruncated { needed, .. } = &e {
                *cnt = count(*needed as usize);
            }
            Err(e)
        }
    }
}
