//! Several blocks as one message ([`pack`], [`unpack`], [`concat()`], [`bounds`]), the check
//! that members passed blocks of one length ([`check_equal`], [`unpack_equal`]), and the
//! words of a length error in the caller's terms ([`Unit`], [`call_and_hint`]): what the
//! algorithms of `collectives/` share besides the call itself (`ctx.rs`).

use bytes::{Bytes, BytesMut};

use crate::base::parts::Parts;
use crate::error::{Error, Result};

/// The near-equal split of `len` items into `p` parts: part `j` is `bounds(len, p, j)`.
pub(crate) fn bounds(len: usize, p: u32, j: u32) -> std::ops::Range<usize> {
    let p = p as usize;
    let j = j as usize;
    (j * len / p)..((j + 1) * len / p)
}

/// Where each of blocks of `sizes` bytes starts when they lie one after the other, and
/// (the last entry) where they end: `sizes.len() + 1` offsets.
pub(crate) fn starts(sizes: &[usize]) -> Vec<usize> {
    std::iter::once(0)
        .chain(sizes.iter().scan(0, |end, &z| {
            *end += z;
            Some(*end)
        }))
        .collect()
}

/// How the blocks of one message are delimited.
#[derive(Clone, Copy)]
pub(crate) enum Layout<'a> {
    /// All blocks have the same length: the message length divided by their count.
    Equal,
    /// Block of relative rank `j` has `sizes[j]` bytes, known to everyone.
    Given(&'a [usize]),
    /// Lengths travel in the message: a little-endian u64 per block, then the data.
    Framed,
}

/// Blocks as one message: the blocks themselves, sent back to back without joining them
/// (a framed layout adds one small buffer of lengths in front).
pub(crate) fn pack(blocks: &[Bytes], layout: Layout<'_>) -> Parts {
    let mut parts = Vec::with_capacity(blocks.len() + 1);
    if let Layout::Framed = layout {
        let mut lens = BytesMut::with_capacity(8 * blocks.len());
        for x in blocks {
            lens.extend_from_slice(&(x.len() as u64).to_le_bytes());
        }
        parts.push(lens.freeze());
    }
    parts.extend(blocks.iter().cloned());
    Parts::from(parts)
}

/// With [`Layout::Equal`], every participant passes a block of the same length, so a
/// message of `n` blocks from `from` must be exactly `n` times this node's own block
/// (`own` bytes). Checked where a node receives blocks, so that a participant that passed
/// another length is an error naming it — not a message split into wrong blocks that
/// happen to divide evenly. Other layouts carry or know their lengths: always `Ok`.
pub(crate) fn check_equal(
    msg: &Bytes,
    n: usize,
    own: usize,
    layout: Layout<'_>,
    what: &str,
    from: u32,
) -> Result<()> {
    if !matches!(layout, Layout::Equal) || msg.len() == n * own {
        return Ok(());
    }
    let blocks = if n == 1 { "block" } else { "blocks" };
    Err(Error::InvalidArgument(match Unit::current() {
        Some(u) => format!(
            "{}: node {from} sent {} for {n} member{}'s slice{} where this node passed {} \
             per member: every member must pass the same number of elements{}",
            u.call,
            u.count(msg.len()),
            if n == 1 { "" } else { "s" },
            if n == 1 { "" } else { "s" },
            u.count(own),
            u.v_hint()
        ),
        None => format!(
            "{what}: node {from} sent {} bytes for {n} {blocks}, but this node's own block is \
             {own} bytes: every participant must pass a block of the same length{}",
            msg.len(),
            v_hint_bytes(what)
        ),
    }))
}

/// What a typed form (`allgather_slice`, `alltoall_vec`, ...) calls its data, set for the
/// length of its call to the byte form ([`Unit::during`]) so that a length error found
/// deep inside a byte algorithm speaks of elements and names the typed v-variant.
/// (Thread-local: a collective runs on its caller's thread.)
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unit {
    /// Bytes per element.
    pub size: usize,
    /// The element type's name.
    pub type_name: &'static str,
    /// The typed call (`"allgather_slice"`).
    pub call: &'static str,
    /// Its form for slices of different lengths (`"allgatherv_slice"`), if there is one.
    pub v_variant: Option<&'static str>,
}

thread_local! {
    static UNIT: std::cell::Cell<Option<Unit>> = const { std::cell::Cell::new(None) };
}

impl Unit {
    /// The unit of a typed call over elements of `T`.
    pub fn of<T: super::pod::Pod>(call: &'static str, v_variant: Option<&'static str>) -> Unit {
        Unit {
            size: T::WIRE_SIZE,
            type_name: std::any::type_name::<T>(),
            call,
            v_variant,
        }
    }

    /// Run `f` (the typed call's use of a byte form) with this unit in effect.
    pub fn during<R>(self, f: impl FnOnce() -> R) -> R {
        struct Restore(Option<Unit>);
        impl Drop for Restore {
            fn drop(&mut self) {
                UNIT.with(|u| u.set(self.0));
            }
        }
        let _restore = Restore(UNIT.with(|u| u.replace(Some(self))));
        f()
    }

    /// The unit of the typed call running on this thread, if any.
    pub fn current() -> Option<Unit> {
        UNIT.with(std::cell::Cell::get)
    }

    /// `bytes` as a count of elements: `"5 elements of f32"` (with the bytes if they are
    /// not a whole number of elements).
    pub fn count(&self, bytes: usize) -> String {
        let size = self.size.max(1);
        let n = bytes / size;
        let s = if n == 1 { "" } else { "s" };
        if bytes % size == 0 {
            format!("{n} element{s} of {}", self.type_name)
        } else {
            format!(
                "{bytes} bytes (not a whole number of {}-byte {} elements)",
                self.size, self.type_name
            )
        }
    }

    /// `" — for slices of different lengths use allgatherv_slice"`, or nothing.
    pub fn v_hint(&self) -> String {
        self.v_variant.map_or_else(String::new, |v| {
            format!(" (for slices of different lengths use {v})")
        })
    }
}

/// The call a length error names, and its hint at the v-variant: the typed call's when one
/// is running (`("alltoall_slice", " (for slices of different lengths use
/// alltoallv_slice)")`), else the byte form `what`'s.
pub(crate) fn call_and_hint(what: &str) -> (String, String) {
    match Unit::current() {
        Some(u) => (u.call.to_string(), u.v_hint()),
        None => (what.to_string(), v_hint_bytes(what)),
    }
}

/// The byte form's v-variant named in a length error of `what` (`allgather` →
/// `" (or use allgatherv)"`).
pub(crate) fn v_hint_bytes(what: &str) -> String {
    match what {
        "allgather" => " (or use allgatherv)".into(),
        "alltoall" => " (or use alltoallv)".into(),
        "gather" => " (or use gatherv)".into(),
        _ => String::new(),
    }
}

/// The error for a message of `n` blocks from `from` whose length is not `n · own` (one
/// that did not land where the receive said): [`check_equal`]'s words.
pub(crate) fn wrong_length(msg: &Bytes, n: usize, own: usize, what: &str, from: u32) -> Error {
    check_equal(msg, n, own, Layout::Equal, what, from)
        .err()
        .unwrap_or_else(|| unequal_blocks(what))
}

/// Members passed blocks of different lengths (found after the exchange): in the typed
/// call's words when one is running.
pub(crate) fn unequal_blocks(what: &str) -> Error {
    Error::InvalidArgument(match Unit::current() {
        Some(u) => format!(
            "{}: members passed slices of different lengths: every member must pass the same \
             number of elements of {}{}",
            u.call,
            u.type_name,
            u.v_hint()
        ),
        None => format!(
            "{what}: members passed blocks of different lengths{}",
            v_hint_bytes(what)
        ),
    })
}

/// [`unpack`] after [`check_equal`]: the blocks of a message from `from`, whose own
/// block is `own` bytes, or the error that names the member of another length. The
/// algorithm returns that error at once: the call's failure notice
/// ([`Ctx::guard`](crate::collectives::ctx::Ctx::guard)) stops every member that would
/// wait for this one, and nothing this node received unchecked is passed on as if it were
/// right.
pub(crate) fn unpack_equal(
    msg: Bytes,
    ids: &[u32],
    layout: Layout<'_>,
    what: &str,
    (from, own): (u32, usize),
) -> Result<Vec<Bytes>> {
    check_equal(&msg, ids.len(), own, layout, what, from)?;
    unpack(msg, ids, layout, what)
}

/// Split a message into the blocks of relative ranks `ids` (without copying).
pub(crate) fn unpack(
    msg: Bytes,
    ids: &[u32],
    layout: Layout<'_>,
    what: &str,
) -> Result<Vec<Bytes>> {
    let n = ids.len();
    let bad = |why: String| Error::InvalidArgument(format!("{what}: {why}"));
    let sizes: Vec<usize> = match layout {
        Layout::Equal => {
            if n == 0 || msg.len() % n != 0 {
                return Err(match Unit::current() {
                    Some(u) => Error::InvalidArgument(format!(
                        "{}: received {} for {n} members, which does not split evenly: \
                         every member must pass the same number of elements{}",
                        u.call,
                        u.count(msg.len()),
                        u.v_hint()
                    )),
                    None => bad(format!(
                        "a message of {} bytes does not split into {n} equal blocks; every \
                         participant must pass blocks of the same length{}",
                        msg.len(),
                        v_hint_bytes(what)
                    )),
                });
            }
            vec![msg.len() / n; n]
        }
        Layout::Given(s) => ids.iter().map(|&j| s[j as usize]).collect(),
        Layout::Framed => {
            if msg.len() < 8 * n {
                return Err(bad(format!(
                    "a framed message of {} bytes is too short",
                    msg.len()
                )));
            }
            (0..n)
                .map(|i| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(&msg[8 * i..8 * i + 8]);
                    u64::from_le_bytes(w) as usize
                })
                .collect()
        }
    };
    let mut off = if let Layout::Framed = layout {
        8 * n
    } else {
        0
    };
    if off.checked_add(sizes.iter().sum::<usize>()) != Some(msg.len()) {
        return Err(bad(format!(
            "received {} bytes but the blocks add up to {}; every participant must pass the \
             same lengths",
            msg.len(),
            off + sizes.iter().sum::<usize>()
        )));
    }
    let mut out = Vec::with_capacity(n);
    for s in sizes {
        out.push(msg.slice(off..off + s));
        off += s;
    }
    Ok(out)
}

/// Join blocks into one buffer (a single block without a copy).
pub(crate) fn concat(blocks: &[Bytes]) -> Bytes {
    pack(blocks, Layout::Equal).into_bytes()
}
