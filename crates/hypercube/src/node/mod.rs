//! [`Node`]: a process's place in the cube — its identity (`mynode`, `numnodes`, `cubedim`)
//! and typed point-to-point messaging with iPSC semantics (`csend`, `crecv`, `isend`,
//! `irecv`, `msgwait`, `cprobe`, `iprobe`, `infocount`, ...).

mod calls;
pub(crate) mod landing;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hypercube_topology::NodeId;
use serde::{de::DeserializeOwned, Serialize};

use crate::base::ids::HOST;
use crate::base::message::{Message, MsgType, Select, Status, TypeSel, MAX_USER_TYPE};
use crate::base::parts::{IntoPayload, Parts};
use crate::error::{Error, Result};
use crate::transport::mailbox::Held;
use crate::transport::{RecvToken, SendToken, Transport};

/// One node of a running cube. Cheap to clone (shared); all methods take `&self`.
///
/// Dropping the last clone finalizes the node: a barrier with every other node (so this
/// process keeps forwarding until nobody needs it), then a clean close of every link.
/// A program that wants to stop the whole job on an error calls [`Node::abort`] or uses
/// [`crate::run`].
#[derive(Clone)]
pub struct Node {
    inner: Arc<NodeInner>,
}

struct NodeInner {
    t: Arc<dyn Transport>,
    /// Per subcube dimension: how many utility/collective calls this node has made on
    /// subcubes of that dimension (every member makes the same calls in the same order);
    /// and the tags of failed calls whose messages the transport discards.
    calls: std::sync::Mutex<calls::Calls>,
    /// Messages taken off the queue and set aside for the next matching receive
    /// ([`Node::hold`]).
    held: std::sync::Mutex<Held>,
}

impl Drop for NodeInner {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Do not wait for the others: the launcher will see this rank fail.
            return;
        }
        if let Err(e) = self.t.finalize() {
            tracing::error!("finalize failed: {e}");
        }
    }
}

/// A started send ([`Node::isend`]).
#[must_use = "a send request should be waited for"]
pub struct SendRequest {
    t: Arc<dyn Transport>,
    token: SendToken,
}

impl SendRequest {
    /// Block until the message has been handed over (iPSC `msgwait`).
    #[doc(alias = "msgwait")]
    pub fn wait(self) -> Result<()> {
        self.t.wait_send(self.token)
    }
    /// Has the send completed? (iPSC `msgdone`).
    #[doc(alias = "msgdone")]
    pub fn test(&self) -> Result<bool> {
        self.t.test_send(self.token)
    }
}

/// A posted receive ([`Node::irecv`]).
#[must_use = "a receive request should be waited for"]
pub struct RecvRequest {
    t: Arc<dyn Transport>,
    token: RecvToken,
    done: bool,
}

impl RecvRequest {
    /// Block until the message is here (iPSC `msgwait`).
    #[doc(alias = "msgwait")]
    pub fn wait(mut self) -> Result<Message> {
        let m = self.t.wait_recv(self.token, None)?;
        self.done = true;
        Ok(m)
    }
    /// Block at most `timeout`.
    pub fn wait_timeout(&mut self, timeout: Duration) -> Result<Message> {
        let m = self.t.wait_recv(self.token, Some(timeout))?;
        self.done = true;
        Ok(m)
    }
    /// The message, if it is complete (iPSC `msgdone`). `Ok(None)` while it is not.
    #[doc(alias = "msgdone")]
    pub fn test(&mut self) -> Result<Option<Message>> {
        if self.done {
            return Err(Error::InvalidRequest(
                "the receive already completed".into(),
            ));
        }
        let m = self.t.test_recv(self.token)?;
        self.done = m.is_some();
        Ok(m)
    }
    /// Withdraw the receive if no message has been bound to it. Returns false (and keeps
    /// the request usable) if a message is already on its way.
    pub fn cancel(&mut self) -> bool {
        let ok = !self.done && self.t.cancel_recv(self.token);
        if ok {
            self.done = true;
        }
        ok
    }
}

impl Drop for RecvRequest {
    fn drop(&mut self) {
        if !self.done {
            // A message already bound to this receive goes back to the queue.
            self.t.abandon_recv(self.token);
        }
    }
}

pub(crate) fn check_type(t: u32) -> Result<u32> {
    if t > MAX_USER_TYPE {
        return Err(Error::InvalidType {
            msg_type: t,
            max: MAX_USER_TYPE,
        });
    }
    Ok(t)
}

fn check_sel(sel: Select) -> Result<Select> {
    if let TypeSel::Is(t) = sel.ty {
        if !sel.internal {
            check_type(t)?;
        }
    }
    Ok(sel)
}

impl Node {
    /// Wrap a transport (the TCP one from [`crate::init`], or an in-process one).
    pub fn with_transport(t: Arc<dyn Transport>) -> Node {
        Node {
            inner: Arc::new(NodeInner {
                t,
                calls: std::sync::Mutex::new(calls::Calls::default()),
                held: std::sync::Mutex::new(Held::default()),
            }),
        }
    }

    /// Set a received message aside: the next [`Node::take_held`] that matches it gets it,
    /// before anything still queued (see [`Held`]).
    pub(crate) fn hold(&self, m: Message) {
        self.held().hold(m);
    }

    /// The first message set aside by [`Node::hold`] that `sel` matches.
    pub(crate) fn take_held(&self, sel: &Select) -> Option<Message> {
        self.held().take(sel)
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.inner.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The transport copies what it still keeps of returning lent memory
    /// (`Transport::release_lent`).
    pub(crate) fn release_lent(&self) {
        self.inner.t.release_lent();
    }

    /// Start a send with a raw tag (a reserved one, or a user type already checked).
    pub(crate) fn isend_internal(
        &self,
        dest: NodeId,
        tag: u32,
        data: impl Into<Parts>,
    ) -> Result<SendRequest> {
        let token = self.inner.t.isend(dest, tag, data.into())?;
        Ok(SendRequest {
            t: self.inner.t.clone(),
            token,
        })
    }

    /// Start a send with a reserved tag along `route` (`Transport::isend_routed`).
    pub(crate) fn isend_routed_internal(
        &self,
        dest: NodeId,
        tag: u32,
        data: impl Into<Parts>,
        route: hypercube_topology::Route,
    ) -> Result<SendRequest> {
        let token = self.inner.t.isend_routed(dest, tag, data.into(), route)?;
        Ok(SendRequest {
            t: self.inner.t.clone(),
            token,
        })
    }

    /// Send with a reserved tag.
    pub(crate) fn send_internal(
        &self,
        dest: NodeId,
        tag: u32,
        data: impl Into<Parts>,
    ) -> Result<()> {
        self.isend_internal(dest, tag, data)?.wait()
    }

    /// Post a receive for a reserved tag, optionally from one source.
    pub(crate) fn irecv_internal(&self, source: Option<NodeId>, tag: u32) -> Result<RecvRequest> {
        self.irecv_sel(Select::internal(source, tag))
    }

    /// Receive a reserved-tag message, optionally from one source.
    pub(crate) fn recv_internal(&self, source: Option<NodeId>, tag: u32) -> Result<Message> {
        self.irecv_sel(Select::internal(source, tag))?.wait()
    }

    /// This node's number, 0 ..= numnodes-1 (iPSC `mynode`); [`crate::HOST`] on the host.
    pub fn mynode(&self) -> NodeId {
        self.inner.t.rank()
    }

    /// Is this the job's host process ([`crate::HOST`]) rather than a node of the cube?
    /// The host can send to and receive from every node, and take part in the host
    /// variants of the utilities; it is not a member of any subcube.
    pub fn is_host(&self) -> bool {
        self.mynode() == HOST
    }

    /// The number of nodes, 2^d (iPSC `numnodes`).
    pub fn numnodes(&self) -> u32 {
        1 << self.inner.t.dim()
    }

    /// The cube dimension d (iPSC `cubedim`).
    pub fn cubedim(&self) -> u32 {
        self.inner.t.dim()
    }

    /// Send a message and return when its buffer may be reused (iPSC `csend`). A message
    /// to a non-neighbor is forwarded hop by hop on its e-cube route.
    ///
    /// When it returns: a message of at most `HYPERCUBE_EAGER_LIMIT` bytes (64 KiB by
    /// default) goes at once while the link's eager credit lasts, so `send` returns without
    /// the receiver; a larger one is announced and waits until the receiver has posted a
    /// matching receive (a rendezvous, as in MPI). So two nodes that both `send` a large
    /// message to each other before receiving wait for each other forever: exchange with
    /// [`Node::sendrecv`], or start the send with [`Node::isend`] and receive before
    /// waiting for it.
    #[doc(alias = "csend")]
    pub fn send(&self, dest: NodeId, ty: MsgType, data: impl IntoPayload) -> Result<()> {
        self.isend(dest, ty, data)?.wait()
    }

    /// Start a send (iPSC `isend`); wait for it with [`SendRequest::wait`] (which returns
    /// when [`Node::send`] would).
    pub fn isend(&self, dest: NodeId, ty: MsgType, data: impl IntoPayload) -> Result<SendRequest> {
        let tag = check_type(ty.0)?;
        self.isend_internal(dest, tag, data.into_parts())
    }

    /// Receive the oldest message that matches (iPSC `crecv`): `TypeSel::Is(t)` or
    /// `TypeSel::Any`, optionally from one node (`Select::from_node`).
    #[doc(alias = "crecv")]
    pub fn recv(&self, sel: impl Into<Select>) -> Result<Message> {
        self.irecv(sel)?.wait()
    }

    /// Send `data` to `dest` and receive a message matching `sel` at the same time
    /// (`MPI_Sendrecv`): the receive is posted first, then the send is started, then both
    /// are waited for. Two nodes exchanging messages of any size this way cannot deadlock,
    /// unlike two [`Node::send`]s above the eager limit followed by two receives.
    ///
    /// ```
    /// use hypercube::{MsgType, TypeSel};
    /// hypercube::local::run_local(1, |node| {
    ///     let other = node.mynode() ^ 1;
    ///     let big = vec![node.mynode() as u8; 1 << 20];
    ///     let m = node.sendrecv(other, MsgType(7), big, TypeSel::Is(7)).unwrap();
    ///     assert_eq!(m.data()[0] as u32, other);
    /// });
    /// ```
    #[doc(alias = "MPI_Sendrecv")]
    pub fn sendrecv(
        &self,
        dest: NodeId,
        ty: MsgType,
        data: impl IntoPayload,
        sel: impl Into<Select>,
    ) -> Result<Message> {
        let r = self.irecv(sel)?;
        let s = self.isend(dest, ty, data)?;
        let m = r.wait()?;
        s.wait()?;
        Ok(m)
    }

    /// Receive with a deadline.
    pub fn recv_timeout(&self, sel: impl Into<Select>, timeout: Duration) -> Result<Message> {
        self.irecv(sel)?.wait_timeout(timeout)
    }

    /// Receive into a caller's buffer. If the message is longer than `buf`, returns
    /// [`Error::Truncated`] naming the length needed, and the message stays queued.
    pub fn recv_into(&self, sel: impl Into<Select>, buf: &mut [u8]) -> Result<Status> {
        let sel = check_sel(sel.into())?;
        loop {
            let st =
                self.inner.t.probe(&sel, true, None)?.ok_or_else(|| {
                    Error::InvalidRequest("blocking probe returned nothing".into())
                })?;
            if st.len > buf.len() as u64 {
                return Err(Error::Truncated {
                    needed: st.len,
                    capacity: buf.len() as u64,
                    source_node: st.source,
                    msg_type: st.msg_type.0,
                });
            }
            let len = st.len as usize;
            if len >= landing::P2P_FROM {
                // Read into `buf` as it arrives (`node/landing.rs`).
                // SAFETY: `buf` is borrowed mutably for this call, and the receive is
                // waited for (or dropped, which takes the memory back) before it returns.
                let r = match unsafe { self.claim_landing(&st, buf.as_mut_ptr(), len) } {
                    Ok(r) => r,
                    Err(Error::InvalidRequest(_)) => continue,
                    Err(e) => return Err(e),
                };
                return match r.wait()? {
                    landing::Landed::Here { .. } => Ok(st),
                    landing::Landed::Other(m) => Err(Error::InvalidRequest(format!(
                        "the probed message of {len} bytes came with {}",
                        m.len()
                    ))),
                };
            }
            let token = match self.inner.t.claim(&st) {
                Ok(t) => t,
                // Another thread took it between probe and claim: look again.
                Err(Error::InvalidRequest(_)) => continue,
                Err(e) => return Err(e),
            };
            let m = self.inner.t.wait_recv(token, None)?;
            buf[..m.len()].copy_from_slice(&m.data);
            return Ok(st);
        }
    }

    /// Post a receive (iPSC `irecv`); complete it with [`RecvRequest::wait`] or `test`.
    pub fn irecv(&self, sel: impl Into<Select>) -> Result<RecvRequest> {
        let sel = check_sel(sel.into())?;
        self.irecv_sel(sel)
    }

    pub(crate) fn irecv_sel(&self, sel: Select) -> Result<RecvRequest> {
        let token = self.inner.t.post_recv(sel)?;
        Ok(RecvRequest {
            t: self.inner.t.clone(),
            token,
            done: false,
        })
    }

    /// Wait until a matching message is here and describe it without receiving it
    /// (iPSC `cprobe`).
    #[doc(alias = "cprobe")]
    pub fn probe(&self, sel: impl Into<Select>) -> Result<Status> {
        let sel = check_sel(sel.into())?;
        self.inner
            .t
            .probe(&sel, true, None)?
            .ok_or_else(|| Error::InvalidRequest("blocking probe returned nothing".into()))
    }

    /// Describe a matching message if one is here, without waiting (iPSC `iprobe`).
    pub fn iprobe(&self, sel: impl Into<Select>) -> Result<Option<Status>> {
        let sel = check_sel(sel.into())?;
        self.inner.t.probe(&sel, false, None)
    }

    /// Send a serde value (encoded with the crate's codec).
    pub fn send_value<T: Serialize + ?Sized>(
        &self,
        dest: NodeId,
        ty: MsgType,
        value: &T,
    ) -> Result<()> {
        let bytes = crate::wire::codec::encode(value)?;
        self.send(dest, ty, bytes)
    }

    /// Receive a serde value; also returns the message's status.
    pub fn recv_value<T: DeserializeOwned>(&self, sel: impl Into<Select>) -> Result<(T, Status)> {
        let m = self.recv(sel)?;
        let v = crate::wire::codec::decode(&m.data)?;
        Ok((v, m.status()))
    }

    /// Where a node's link listener is, where known (diagnostics): every node's under
    /// `hcrun`, the neighbors' under a PMI manager; `None` for in-process transports.
    pub fn peer_address(&self, node: NodeId) -> Option<SocketAddr> {
        self.inner.t.peer_address(node)
    }

    /// Leave the job cleanly now (otherwise it happens when the last clone is dropped):
    /// waits until every node has called finalize, then closes the links.
    pub fn finalize(self) -> Result<()> {
        self.inner.t.finalize()
    }

    /// Stop the whole job: print `reason` and exit this process with status 1; the launcher
    /// (`hcrun`, or a PMI manager through PMI `abort`) then stops every other rank.
    pub fn abort(&self, reason: &str) -> ! {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "node {} aborts the job: {reason}",
            self.mynode()
        );
        // Under a PMI manager this asks it to stop every rank; under hcrun the exit does.
        crate::job::abort(reason);
        std::process::exit(1)
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("mynode", &self.mynode())
            .field("cubedim", &self.cubedim())
            .finish()
    }
}

#[cfg(test)]
pub(crate) mod tests;
