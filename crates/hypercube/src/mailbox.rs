//! Message matching shared by every transport: arrived messages in arrival order, posted
//! receives in post order, and the binding of one to the other.
//!
//! A message is either complete on arrival (eager) or announced by its envelope only
//! (rendezvous: the payload follows once a receive is bound to it). Binding happens when a
//! receive is posted (the oldest matching message) or when a message arrives (the oldest
//! matching posted receive), so messages from one source with one type are received in the
//! order they were sent.

use std::collections::{HashMap, VecDeque};

use bytes::{Bytes, BytesMut};

use crate::message::{Message, MsgType, Select, Status};
use crate::NodeId;

/// Identifies a posted receive.
pub(crate) type RecvToken = u64;

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
}

/// The matching state of one node.
#[derive(Debug, Default)]
pub(crate) struct Mailbox {
    next_id: u64,
    next_token: RecvToken,
    unexpected: VecDeque<Envelope>,
    posted: VecDeque<(RecvToken, Select)>,
    bound: HashMap<RecvToken, Envelope>,
    rendezvous: HashMap<(NodeId, u64), RecvToken>,
}

impl Mailbox {
    /// A message arrived. Returns the clear-to-send to issue if it was a rendezvous
    /// envelope that a posted receive took at once.
    pub fn arrive(&mut self, source: NodeId, tag: u32, len: u64, body: Body) -> Option<NeedCts> {
        let id = self.next_id;
        self.next_id += 1;
        let eager = matches!(body, Body::Ready(_));
        let env = Envelope {
            id,
            source,
            tag,
            len,
            body,
            eager,
        };
        if let Some(pos) = self.posted.iter().position(|(_, s)| s.matches(source, tag)) {
            let (token, _) = self.posted.remove(pos).expect("position is in range");
            return self.bind(token, env);
        }
        self.unexpected.push_back(env);
        None
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
        let eager = env.eager;
        match env.body {
            Body::Ready(data) => Some(Taken {
                message: Message {
                    source: env.source,
                    tag: env.tag,
                    data,
                },
                eager,
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
        let have = buf.as_ref().map_or(0, |b| b.len()) as u64;
        if have + chunk.len() as u64 > env.len {
            return Err(format!(
                "message {msg_id} from node {source} announced {} bytes but more arrived",
                env.len
            ));
        }
        if buf.is_none() && chunk.len() as u64 == env.len {
            // The whole message in one chunk: keep it as it is.
            env.body = Body::Ready(chunk);
            self.rendezvous.remove(&(source, msg_id));
            return Ok(true);
        }
        let cap = usize::try_from(env.len).unwrap_or(usize::MAX);
        let b = buf.get_or_insert_with(|| BytesMut::with_capacity(cap));
        b.extend_from_slice(&chunk);
        if b.len() as u64 == env.len {
            let data = std::mem::take(b).freeze();
            env.body = Body::Ready(data);
            self.rendezvous.remove(&(source, msg_id));
            return Ok(true);
        }
        Ok(false)
    }

    /// Withdraw a posted receive that has not been bound. A bound message goes back to
    /// the queue in its arrival position. Returns false if the token is unknown.
    pub fn cancel(&mut self, token: RecvToken) -> bool {
        if let Some(pos) = self.posted.iter().position(|(t, _)| *t == token) {
            self.posted.remove(pos);
            return true;
        }
        false
    }

    /// Messages that arrived and were never received (reported at shutdown).
    pub fn unreceived(&self) -> Vec<Status> {
        self.unexpected.iter().map(Envelope::status).collect()
    }
}
