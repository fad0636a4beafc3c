//! What a transport provides ([`Transport`]) and the small pieces every transport shares:
//! the send token and the lock guard that survives a panicking holder. The transports
//! (`tcp/`, `local.rs`) build on this file alone, not on the folder's `mod.rs`, which
//! gathers them for the layers above.

use std::net::SocketAddr;
use std::time::Duration;

use hypercube_topology::NodeId;

use crate::base::message::{Message, Select, Status};
use crate::base::parts::Parts;
use crate::error::Result;
use crate::transport::mailbox::RecvToken;

/// A lock's guard even when another thread panicked while holding it: the transport's
/// state stays usable (every holder leaves it consistent between statements), and a
/// panicking node program must not take its transport's other threads down with it.
pub(crate) fn relock<T>(r: std::sync::LockResult<T>) -> T {
    r.unwrap_or_else(|p| p.into_inner())
}

/// Identifies a started send.
pub type SendToken = u64;

/// Point-to-point messaging between the nodes of one cube: what a transport must provide.
///
/// Tags are raw `u32` message types; the user/reserved split is enforced above this layer.
/// Messages from one source with one tag are matched in the order they were sent.
pub trait Transport: Send + Sync + 'static {
    /// This node's number.
    fn rank(&self) -> NodeId;
    /// The cube dimension d (2^d nodes).
    fn dim(&self) -> u32;
    /// Start sending `data` to `dest`. The data is shared, never copied on the way; its
    /// parts arrive as one contiguous message.
    fn isend(&self, dest: NodeId, tag: u32, data: Parts) -> Result<SendToken>;
    /// [`Transport::isend`] along `route`: the message crosses the route's dimensions in
    /// order, then follows e-cube order (`wire/frame.rs`). A transport without links of its
    /// own (the in-process one) delivers it as `isend` does. Messages from one source with
    /// one tag on different routes may overtake each other: give them distinct tags, or
    /// tell them apart by their contents.
    fn isend_routed(
        &self,
        dest: NodeId,
        tag: u32,
        data: Parts,
        route: hypercube_topology::Route,
    ) -> Result<SendToken> {
        let _ = route;
        self.isend(dest, tag, data)
    }
    /// Has the send finished (its buffer handed over)?
    fn test_send(&self, token: SendToken) -> Result<bool>;
    /// Block until the send has finished.
    fn wait_send(&self, token: SendToken) -> Result<()>;
    /// Post a receive; it binds the oldest matching message, now or when one arrives.
    fn post_recv(&self, sel: Select) -> Result<RecvToken>;
    /// Post a receive whose message is to be written, as it arrives, into the `head.1`
    /// bytes at `head.0` and then the `tail.1` bytes at `tail.0` (the receive's *landing*;
    /// `tail.1` is 0 for one piece of memory), where the transport can: the message is then
    /// delivered as a `Bytes` over exactly the first piece, which the caller recognizes by
    /// its address and length and drops. A transport that cannot does what
    /// [`Transport::post_recv`] does (the default), and the caller copies. The TCP
    /// transport lands the payload of a message of exactly `head.1 + tail.1` bytes straight
    /// from the socket: a rendezvous message, or a long eager one whose header is read
    /// after this receive was posted.
    ///
    /// # Safety
    /// The memory must stay valid, and be neither read nor written by anyone but the
    /// transport, until the receive's message has been taken ([`Transport::wait_recv`],
    /// [`Transport::test_recv`]) or [`Transport::abandon_recv`] has returned for it — which
    /// copies what of the message arrived into memory of the transport's own. The two
    /// pieces must not overlap.
    unsafe fn post_recv_landing(
        &self,
        sel: Select,
        head: (*mut u8, usize),
        tail: (*mut u8, usize),
    ) -> Result<RecvToken> {
        let _ = (head, tail);
        self.post_recv(sel)
    }
    /// [`Transport::post_recv_landing`] of a message whose bytes fill the pieces of
    /// `pieces` (`(address, length)`, in message order) in turn, where the transport can;
    /// it is delivered as a `Bytes` over exactly the first piece. The default does what
    /// [`Transport::post_recv`] does, and the caller copies.
    ///
    /// # Safety
    /// As for [`Transport::post_recv_landing`], for every piece; the pieces must not
    /// overlap, and `pieces` itself must stay valid and unchanged as long as they must.
    unsafe fn post_recv_landing_pieces(
        &self,
        sel: Select,
        pieces: &[(*mut u8, usize)],
    ) -> Result<RecvToken> {
        let _ = pieces;
        self.post_recv(sel)
    }
    /// Take the message of a posted receive if it is complete.
    fn test_recv(&self, token: RecvToken) -> Result<Option<Message>>;
    /// Block until the posted receive completes (or the timeout passes).
    fn wait_recv(&self, token: RecvToken, timeout: Option<Duration>) -> Result<Message>;
    /// Withdraw a posted receive that no message has bound yet. False if it was bound.
    fn cancel_recv(&self, token: RecvToken) -> bool;
    /// The receive's request was dropped before it completed: withdraw it and return any
    /// message bound to it to the queue, so that no message is lost.
    fn abandon_recv(&self, token: RecvToken);
    /// Drop every message of `tags`, queued now or arriving later, until
    /// [`Transport::keep`] names them: a rendezvous message is asked for as usual (so its
    /// sender's send completes) and its payload dropped. A collective call's tag stands for
    /// the call: every variant of it and its failure notices (`base/tags.rs`). The runtime
    /// calls this with the tag of a collective call that failed on this node — no receive
    /// will ever be posted for it again — so that the call's messages still on their way
    /// cannot keep their senders waiting (`collectives/ctx.rs`). Never called with a user's
    /// type.
    /// The default does nothing: a transport whose sends complete without a receive needs
    /// nothing more.
    fn discard(&self, tags: &[u32]) {
        let _ = tags;
    }
    /// This node's part of the collective call whose tag is `call` has completed: a message
    /// of the call that is queued or arrives later is one no step of this node's algorithm
    /// takes (its sender ran another algorithm). Drop it as [`Transport::discard`] does,
    /// and send the other members of the call's subcube a failure notice naming it
    /// (`base/notice.rs`); drop the call's own failure notices quietly (they are for
    /// members still in the call). The mailbox remembers the last 1 024 calls closed.
    /// The default does nothing: a transport without a mailbox of its own.
    fn close(&self, call: u32) {
        let _ = call;
    }
    /// Copy what the transport still keeps of lent memory whose lender is returning
    /// (`base::lent`, `collectives/lend.rs`): frames written but kept for a resend. The
    /// default does nothing: a transport that keeps nothing after a send completes.
    fn release_lent(&self) {}
    /// Deliver messages of `tags` again (their tags are being drawn for a new call).
    fn keep(&self, tags: &[u32]) {
        let _ = tags;
    }
    /// The oldest unreceived matching message; blocks for one if `block`.
    fn probe(&self, sel: &Select, block: bool, timeout: Option<Duration>)
        -> Result<Option<Status>>;
    /// Bind the message a probe returned to a new receive (so it cannot be taken by another).
    fn claim(&self, status: &Status) -> Result<RecvToken>;
    /// [`Transport::claim`] for a receive whose message is to be written into the `len`
    /// bytes at `dest` (as [`Transport::post_recv_landing`]; the default claims as usual).
    ///
    /// # Safety
    /// As for [`Transport::post_recv_landing`].
    unsafe fn claim_landing(
        &self,
        status: &Status,
        dest: *mut u8,
        len: usize,
    ) -> Result<RecvToken> {
        let _ = (dest, len);
        self.claim(status)
    }
    /// Leave the job cleanly: a barrier, then close every link. Idempotent.
    fn finalize(&self) -> Result<()>;
    /// The link listener address of a node, where the transport has one (diagnostics).
    fn peer_address(&self, _node: NodeId) -> Option<SocketAddr> {
        None
    }
}
