//! Receives that name the memory their message goes to (`base/landing.rs`): the mailbox's
//! side — binding such a receive to a rendezvous message of the landing's length (or to a
//! long eager message as it begins to arrive, [`Mailbox::land_eager`]), telling
//! a link where the next payload bytes go, counting what the link wrote there, and giving
//! the memory back when the receive is dropped. (Copying chunks into a landing is part of
//! [`Mailbox::data`].)

use bytes::{Bytes, BytesMut};
use hypercube_topology::NodeId;

use super::{Body, Mailbox, NeedCts, RecvToken};
use crate::base::landing::Landing;
use crate::base::message::Select;

impl Mailbox {
    /// Is any receive posted or bound with a landing?
    pub(crate) fn has_landings(&self) -> bool {
        !self.landings.is_empty()
    }

    /// Post a receive whose message is to land in `landing` (`base/landing.rs`): the
    /// payload of a rendezvous message of exactly that length is written there as it
    /// arrives ([`Mailbox::data`], [`Mailbox::landed`]), and the message is then a view of
    /// it. Binds the oldest matching arrived message, if any.
    pub fn post_landing(&mut self, sel: Select, landing: Landing) -> (RecvToken, Option<NeedCts>) {
        self.landings.insert(self.next_token, (landing, 0));
        self.post(sel)
    }

    /// Does receive `token` have a landing (posted with one, or bound to a message that
    /// lands there)?
    pub fn has_landing(&self, token: RecvToken) -> bool {
        self.landings.contains_key(&token)
    }

    /// [`Mailbox::claim`] for a receive whose message is to land in `landing` (as
    /// [`Mailbox::post_landing`]).
    pub fn claim_landing(
        &mut self,
        id: u64,
        landing: Landing,
    ) -> Option<(RecvToken, Option<NeedCts>)> {
        let token = self.next_token;
        self.landings.insert(token, (landing, 0));
        let claimed = self.claim(id);
        if claimed.is_none() {
            self.landings.remove(&token);
        }
        claimed
    }

    /// Where the next payload bytes of message `msg_id` from `source` go, if its receive
    /// named a landing: the landing and how many of its bytes are filled.
    pub fn landing_at(&self, source: NodeId, msg_id: u64) -> Option<(Landing, usize)> {
        let token = self.rendezvous.get(&(source, msg_id))?;
        self.landings.get(token).copied()
    }

    /// An eager message from `source` (its sender's `msg_id`, `len` bytes, type `tag`) has
    /// begun to arrive and its payload is still to come: if the receive it will bind — the
    /// oldest posted one that matches, as on arrival — names a landing of its length, bind
    /// it now as a message whose payload follows (as a rendezvous message's, but without a
    /// clear-to-send, and counted as eager for its sender's credit) and return where the
    /// payload goes. `None`: it is received as usual once whole. A copy of a message
    /// already bound so (resent after a link died) lands where the first was to.
    pub fn land_eager(
        &mut self,
        source: NodeId,
        tag: u32,
        len: u64,
        msg_id: u64,
    ) -> Option<(Landing, usize)> {
        if self.expects(source, msg_id) {
            // Bound already: where the first copy was to land, or nowhere if its receive
            // took the landing back (then this copy is read into a buffer and copied).
            return self.landing_at(source, msg_id);
        }
        if len == 0 || self.is_discarded(tag) {
            return None;
        }
        let (token, _) = self.posted.iter().find(|(_, s)| s.matches(source, tag))?;
        let (l, _) = *self.landings.get(token)?;
        if l.len() as u64 != len {
            return None;
        }
        let env = self.envelope(
            source,
            tag,
            len,
            Body::Pending { msg_id, buf: None },
            true,
            msg_id,
        );
        // Bound to that receive (the oldest match); no clear-to-send: the payload is on
        // its way.
        let _ = self.bind_posted(env);
        Some((l, 0))
    }

    /// Is message `msg_id` from `source` bound to a receive whose payload is still to come
    /// (a rendezvous message asked for, or an eager one bound by [`Mailbox::land_eager`])?
    pub fn expects(&self, source: NodeId, msg_id: u64) -> bool {
        // (The emptiness test first: no hashing per eager message while none is pending.)
        !self.rendezvous.is_empty() && self.rendezvous.contains_key(&(source, msg_id))
    }

    /// The receive `token` takes its landing back: what of its message arrived is copied
    /// into a buffer of the mailbox's own, where the rest arrives too. Returns the landing,
    /// if the receive had one.
    pub fn detach(&mut self, token: RecvToken) -> Option<Landing> {
        let (l, filled) = self.landings.remove(&token)?;
        if let Some(env) = self.bound.get_mut(&token) {
            match &mut env.body {
                Body::Pending { buf, .. } => {
                    let cap = usize::try_from(env.len).unwrap_or(usize::MAX);
                    let mut b = BytesMut::with_capacity(cap);
                    b.extend_from_slice(&l.copy_of(filled));
                    *buf = Some(b);
                }
                Body::Ready(data) if l.holds(data) => {
                    *data = Bytes::from(l.copy_of(l.len()));
                }
                Body::Ready(_) => {}
            }
        }
        Some(l)
    }

    /// `n` payload bytes of message `msg_id` from `source` were written straight into its
    /// landing, where [`Mailbox::landing_at`] said (by the link that read them). Returns
    /// `Err` with a description if the message has no landing or they overflow it.
    pub fn landed(&mut self, source: NodeId, msg_id: u64, n: usize) -> Result<bool, String> {
        let token = self.rendezvous.get(&(source, msg_id)).copied();
        let landing = token.and_then(|t| Some((t, self.landings.get_mut(&t)?)));
        let Some((token, (l, filled))) = landing else {
            return Err(format!(
                "payload for message {msg_id} from node {source} was read into memory no \
                 receive names any more"
            ));
        };
        if *filled + n > l.len() {
            return Err(format!(
                "message {msg_id} from node {source} announced {} bytes but more arrived",
                l.len()
            ));
        }
        *filled += n;
        if *filled < l.len() {
            return Ok(false);
        }
        let view = l.view();
        if let Some(env) = self.bound.get_mut(&token) {
            env.body = Body::Ready(view);
        }
        self.complete(token, source, msg_id);
        Ok(true)
    }
}
