//! Message matching shared by every transport: arrived messages in arrival order, posted
//! receives in post order, and the binding of one to the other.
//!
//! A message is either complete on arrival (eager) or announced by its envelope only
//! (rendezvous: the payload follows once a receive is bound to it). Binding happens when a
//! receive is posted (the oldest matching message) or when a message arrives (the oldest
//! matching posted receive), so messages from one source with one type are received in the
//! order they were sent.
//!
//! **Discarded tags.** The tags of a collective call that failed ([`Mailbox::discard`])
//! are never delivered again: what of them is queued, and whatever of them arrives later,
//! is dropped — an eager message at once (its eager credit noted for the sender,
//! [`Mailbox::take_dropped`]), a rendezvous message after its payload, which is asked for
//! like any other (the clear-to-send is returned) so that its sender's send completes. Only
//! the runtime discards, and only the reserved tags of a call that has ended on this node:
//! no receive can ever be posted for them (`collectives/ctx.rs`), so no message a program
//! could receive is lost.
//!
//! **Closed calls.** A collective call whose part here completed ([`Mailbox::close`]) has
//! taken every message of it meant for this node; one that is queued or comes later was
//! sent by a member running another algorithm. It is dropped as a discarded tag's is, and
//! recorded ([`Mailbox::take_strays`]) for the transport to tell the call's members
//! (`mailbox/closed.rs`).

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

use bytes::{Bytes, BytesMut};
use hypercube_topology::NodeId;

use crate::base::landing::Landing;
use crate::base::message::{Message, MsgType, Select, Status};
use closed::Closed;
pub(crate) use closed::Stray;

/// Identifies a posted receive (the mailbox issues them; `hypercube::transport::RecvToken`).
pub type RecvToken = u64;

/// The body of an arrived message.
#[derive(Debug)]
pub(crate) enum Body {
    /// All bytes are here.
    Ready(Bytes),
    /// Only the envelope is here; the payload comes after a clear-to-send.
    Pending {
        /// The sender's id for this message.
        msg_id: u64,
        /// Bytes received so far (allocated at the first of several chunks; a message
        /// that arrives as one chunk is kept as that chunk, without a copy).
        buf: Option<BytesMut>,
    },
}

/// One arrived message (or its envelope).
#[derive(Debug)]
pub(crate) struct Envelope {
    pub id: u64,
    pub source: NodeId,
    pub tag: u32,
    pub len: u64,
    pub body: Body,
    /// True if the whole message came at once (and so used the sender's eager credit).
    pub eager: bool,
    /// The sender's number for the message (the frame's `msg_id`; 0 where the transport
    /// has none), which names it in a trace.
    pub wire_id: u64,
}

impl Envelope {
    fn status(&self) -> Status {
        Status {
            source: self.source,
            msg_type: MsgType(self.tag),
            len: self.len,
            id: self.id,
        }
    }
}

/// A rendezvous message just bound to a receive: the transport must send a clear-to-send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NeedCts {
    pub source: NodeId,
    pub msg_id: u64,
}

/// What the receiver learns when it takes a message (for credit accounting).
#[derive(Debug)]
pub(crate) struct Taken {
    pub message: Message,
    /// True if the message came eagerly (and so used the sender's credit).
    pub eager: bool,
    /// Its length as announced: `message.data` of a message landed in two pieces is a
    /// view of the first only (`base/landing.rs`), but the whole used the sender's credit.
    pub(crate) len: u64,
    /// The sender's number for the message ([`Envelope::wire_id`]).
    pub wire_id: u64,
}

/// The matching state of one node.
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    next_id: u64,
    next_token: RecvToken,
    unexpected: VecDeque<Envelope>,
    posted: VecDeque<(RecvToken, Select)>,
    bound: FxHashMap<RecvToken, Envelope>,
    rendezvous: FxHashMap<(NodeId, u64), RecvToken>,
    /// Abandoned receives whose large message is still arriving: when it is complete it goes
    /// back to the queue instead of waiting for a receive that will never take it.
    orphans: FxHashSet<RecvToken>,
    /// Tags whose messages are dropped, queued or arriving ([`Mailbox::discard`]).
    discarded: FxHashSet<u32>,
    /// Rendezvous messages of discarded tags whose payload is still arriving: dropped when
    /// complete.
    sinks: FxHashSet<RecvToken>,
    /// Dropped eager messages whose credit the sender is owed: (source, length).
    dropped: Vec<(NodeId, u64)>,
    /// Receives whose message is to land in the caller's memory ([`Mailbox::post_landing`]),
    /// and how many of its bytes are there: posted ones, and bound rendezvous messages of
    /// the landing's exact length (any other message is received as usual).
    landings: FxHashMap<RecvToken, (Landing, usize)>,
    /// The collective calls whose part here has completed ([`Mailbox::close`]).
    closed: Closed,
    /// Messages of closed calls, dropped, for the transport to tell the calls' members of.
    strays: Vec<Stray>,
}

impl Mailbox {
    /// A message arrived. Returns the clear-to-send to issue if it was a rendezvous
    /// envelope that a posted receive took at once.
    pub fn arrive(&mut self, source: NodeId, tag: u32, len: u64, body: Body) -> Option<NeedCts> {
        self.arrive_id(source, tag, len, body, 0)
    }

    /// [`Mailbox::arrive`] for a message its sender numbered `wire_id` (for traces).
    pub fn arrive_id(
        &mut self,
        source: NodeId,
        tag: u32,
        len: u64,
        body: Body,
        wire_id: u64,
    ) -> Option<NeedCts> {
        let eager = matches!(body, Body::Ready(_));
        let env = self.envelope(source, tag, len, body, eager, wire_id);
        let env = match self.refuse(env) {
            Ok(need) => return need,
            Err(env) => env,
        };
        match self.bind_posted(env) {
            Ok(need) => need,
            Err(env) => {
                self.unexpected.push_back(env);
                None
            }
        }
    }

    /// A message that arrives (or begins to: `land_eager`), numbered in arrival order.
    fn envelope(
        &mut self,
        source: NodeId,
        tag: u32,
        len: u64,
        body: Body,
        eager: bool,
        wire_id: u64,
    ) -> Envelope {
        let id = self.next_id;
        self.next_id += 1;
        Envelope {
            id,
            source,
            tag,
            len,
            body,
            eager,
            wire_id,
        }
    }

    /// Bind `env` to the oldest posted receive that matches it, as an arrival does;
    /// `Err(env)` if none does.
    fn bind_posted(&mut self, env: Envelope) -> Result<Option<NeedCts>, Envelope> {
        let Some(pos) = self
            .posted
            .iter()
            .position(|(_, s)| s.matches(env.source, env.tag))
        else {
            return Err(env);
        };
        let (token, _) = self.posted.remove(pos).expect("position is in range");
        Ok(self.bind(token, env))
    }

    fn bind(&mut self, token: RecvToken, mut env: Envelope) -> Option<NeedCts> {
        let need = match &mut env.body {
            Body::Pending { msg_id, .. } => {
                self.rendezvous.insert((env.source, *msg_id), token);
                Some(NeedCts {
                    source: env.source,
                    msg_id: *msg_id,
                })
            }
            Body::Ready(_) => None,
        };
        // A landing takes only a rendezvous message of its own length (its payload is
        // still to come); any other message is received as usual, and copied by the
        // receive if it fits.
        if let Some((l, _)) = self.landings.get(&token) {
            let fits = matches!(env.body, Body::Pending { .. }) && env.len == l.len() as u64;
            if !fits || env.len == 0 {
                self.landings.remove(&token);
            }
        }
        // A zero-length rendezvous message is complete as soon as it is bound.
        if env.len == 0 {
            if let Body::Pending { .. } = env.body {
                env.body = Body::Ready(Bytes::new());
            }
        }
        self.bound.insert(token, env);
        need
    }

    /// Post a receive. Binds the oldest matching arrived message, if any.
    pub fn post(&mut self, sel: Select) -> (RecvToken, Option<NeedCts>) {
        let token = self.next_token;
        self.next_token += 1;
        if let Some(pos) = self
            .unexpected
            .iter()
            .position(|e| sel.matches(e.source, e.tag))
        {
            let env = self.unexpected.remove(pos).expect("position is in range");
            let need = self.bind(token, env);
            return (token, need);
        }
        self.posted.push_back((token, sel));
        (token, None)
    }

    /// Bind the arrived message with local id `id` (found by a probe) to a new receive.
    pub fn claim(&mut self, id: u64) -> Option<(RecvToken, Option<NeedCts>)> {
        let pos = self.unexpected.iter().position(|e| e.id == id)?;
        let env = self.unexpected.remove(pos)?;
        let token = self.next_token;
        self.next_token += 1;
        let need = self.bind(token, env);
        Some((token, need))
    }

    /// The oldest arrived, not yet bound message that matches.
    pub fn probe(&self, sel: &Select) -> Option<Status> {
        self.unexpected
            .iter()
            .find(|e| sel.matches(e.source, e.tag))
            .map(Envelope::status)
    }

    /// Is the receive complete? Then take its message.
    pub fn take(&mut self, token: RecvToken) -> Option<Taken> {
        let ready = matches!(
            self.bound.get(&token),
            Some(Envelope {
                body: Body::Ready(_),
                ..
            })
        );
        if !ready {
            return None;
        }
        let env = self.bound.remove(&token)?;
        self.landings.remove(&token);
        let eager = env.eager;
        let wire_id = env.wire_id;
        let len = env.len;
        match env.body {
            Body::Ready(data) => Some(Taken {
                message: Message {
                    source: env.source,
                    tag: env.tag,
                    data,
                },
                eager,
                wire_id,
                len,
            }),
            Body::Pending { .. } => None,
        }
    }

    /// The selector of a posted receive that no message has bound yet.
    pub fn unbound_select(&self, token: RecvToken) -> Option<Select> {
        self.posted
            .iter()
            .find(|(t, _)| *t == token)
            .map(|(_, s)| *s)
    }

    /// Is `token` a known receive (posted or bound)?
    pub fn knows(&self, token: RecvToken) -> bool {
        self.bound.contains_key(&token) || self.posted.iter().any(|(t, _)| *t == token)
    }

    /// Payload bytes of a rendezvous message arrived. Returns `Err` with a description if
    /// no receive expects them or they overflow the announced length.
    pub fn data(&mut self, source: NodeId, msg_id: u64, chunk: Bytes) -> Result<bool, String> {
        let Some(&token) = self.rendezvous.get(&(source, msg_id)) else {
            return Err(format!(
                "payload for message {msg_id} from node {source}, which no receive expects"
            ));
        };
        let Some(env) = self.bound.get_mut(&token) else {
            return Err(format!(
                "payload for a cancelled message {msg_id} from node {source}"
            ));
        };
        let Body::Pending { buf, .. } = &mut env.body else {
            return Err(format!(
                "payload for a complete message {msg_id} from node {source}"
            ));
        };
        let landing = self.landings.get_mut(&token);
        let have = match &landing {
            Some((_, filled)) => *filled as u64,
            None => buf.as_ref().map_or(0, |b| b.len()) as u64,
        };
        if have + chunk.len() as u64 > env.len {
            return Err(format!(
                "message {msg_id} from node {source} announced {} bytes but more arrived",
                env.len
            ));
        }
        if let Some((l, filled)) = landing {
            l.write(*filled, &chunk);
            *filled += chunk.len();
            if *filled as u64 == env.len {
                env.body = Body::Ready(l.view());
                self.complete(token, source, msg_id);
                return Ok(true);
            }
            return Ok(false);
        }
        if buf.is_none() && chunk.len() as u64 == env.len {
            // The whole message in one chunk: keep it as it is.
            env.body = Body::Ready(chunk);
            self.complete(token, source, msg_id);
            return Ok(true);
        }
        let cap = usize::try_from(env.len).unwrap_or(usize::MAX);
        let b = buf.get_or_insert_with(|| BytesMut::with_capacity(cap));
        b.extend_from_slice(&chunk);
        if b.len() as u64 == env.len {
            let data = std::mem::take(b).freeze();
            env.body = Body::Ready(data);
            self.complete(token, source, msg_id);
            return Ok(true);
        }
        Ok(false)
    }

    /// The last byte of a large message arrived.
    pub(super) fn complete(&mut self, token: RecvToken, source: NodeId, msg_id: u64) {
        self.rendezvous.remove(&(source, msg_id));
        if self.sinks.remove(&token) {
            self.bound.remove(&token);
            return;
        }
        if self.orphans.remove(&token) {
            if let Some(env) = self.bound.remove(&token) {
                self.requeue(env);
            }
        }
    }

    /// Withdraw a posted receive that no message has bound yet. Returns false if a message
    /// is bound to it (the receive stays valid) or the token is unknown.
    pub fn cancel(&mut self, token: RecvToken) -> bool {
        if let Some(pos) = self.posted.iter().position(|(t, _)| *t == token) {
            self.posted.remove(pos);
            self.landings.remove(&token);
            return true;
        }
        false
    }

    /// The receive will never be completed (its request was dropped): withdraw it, and put a
    /// message bound to it back in the queue at its arrival position — now if it is complete,
    /// when its last byte arrives otherwise. A message is never lost to a dropped request.
    pub fn abandon(&mut self, token: RecvToken) {
        self.detach(token);
        if self.cancel(token) {
            return;
        }
        match self.bound.get(&token) {
            Some(Envelope {
                body: Body::Ready(_),
                ..
            }) => {
                if let Some(env) = self.bound.remove(&token) {
                    self.requeue(env);
                }
            }
            Some(_) => {
                self.orphans.insert(token);
            }
            None => {}
        }
    }

    /// Put a complete message whose receive was abandoned back: to the oldest posted
    /// receive that matches it (one posted after it was bound, which no queued message
    /// matches: it would have bound that at its post), else into the queue in arrival
    /// order — or drop it, if its tag is discarded.
    fn requeue(&mut self, env: Envelope) {
        let env = match self.refuse(env) {
            Ok(_) => return,
            Err(env) => env,
        };
        let env = match self.bind_posted(env) {
            Ok(_) => return,
            Err(env) => env,
        };
        let pos = self
            .unexpected
            .iter()
            .position(|e| e.id > env.id)
            .unwrap_or(self.unexpected.len());
        self.unexpected.insert(pos, env);
    }

    /// The dropped eager messages whose credit is owed to their senders, since the last
    /// call: (source, length).
    pub fn take_dropped(&mut self) -> Vec<(NodeId, u64)> {
        std::mem::take(&mut self.dropped)
    }

    /// Drop a message of a discarded tag: a complete one now (noting an eager one's credit),
    /// an announced one once its payload has come — the returned clear-to-send asks for it.
    fn drop_envelope(&mut self, env: Envelope) -> Option<NeedCts> {
        let msg_id = match env.body {
            Body::Ready(_) => {
                if env.eager {
                    self.dropped.push((env.source, env.len));
                }
                return None;
            }
            Body::Pending { msg_id, .. } => msg_id,
        };
        let need = NeedCts {
            source: env.source,
            msg_id,
        };
        if env.len > 0 {
            let token = self.next_token;
            self.next_token += 1;
            self.rendezvous.insert((env.source, msg_id), token);
            self.sinks.insert(token);
            self.bound.insert(token, env);
        }
        Some(need)
    }

    /// Messages that arrived and were never received (reported at shutdown).
    pub fn unreceived(&self) -> Vec<Status> {
        self.unexpected.iter().map(Envelope::status).collect()
    }
}

mod closed;
mod held;
mod landing;

pub(crate) use held::Held;
#[cfg(test)]
mod tests;
