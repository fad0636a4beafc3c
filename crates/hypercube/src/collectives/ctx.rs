//! The context of one collective call: the subcube in relative ranks, the call's reserved
//! tag, point-to-point helpers, and the packing of several blocks into one message.
//!
//! **A call that fails on one member fails on every member that has not finished it.**
//! When a member's part of the call ends in an error — most often a message that does
//! not fit what this member passed (another length: the members disagree) — it cannot
//! send what the others wait for, and what it had received it cannot pass on as correct.
//! So [`Ctx::guard`] sends a *failure notice* (the node and its error's text, on the
//! call's failure tag, `tags::failure`) to every other member, and every receive of the
//! call ([`Ctx::recv`], [`Ctx::irecv`], [`Ctx::sendrecv`], [`Ctx::recv_any`]) accepts a
//! notice from any member in place of the message it waits for, and fails with it. A
//! member therefore never waits for a message that will not come, and takes no step past
//! a check that failed: every member either completes with what every other member sent
//! it, or returns an error (the node that found the problem names it; the others quote
//! it). The notices cost nothing while calls succeed.

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::{Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::error::{Error, Result};
use crate::message::{Message, Select};
use crate::node::{Node, RecvRequest};
use crate::parts::Parts;

/// One call of a collective on the subcube of dimension `k` that contains this node.
/// Ranks are relative: `0 .. 2^k`, physical node = `base | rel`.
pub(crate) struct Ctx<'a> {
    node: &'a Node,
    /// Subcube dimension.
    pub k: u32,
    /// Lowest physical node of the subcube.
    pub base: NodeId,
    /// This node's relative rank.
    pub me: u32,
    tag: u32,
    /// The call's failure-notice tag (`tags::failure`).
    failure: u32,
    /// Set when a failure notice was received: the member that sent it told every member,
    /// so [`Ctx::guard`] does not tell them again.
    told: AtomicBool,
    /// The call's interval in the trace (when tracing is on); recorded when dropped.
    pub(crate) call: Option<crate::trace::Call>,
}

/// A posted receive of a collective call ([`Ctx::irecv`]): completes with the message, or
/// with a failure notice from any member as an error.
#[must_use = "a receive request should be waited for"]
pub(crate) struct CallRecv<'c> {
    r: RecvRequest,
    failure: u32,
    told: &'c AtomicBool,
}

impl CallRecv<'_> {
    /// Wait for the message (or a failure notice: an error).
    pub fn wait(self) -> Result<Message> {
        checked(self.failure, self.told, self.r.wait()?)
    }
}

/// A received message of a call whose failure tag is `failure`, or the error a failure
/// notice carries (then `told` is set).
fn checked(failure: u32, told: &AtomicBool, m: Message) -> Result<Message> {
    if m.tag != failure {
        return Ok(m);
    }
    told.store(true, Ordering::Relaxed);
    let (origin, text) = match m.data.split_first_chunk::<4>() {
        Some((n, text)) => (
            u32::from_le_bytes(*n).to_string(),
            String::from_utf8_lossy(text).into_owned(),
        ),
        None => (m.source.to_string(), String::new()),
    };
    Err(Error::InvalidArgument(format!(
        "node {origin} stopped this collective call on every member: {text}"
    )))
}

impl<'a> Ctx<'a> {
    /// Validate the dimension (every participant must call this once per call, after any
    /// other argument check that every participant makes identically).
    pub fn new(node: &'a Node, k: u32) -> Result<Ctx<'a>> {
        check_dim(node, k)?;
        let base = hypercube_topology::subcube_base(node.mynode(), k);
        let tag = node.collective_tag(k);
        Ok(Ctx {
            node,
            k,
            base,
            me: node.mynode() - base,
            tag,
            failure: crate::tags::failure(tag),
            told: AtomicBool::new(false),
            call: crate::trace::Call::begin("collective", k, base),
        })
    }

    /// The selector of this call's receives: its tag from `from` (or any member), or its
    /// failure notice from any member.
    fn select(&self, from: Option<u32>) -> Select {
        Select::internal_or(from.map(|r| self.phys(r)), self.tag, self.failure)
    }

    /// A received message of this call, or the error a failure notice carries.
    fn checked(&self, m: Message) -> Result<Message> {
        checked(self.failure, &self.told, m)
    }

    /// The end of this member's part of the call: `r` as it is; if it is an error that no
    /// failure notice brought here, a notice of it is sent first to every other member of
    /// the subcube (see the module docs), so none of them waits for this node or goes on
    /// with a partial result. Every collective passes its algorithm's result through here.
    pub fn guard<R>(&self, r: Result<R>) -> Result<R> {
        if let Err(e) = &r {
            if !self.told.swap(true, Ordering::Relaxed) {
                let mut notice = (self.node.mynode()).to_le_bytes().to_vec();
                notice.extend_from_slice(e.to_string().as_bytes());
                let notice = Bytes::from(notice);
                // Best effort: a member that cannot be reached learns of the failure from
                // the transport.
                let sends: Vec<_> = (0..self.p())
                    .filter(|&j| j != self.me)
                    .filter_map(|j| {
                        self.node
                            .isend_internal(self.phys(j), self.failure, notice.clone())
                            .ok()
                    })
                    .collect();
                for s in sends {
                    let _ = s.wait();
                }
            }
        }
        r
    }

    /// Name the call in the trace (tracing on): operation, algorithm, message bytes.
    pub(crate) fn traced(mut self, name: &str, alg: &dyn std::fmt::Debug, bytes: usize) -> Self {
        if let Some(c) = &mut self.call {
            c.name = name.to_ascii_lowercase();
            c.alg = format!("{alg:?}");
            c.bytes = bytes as u64;
        }
        self
    }

    /// Number of nodes in the subcube.
    pub fn p(&self) -> u32 {
        1 << self.k
    }

    fn phys(&self, rel: u32) -> NodeId {
        self.base | rel
    }

    /// Send and wait until handed over.
    pub fn send(&self, rel: u32, data: impl Into<Parts>) -> Result<()> {
        self.node.send_internal(self.phys(rel), self.tag, data)
    }

    /// Receive the next message of this call from `rel`.
    pub fn recv(&self, rel: u32) -> Result<Bytes> {
        let m = self.node.irecv_sel(self.select(Some(rel)))?.wait()?;
        Ok(self.checked(m)?.into_data())
    }

    /// Start a send.
    pub fn isend(&self, rel: u32, data: impl Into<Parts>) -> Result<crate::node::SendRequest> {
        self.node.isend_internal(self.phys(rel), self.tag, data)
    }

    /// Start a send along `route` (dimensions of the subcube, which are the cube's own
    /// low dimensions).
    pub fn isend_routed(
        &self,
        rel: u32,
        data: impl Into<Parts>,
        route: hypercube_topology::Route,
    ) -> Result<crate::node::SendRequest> {
        self.node
            .isend_routed_internal(self.phys(rel), self.tag, data, route)
    }

    /// Post a receive for the next message of this call from `rel`.
    pub fn irecv(&self, rel: u32) -> Result<CallRecv<'_>> {
        Ok(CallRecv {
            r: self.node.irecv_sel(self.select(Some(rel)))?,
            failure: self.failure,
            told: &self.told,
        })
    }

    /// Receive the next message of this call from any member of the subcube: its
    /// relative rank and its bytes. A message of this call's tag from outside the subcube
    /// is a peer's error, reported, never taken for a member's.
    pub fn recv_any(&self) -> Result<(u32, Bytes)> {
        let m = self.node.irecv_sel(self.select(None))?.wait()?;
        let m = self.checked(m)?;
        let src = m.source();
        if src == crate::ids::HOST || hypercube_topology::subcube_base(src, self.k) != self.base {
            return Err(Error::InvalidArgument(format!(
                "a collective on the {}-cube at node {} received a message of its call from \
                 node {src}, outside that subcube: every member must make the same calls",
                self.k, self.base
            )));
        }
        Ok((src - self.base, m.into_data()))
    }

    /// Send to `to` and receive from `from` at the same time (both directions of a link
    /// are used at once, as in the book's exchange steps).
    pub fn sendrecv(&self, to: u32, data: impl Into<Parts>, from: u32) -> Result<Bytes> {
        let r = self.node.irecv_sel(self.select(Some(from)))?;
        let s = self.node.isend_internal(self.phys(to), self.tag, data)?;
        let m = r.wait()?;
        s.wait()?;
        Ok(self.checked(m)?.into_data())
    }

    /// [`Ctx::sendrecv`] whose receive takes only the data, never a failure notice: for a
    /// step that every member reaches without receiving anything first, so its message
    /// always comes, and must be taken — a message of lent memory (`lend.rs`) left
    /// unreceived in a mailbox of the in-process transport would keep its sender waiting.
    pub fn sendrecv_first(&self, to: u32, data: impl Into<Parts>, from: u32) -> Result<Bytes> {
        let r = self.node.irecv_internal(Some(self.phys(from)), self.tag)?;
        let s = self.node.isend_internal(self.phys(to), self.tag, data)?;
        let m = r.wait()?;
        s.wait()?;
        Ok(m.into_data())
    }
}

/// `dim` must not exceed the cube's dimension.
pub(crate) fn check_dim(node: &Node, k: u32) -> Result<()> {
    if node.is_host() {
        return Err(Error::InvalidArgument(
            "the host is not a member of any subcube: collectives run on the nodes; the host \
             exchanges messages with them (send/recv) or uses the host variants of the iPSC \
             utilities"
                .into(),
        ));
    }
    if k > node.cubedim() {
        return Err(Error::InvalidArgument(format!(
            "subcube dimension {k} is larger than the cube's dimension {}",
            node.cubedim()
        )));
    }
    Ok(())
}

/// The relative rank of a physical `root`, which must lie in the subcube of dimension `k`
/// that contains `node`.
pub(crate) fn rel_root(node: &Node, k: u32, root: NodeId) -> Result<u32> {
    check_dim(node, k)?;
    let members = hypercube_topology::subcube_members(node.mynode(), k);
    if !members.contains(&root) {
        return Err(Error::InvalidNode {
            node: root as i64,
            what: format!("subcube of dimension {k} containing node {}", node.mynode()),
            first: members.start,
            last: members.end - 1,
        });
    }
    Ok(root - members.start)
}

/// The near-equal split of `len` items into `p` parts: part `j` is `bounds(len, p, j)`.
pub(crate) fn bounds(len: usize, p: u32, j: u32) -> std::ops::Range<usize> {
    let p = p as usize;
    let j = j as usize;
    (j * len / p)..((j + 1) * len / p)
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
/// algorithm returns that error at once: the call's failure notice ([`Ctx::guard`]) stops
/// every member that would wait for this one, and nothing this node received unchecked is
/// passed on as if it were right.
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
