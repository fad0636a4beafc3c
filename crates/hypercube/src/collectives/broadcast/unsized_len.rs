//! A broadcast whose length only the root knows (`bcast_vec`, `bcast_value`). Every member
//! must choose the same algorithm, and the choice depends on the length, so the members
//! have to learn it first. A first call, Alg. 4.2 (Grama §4.1, eq. 4.1) whatever the
//! length, carries a head byte and then either the data itself — where the automatic choice
//! for that length would be Alg. 4.2 anyway and the data is short (up to 64 KiB), so this
//! one call is the whole broadcast — or the length, after which the data follows by the
//! algorithm chosen for it. (Before, the length always went first, in a broadcast of its
//! own: 8 B `bcast_vec` cost 1.3–1.5× the byte form; `docs/perf/typed.md`.)
//!
//! ```text
//! head byte 0: [0 | data ...]          the broadcast itself
//! head byte 1: [1 | length, u64 LE]    then bcast(root, data, length)
//! head byte 2: [2]                     the root had nothing to send: every member fails
//! ```

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::hypercube;
use crate::base::parts::Parts;
use crate::collectives::ctx::rel_root;
use crate::collectives::select::{choose, Algorithm, Operation};
use crate::collectives::values::read_u64;
use crate::collectives::Subcube;
use crate::error::{Error, Result};

/// What the first call brought.
pub(crate) enum Head {
    /// The data itself: the broadcast is done.
    Data(Bytes),
    /// Its length: the data follows by the algorithm chosen for it.
    Len(usize),
}

/// Data longer than this goes after its length: it is received in place, which needs its
/// length before it comes, and a copy to put the head byte in front costs more than the
/// short length broadcast. 64 KiB, the default eager limit: the transport lets the head
/// byte past that limit (before it did not, and a 64 KiB `bcast_vec` went by rendezvous,
/// 1.5–2.2× the byte form; `docs/perf/typed.md`).
const INLINE_UP_TO: usize = 64 << 10;

const DATA: u8 = 0;
const LEN: u8 = 1;
const NOTHING: u8 = 2;

impl Subcube<'_> {
    /// The first call of a broadcast of a length only the root knows: the root passes
    /// `Some(data)` (or `None` if it has nothing, which fails every member with
    /// `InvalidArgument(nothing())`), the others `None`. Returns the data where it came
    /// with this call, else its length.
    pub(crate) fn bcast_head_or_data(
        &self,
        root: NodeId,
        data: Option<&Bytes>,
        nothing: impl FnOnce() -> String,
    ) -> Result<Head> {
        let r = rel_root(self.node, self.dim, root)?;
        let at_root = self.node.mynode() == root;
        let mine = data.filter(|_| at_root);
        let inline = match mine {
            Some(d) => self.inline(d.len())?,
            None => false,
        };
        let head = match mine {
            // The head byte and the caller's data go as two parts, not joined by a copy.
            Some(d) if inline => Parts::Many(vec![Bytes::from_static(&[DATA]), d.clone()]),
            Some(d) => {
                let mut m = vec![LEN];
                m.extend_from_slice(&(d.len() as u64).to_le_bytes());
                Parts::One(Bytes::from(m))
            }
            None if at_root => Parts::One(Bytes::from_static(&[NOTHING])),
            None => Parts::default(),
        };
        let (_, c) = self
            .with(Algorithm::Hypercube)
            .start(Operation::Bcast, head.len(), true)?;
        let got = c.guard(hypercube::bcast_any_len(&c, r, head))?;
        if let Some(d) = mine {
            // The root knows what it sent (and does not join its parts to read it back).
            return Ok(if inline {
                Head::Data(d.clone())
            } else {
                Head::Len(d.len())
            });
        }
        let got = got.into_bytes();
        match got.first() {
            Some(&DATA) => Ok(Head::Data(got.slice(1..))),
            Some(&LEN) if got.len() == 9 => {
                let n = read_u64(&got[1..]);
                usize::try_from(n).map(Head::Len).map_err(|_| {
                    Error::InvalidArgument(format!(
                        "bcast: node {root} broadcasts {n} bytes, more than this machine can hold"
                    ))
                })
            }
            Some(&NOTHING) => Err(Error::InvalidArgument(nothing())),
            _ => Err(Error::InvalidArgument(format!(
                "bcast: the first message of a broadcast from node {root} is not one this \
                 version sends ({} bytes); do all members run the same program?",
                got.len()
            ))),
        }
    }

    /// The whole broadcast of a length only the root knows: the first call, then the data
    /// by the handle's algorithm if it did not come with it. The root passes `Some(data)`
    /// (`None`: every member fails with `InvalidArgument(nothing())`), the others `None`.
    pub(crate) fn bcast_unsized(
        &self,
        root: NodeId,
        data: Option<&Bytes>,
        nothing: impl FnOnce() -> String,
    ) -> Result<Bytes> {
        match self.bcast_head_or_data(root, data, nothing)? {
            Head::Data(b) => Ok(b),
            Head::Len(n) => self.bcast(root, data.cloned().unwrap_or_default(), n),
        }
    }

    /// Does a broadcast of `len` bytes go in the first call (the automatic choice for it
    /// is Alg. 4.2, and it is at most [`INLINE_UP_TO`] bytes long)?
    fn inline(&self, len: usize) -> Result<bool> {
        let alg = choose(Operation::Bcast, self.alg, self.dim, len, true)?;
        Ok(alg == Algorithm::Hypercube && len <= INLINE_UP_TO)
    }
}

#[cfg(test)]
mod tests {
    use super::Head;
    use bytes::Bytes;

    /// Short data comes with the first call; long data (received in place) and data from
    /// a handle that asks for another algorithm come after their length; a root with
    /// nothing fails every member alike.
    #[test]
    fn the_first_call_brings_short_data_or_the_length() {
        let failures = crate::local::run_local(2, |node| {
            let cube = node.cube();
            let root = 3;
            let at_root = node.mynode() == root;
            let mut failed = Vec::new();
            for (len, sub, inline) in [
                (8usize, cube, true),
                ((64 << 10) + 1, cube, false),
                (1 << 20, cube, false),
                (
                    8,
                    cube.with(crate::collectives::Algorithm::ScatterAllgather),
                    false,
                ),
            ] {
                let data = Bytes::from(vec![5u8; len]);
                match sub.bcast_head_or_data(root, at_root.then_some(&data), String::new) {
                    Ok(Head::Data(b)) if inline && b == data => {}
                    Ok(Head::Len(n)) if !inline && n == len => {}
                    Ok(Head::Data(b)) => failed.push(format!("{len}: {} bytes of data", b.len())),
                    Ok(Head::Len(n)) => failed.push(format!("{len}: the length {n}")),
                    Err(e) => failed.push(format!("{len}: {e}")),
                }
            }
            match cube.bcast_head_or_data(root, None, || "nothing here".into()) {
                Err(crate::Error::InvalidArgument(m)) if m == "nothing here" => {}
                _ => failed.push("a root with nothing".into()),
            }
            failed
        });
        let failures: Vec<String> = failures.into_iter().flatten().collect();
        assert!(failures.is_empty(), "{failures:?}");
    }
}
