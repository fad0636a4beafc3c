//! The seed's collective routines (§2–§4): GSENDW, GRECVW, GOP and GCAT, with the host
//! root [`HOST_ROOT`].

use super::args::{count, length, nonneg};
use crate::base::message::MsgType;
use crate::error::{Error, RecoveredData, Result};
use crate::ipsc::{Element, Op};
use crate::node::Node;

/// The seed's root number of the host (`-32768`).
pub const HOST_ROOT: i32 = -32768;

/// GSENDW (§2): broadcast `buf[..len]` from this node to its subcube of dimension `dim`.
/// Called on the host, it broadcasts into the subcube of dimension `dim` containing node
/// 0, whose nodes receive with [`grecvw_from_host`].
#[doc(alias = "GSENDW")]
pub fn gsendw(ci: &Node, type_: i32, buf: &[u8], len: i32, dim: i32) -> Result<()> {
    let ty = nonneg("GSENDW", "TYPE", type_)?;
    let len = length("GSENDW", "LEN", i64::from(len), buf.len())?;
    let dim = nonneg("GSENDW", "DIM", dim)?;
    if ci.is_host() {
        return ci.gsend_from_host(MsgType(ty), &buf[..len], 0, dim);
    }
    ci.gsend(&buf[..len], dim)
}

/// GRECVW (§2) for a broadcast whose root is the host: like [`grecvw`], with the `TYPE`
/// the host used.
#[doc(alias = "GRECVW")]
pub fn grecvw_from_host(
    ci: &Node,
    type_: i32,
    buf: &mut [u8],
    len: i32,
    cnt: &mut i32,
    dim: i32,
) -> Result<()> {
    let ty = nonneg("GRECVW", "TYPE", type_)?;
    let len = length("GRECVW", "LEN", i64::from(len), buf.len())?;
    let data = ci.grecv_from_host(MsgType(ty), nonneg("GRECVW", "DIM", dim)?)?;
    *cnt = count(data.len());
    if data.len() > len {
        return Err(Error::GrecvwTruncated {
            needed: data.len() as u64,
            capacity: len as u64,
            data: RecoveredData(data),
        });
    }
    buf[..data.len()].copy_from_slice(&data);
    Ok(())
}

/// GRECVW (§2): receive a broadcast into `buf[..len]`; `cnt` is set to the message length.
///
/// # Errors
/// `GRECVW: MESSAGE TRUNCATED` when the message is longer than `len`: `cnt` is still set
/// to its length, `buf` is unchanged, and the whole message is in the error.
#[doc(alias = "GRECVW")]
pub fn grecvw(
    ci: &Node,
    type_: i32,
    buf: &mut [u8],
    len: i32,
    cnt: &mut i32,
    dim: i32,
) -> Result<()> {
    nonneg("GRECVW", "TYPE", type_)?;
    let len = length("GRECVW", "LEN", i64::from(len), buf.len())?;
    match ci.grecv_into(&mut buf[..len], nonneg("GRECVW", "DIM", dim)?) {
        Ok(n) => {
            *cnt = count(n);
            Ok(())
        }
        Err(e) => {
            if let Error::GrecvwTruncated { needed, .. } = &e {
                *cnt = count(*needed as usize);
            }
            Err(e)
        }
    }
}

/// GOP (§3): combine `x[..n]` over the root's subcube with `op` = `'+'`, `'*'`, `'M'`
/// (maximum) or `'m'` (minimum). `work` is the seed's workspace, kept for porting and not
/// used.
#[doc(alias = "GOP")]
#[allow(clippy::too_many_arguments)] // the seed's calling sequence
pub fn gop<T: Element>(
    ci: &Node,
    type_: i32,
    x: &mut [T],
    n: i32,
    op: char,
    root: i32,
    dim: i32,
    work: &mut [T],
) -> Result<()> {
    let _ = work;
    let ty = nonneg("GOP", "TYPE", type_)?;
    let n = length("GOP", "N", i64::from(n), x.len())?;
    let op = Op::from_seed_char(op).ok_or_else(|| Error::IpscArgument {
        routine: "GOP",
        detail: format!("OP = {op:?} is not an operation; pass '+', '*', 'M' or 'm'"),
    })?;
    if root == HOST_ROOT {
        return ci.gop_to_host(&mut x[..n], op, MsgType(ty), nonneg("GOP", "DIM", dim)?);
    }
    ci.gop(
        &mut x[..n],
        op,
        nonneg("GOP", "ROOT", root)?,
        nonneg("GOP", "DIM", dim)?,
    )
}

/// GCAT (§4): concatenate every member's `buf[..msglen]` at `root`; the result is left in
/// `buf[..cnt]` (the partial result of the subtree at other nodes).
///
/// # Errors
/// `GCAT: CALLED BY NON PARTICIPANT`, and `GCAT: BUFFER LENGTH EXCEEDED` when the result
/// is longer than `buflen` (then `cnt` is its length and the result is in the error).
#[doc(alias = "GCAT")]
#[allow(clippy::too_many_arguments)] // the seed's calling sequence
pub fn gcat(
    ci: &Node,
    type_: i32,
    buf: &mut [u8],
    buflen: i32,
    msglen: i32,
    cnt: &mut i32,
    root: i32,
    dim: i32,
) -> Result<()> {
    let ty = nonneg("GCAT", "TYPE", type_)?;
    let buflen = length("GCAT", "BUFLEN", i64::from(buflen), buf.len())?;
    let msglen = length("GCAT", "MSGLEN", i64::from(msglen), buflen)?;
    if root == HOST_ROOT {
        let dim = nonneg("GCAT", "DIM", dim)?;
        ci.gcat_to_host(&buf[..msglen], MsgType(ty), dim)?;
        *cnt = count(msglen);
        return Ok(());
    }
    let root = nonneg("GCAT", "ROOT", root)?;
    let dim = nonneg("GCAT", "DIM", dim)?;
    match ci.gcat_into(&mut buf[..buflen], msglen, root, dim) {
        Ok(n) => {
            *cnt = count(n);
            Ok(())
        }
        Err(e) => {
            if let Error::GcatBufferExceeded { needed, .. } = &e {
                *cnt = count(*needed as usize);
            }
            Err(e)
        }
    }
}
