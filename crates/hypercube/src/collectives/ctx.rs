//! The context of one collective call: the subcube in relative ranks, the call's reserved
//! tag, and point-to-point helpers (the packing of several blocks into one message is
//! `blocks.rs`).
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
//!
//! This holds for the first step's receives too, although every member sends its first
//! message before it can fail: members that disagree on a length may run different
//! algorithms (the automatic choice prices each member's own length, and the links as the
//! start-up probe measured them, which vary from run to run), and then the message a
//! member's first step waits for may never be sent. (The first steps of the reduce-scatters
//! once took only data, so that a lent message was always received; a member whose
//! all-port reduce-scatter waited there for node 2, whose length had made it choose the
//! recursive halving, waited forever: `tests_mixed.rs`. A lent message that is not
//! received is dropped when its receiver leaves the call, below, which lets go of it.)
//!
//! **Members that run different algorithms do not take each other's messages.** A call's
//! messages carry its algorithm as the *variant* of the call's tag ([`Ctx::variant`],
//! `tags::with_variant`), and every receive of the call also accepts another variant from
//! any member, which fails the call ([`Ctx::checked`]; `guard` then tells every member).
//! That covers a message that reaches a member still in the call. One that reaches a member
//! whose part has ended is the transport's to report: `guard` closes the call on success
//! (`Node::close_call`, `Transport::close`), and a message of a closed call is dropped and
//! every other member sent a failure notice naming it (`base/notice.rs`). With both, a
//! gather whose odd member went up the binomial tree while the others sent straight to the
//! root — node 3, finished, got node 2's block; the root waited for node 2 forever — and
//! the reverse — the root, in the tree, got node 2's block straight — fail on the root
//! instead of hanging (`tests_mixed.rs`).
//!
//! **A member that leaves a failed call drops the rest of it.** The moment a member learns
//! that the call failed — it takes a notice, or its own part ends in an error — it has the
//! transport discard the call's tag and failure tag (`Node::discard_call`): every message
//! of the call queued here or still on its way is dropped, a large one after the transport
//! has asked for it as for any other. Without this, a partner's large (rendezvous) send of
//! the call, whose receive here took the notice instead, would wait forever for a receive
//! that is never posted again — and so would the partner, stuck in the failed call
//! (issue 25: two members of an exchange step both took the notice, then each waited in
//! its send to the other). This happens before the member waits for any send of its own,
//! so members waiting in sends to each other all get theirs taken. What is dropped is only
//! the failed call's: its tags are reserved, drawn for this one call, and no receive can be
//! posted for them again (until the counter wraps: `base/tags.rs`).

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use hypercube_topology::NodeId;

use crate::base::message::{Message, Select};
use crate::base::notice;
use crate::base::parts::Parts;
use crate::base::tags;
use crate::collectives::lend::Lender;
use crate::collectives::select::Algorithm;
use crate::error::{Error, Result};
use crate::node::landing::{Landed, RecvLanding};
use crate::node::{Node, RecvRequest};

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
    c: &'c Ctx<'c>,
}

impl CallRecv<'_> {
    /// Wait for the message (or a failure notice: an error).
    pub fn wait(self) -> Result<Message> {
        self.c.checked(self.r.wait()?)
    }
}

/// A posted receive of a collective call into memory it names ([`Ctx::irecv_landing`]).
#[must_use = "a receive request should be waited for"]
pub(crate) struct CallLanding<'c> {
    r: RecvLanding,
    c: &'c Ctx<'c>,
}

impl CallLanding<'_> {
    /// Wait for the message: `Ok(None)` when it is in the named memory, `Ok(Some(bytes))`
    /// for a message of another length (nothing written), an error for a failure notice.
    pub fn wait(self) -> Result<Option<Bytes>> {
        let to = self.r.memory();
        match self.r.wait()? {
            Landed::Here { tag, source } if tag != self.c.tag => {
                // A failure notice (or another variant's message) of just that length: it
                // is in the memory (just written, `Ctx::irecv_landing`).
                let notice = Message {
                    source,
                    tag,
                    data: Bytes::from(to.copy_of(to.len())),
                };
                self.c.checked(notice).map(|_| None)
            }
            Landed::Here { .. } => Ok(None),
            Landed::Other(m) => self.c.checked(m).map(|m| Some(m.into_data())),
        }
    }
}

/// The error a failure notice `m` carries (`base/notice.rs`).
fn notice_error(m: &Message) -> Error {
    let (origin, text) = notice::decode(&m.data).unwrap_or((m.source, String::new()));
    Error::InvalidArgument(format!(
        "node {origin} stopped this collective call on every member: {text}"
    ))
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
            failure: crate::base::tags::failure(tag),
            told: AtomicBool::new(false),
            call: crate::trace::Call::begin("collective", k, base),
        })
    }

    /// The call as algorithm `alg` runs it: its messages carry `alg`'s variant of the
    /// call's tag (`tags::with_variant`), and a receive that meets another variant — a
    /// member that runs another algorithm — fails the call ([`Ctx::checked`]).
    pub(crate) fn variant(mut self, alg: Algorithm) -> Self {
        self.tag = tags::with_variant(self.tag, alg.variant());
        self
    }

    /// The selector of this call's receives: its tag from `from` (or any member), or its
    /// failure notice or another variant of its tag from any member.
    fn select(&self, from: Option<u32>) -> Select {
        Select::call(from.map(|r| self.phys(r)), self.tag)
    }

    /// A received message of this call; or the error a failure notice carries (then the
    /// call is over for this member: the rest of it is dropped, [`Ctx::leave`]); or, for a
    /// message of another variant of the call, an error that says so, told to every member
    /// and the call left at once ([`Ctx::fail`]).
    fn checked(&self, m: Message) -> Result<Message> {
        if m.tag == self.tag {
            return Ok(m);
        }
        if m.tag != self.failure {
            // Told and left at once, as for a notice: this member may next wait for a send
            // of its own to a partner whose receive another variant took as well (the
            // mismatch suite above the eager limit: nodes 0 and 1, in store-and-forward,
            // each waited in its 320 000-byte send to the other, both receives taken by
            // node 2's e-cube blocks).
            let e = self.other_variant(m.source, m.tag);
            self.fail(&e);
            return Err(e);
        }
        let e = notice_error(&m);
        if !self.told.swap(true, Ordering::Relaxed) {
            self.leave();
        }
        Err(e)
    }

    /// The error of a message of tag `tag` from `source`, another variant of this call's.
    fn other_variant(&self, source: NodeId, tag: u32) -> Error {
        let name = |t: u32| match Algorithm::of_variant(tags::variant(t)) {
            Some(a) => format!("{a:?}"),
            None => format!("variant {}", tags::variant(t)),
        };
        // A typed call names its v-variant (`Unit::v_hint`).
        let hint = crate::collectives::blocks::Unit::current()
            .map(|u| u.v_hint())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| " (or call the v-variant)".into());
        Error::InvalidArgument(format!(
            "node {source} ran this collective call by another algorithm ({}) than node {} \
             ({}): the members passed different lengths (the automatic choice depends on \
             the length) or asked for different algorithms; every member must pass the \
             same length and ask for the same algorithm{hint}",
            name(tag),
            self.node.mynode(),
            name(self.tag),
        ))
    }

    /// This member takes no further part in the failed call: the transport drops the
    /// call's messages and notices, queued or still coming (see the module docs). Called
    /// once, before this member waits for any send of the call, so that a partner's send
    /// to it can complete while it waits for its own to the partner.
    fn leave(&self) {
        self.node.discard_call(self.tag);
    }

    /// Has this member left the call ([`Ctx::leave`]: it took a failure notice, or its
    /// part failed)? Then no receive of the call can complete any more — whatever of the
    /// call arrives is dropped — so none may be waited for.
    pub(crate) fn has_left(&self) -> bool {
        self.told.load(Ordering::Relaxed)
    }

    /// Run `f` with a [`Lender`] of memory that lives for `'d` (`collectives/lend.rs`):
    /// what it lends goes without a copy, and this returns when every copy of it is let
    /// go of. An error of `f`'s is told to every member first ([`Ctx::tell_now`]): a
    /// member that stopped must not wait for its loans before telling, since the members
    /// holding them may be waiting for it in this call.
    pub(crate) fn lend<'d, R>(&self, f: impl FnOnce(&Lender<'d>) -> Result<R>) -> Result<R>
    where
        'a: 'd,
    {
        crate::collectives::lend::lend(self.node, |l| self.tell_now(f(l)))
    }

    /// The end of this member's part of the call: `r` as it is; if it is an error that no
    /// failure notice brought here, a notice of it is sent first to every other member of
    /// the subcube (see the module docs), so none of them waits for this node or goes on
    /// with a partial result. Every collective passes its algorithm's result through here.
    pub fn guard<R>(&self, r: Result<R>) -> Result<R> {
        match &r {
            // Every message of the call for this member has been taken: one that still
            // comes is another algorithm's, and its members are told (`Node::close_call`).
            Ok(_) => self.node.close_call(self.tag),
            Err(e) => self.fail(e),
        }
        r
    }

    /// `r` as it is; an error is told to every other member at once, as [`Ctx::guard`]
    /// would at the end of the call (and then does not again). A call that lends memory
    /// ([`Ctx::lend`]) passes its result through here before its lender waits: the
    /// lender waits, before the call returns, until every copy of the lent bytes is
    /// dropped, and on the in-process transport the receivers hold those copies — a
    /// receiver that still waits in the call for a message this member will now not send
    /// holds them, and waits, until it is told. (The mismatch suite on threads with blocks
    /// of 80 000 bytes: node 3 of a 2-cube stopped at node 2's short block and waited for
    /// node 2 to drop its lent block; node 2 waited for node 1, node 1 for node 3.)
    fn tell_now<R>(&self, r: Result<R>) -> Result<R> {
        if let Err(e) = &r {
            self.fail(e);
        }
        r
    }

    /// This member's part failed with `e`: unless a notice told it so, tell every other
    /// member (see [`Ctx::guard`]).
    fn fail(&self, e: &Error) {
        if self.told.swap(true, Ordering::Relaxed) {
            return;
        }
        self.leave();
        let notice = notice::encode(self.node.mynode(), &e.to_string());
        // Best effort: a member that cannot be reached learns of the failure from the
        // transport. The sends are not waited for: a notice goes eagerly, and one that had
        // to wait for its receiver (the eager credit spent) must not hold this member on a
        // member that finished the call and never takes it.
        for j in (0..self.p()).filter(|&j| j != self.me) {
            let _ = self
                .node
                .isend_internal(self.phys(j), self.failure, notice.clone());
        }
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
            c: self,
        })
    }

    /// Receive the next message of this call from any member of the subcube: its
    /// relative rank and its bytes. A message of this call's tag from outside the subcube
    /// is a peer's error, reported, never taken for a member's.
    pub fn recv_any(&self) -> Result<(u32, Bytes)> {
        let m = self.node.irecv_sel(self.select(None))?.wait()?;
        let m = self.checked(m)?;
        let src = m.source();
        if src == crate::base::ids::HOST
            || hypercube_topology::subcube_base(src, self.k) != self.base
        {
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
        // A notice ends the call here before the send is waited for: `to` may have taken
        // a notice too, and wait in its own send to this node (see the module docs).
        let m = self.checked(r.wait()?);
        s.wait()?;
        Ok(m?.into_data())
    }

    /// Post a receive for the next message of this call from `rel`, of `len` bytes, into
    /// `dest` (`node/landing.rs`).
    ///
    /// # Safety
    /// `dest .. dest + len` must be writable and not otherwise used until the receive has
    /// been waited for or dropped.
    pub unsafe fn irecv_landing(
        &self,
        rel: u32,
        (dest, len): (*mut u8, usize),
    ) -> Result<CallLanding<'_>> {
        // SAFETY: forwarded to this function's caller.
        unsafe { self.irecv_split(rel, (dest, len), (dest.wrapping_add(len), 0)) }
    }

    /// [`Ctx::irecv_landing`] of a message whose first `head.1` bytes go to `head.0` and
    /// the rest (`tail.1` bytes) to `tail.0`.
    ///
    /// # Safety
    /// Both pieces must be writable, must not overlap, and must not be otherwise used until
    /// the receive has been waited for or dropped.
    pub unsafe fn irecv_split(
        &self,
        rel: u32,
        head: (*mut u8, usize),
        tail: (*mut u8, usize),
    ) -> Result<CallLanding<'_>> {
        // SAFETY: forwarded to this function's caller.
        let r = unsafe {
            self.node
                .irecv_landing(self.select(Some(rel)), head, tail)?
        };
        Ok(CallLanding { r, c: self })
    }

    /// [`Ctx::irecv_landing`] of a message whose bytes fill the pieces of `pieces` in turn.
    ///
    /// # Safety
    /// Every piece must be writable, no two may overlap, none may be otherwise used until
    /// the receive has been waited for or dropped, and `pieces` must stay valid and
    /// unchanged until then.
    pub(crate) unsafe fn irecv_pieces(
        &self,
        rel: u32,
        pieces: &[(*mut u8, usize)],
    ) -> Result<CallLanding<'_>> {
        // SAFETY: forwarded to this function's caller.
        let r = unsafe {
            self.node
                .irecv_landing_pieces(self.select(Some(rel)), pieces)?
        };
        Ok(CallLanding { r, c: self })
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
