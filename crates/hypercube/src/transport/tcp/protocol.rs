//! The message protocol on the engine. Sending: a small message within the receiver's
//! eager credit goes whole (`Eager`); any other announces itself (`Rts`) and waits for the
//! receiver's clear-to-send (`Cts`) before its payload streams as `Data` frames. Receiving:
//! the mailbox binds messages to receives, a bound `Rts` is answered with a `Cts`, consumed
//! eager bytes are credited back in batches (`Credit`). What arrives is dispatched by
//! `dispatch.rs`. `docs/protocol.md` has the frames.

use hypercube_topology::{NodeId, Route};

use super::describe::{describe_sends, SEND_WAIT};
use super::engine::relock;
use super::engine::{Engine, PendingSend, State};
use super::link::{LinkOut, OutFrame};
use crate::base::landing::Landing;
use crate::base::message::{Message, Select, Status};
use crate::base::parts::Parts;
use crate::error::{Error, Result};
use crate::trace;
use crate::transport::api::SendToken;
use crate::transport::mailbox::RecvToken;
use crate::transport::mailbox::{Body, NeedCts};
use crate::wire::frame::{Header, Kind, MAX_FRAME_LEN};

/// Per-message overhead charged against eager credit (so empty messages are bounded too).
const EAGER_OVERHEAD: u64 = 64;
/// A message up to this many bytes past the eager limit still goes eagerly. Typed calls put
/// a few bytes in front of the caller's data (`bcast_vec`'s head byte, a value's width);
/// data of exactly the limit's length must not wait for a rendezvous because of them (a
/// 64 KiB `bcast_vec` did: 1.5–2.2× the byte form, `docs/perf/typed.md`).
pub(super) const EAGER_SLACK: u64 = 64;
/// Lent memory still kept for fewer bytes than this when its lender returns is copied at
/// once ([`Engine::release_lent`]), not waited for. Measured on loopback (`osu --form into
/// --vs bytes`, two jobs each, 64 KiB blocks landing; the two policies from one temporary
/// build whose wait bound an environment variable set, not kept — and with the first
/// `--vs`, whose bias both sides shared): the 64 KiB all-to-all on 4 ranks
/// took 1.10–1.12× the byte form's time when it waited (up to 100 µs) and 1.00–1.04× when
/// it copied at once, the all-gather 1.16–1.27× and 1.14×; at 256 KiB the two were alike
/// (1.05–1.16× and 1.03–1.27×), and at 1 MiB waiting was the better (all-gather on 8 ranks
/// 1.04–1.05× against 1.10×).
const COPY_LENT_BELOW: usize = 256 << 10;
/// The token of a send that completed inside `isend` (eager or to this node itself).
const SENT: SendToken = SendToken::MAX;

impl Engine {
    /// Start sending `data` to `dest` (checked by the caller): to this node itself, eagerly
    /// within the credit, else by rendezvous — waiting first while too many bytes of large
    /// sends are pending.
    pub(super) fn send(
        &self,
        dest: NodeId,
        tag: u32,
        data: Parts,
        route: Route,
    ) -> Result<SendToken> {
        let t0 = if trace::on() { trace::now() } else { 0 };
        let len = data.len() as u64;
        let (token, id) = self.start_send(dest, tag, data, route)?;
        if trace::on() {
            trace::send(t0, dest, tag, len, id);
        }
        Ok(token)
    }

    /// [`Engine::send`] without the trace: the token and the message's number.
    fn start_send(
        &self,
        dest: NodeId,
        tag: u32,
        data: Parts,
        route: Route,
    ) -> Result<(SendToken, u64)> {
        let len = data.len() as u64;
        if dest == self.me {
            let mut st = self.lock();
            let id = st.next_msg_id;
            st.next_msg_id += 1;
            st.mailbox
                .arrive_id(dest, tag, len, Body::Ready(data.into_bytes()), id);
            self.tell_strays(&mut st);
            self.notify();
            return Ok((SENT, id));
        }
        let cost = len + EAGER_OVERHEAD;
        {
            let mut st = self.lock();
            if let Some(f) = &st.failure {
                return Err(f.duplicate());
            }
            let slot = self.slot(dest);
            let eager_limit = match self.wire_eager.load(std::sync::atomic::Ordering::Relaxed) {
                0 => self.tuning.eager_limit,
                e => e,
            };
            let eager_max = (eager_limit as u64 + EAGER_SLACK).min(MAX_FRAME_LEN as u64);
            if len <= eager_max && st.credits[slot] >= cost {
                st.credits[slot] -= cost;
                let id = self.eager(&mut st, dest, tag, data, route);
                return Ok((SENT, id));
            }
        }
        // Rendezvous: announce, keep the bytes until the receiver asks for them. Wait while
        // too many bytes are already pending (at least one send may always be pending).
        let max = self.tuning.max_pending;
        self.wait_for("room for a large send (flow control)", None, |_, st| {
            (st.pending_bytes == 0 || st.pending_bytes + len <= max).then_some(())
        })?;
        let mut st = self.lock();
        let id = st.next_msg_id;
        st.next_msg_id += 1;
        st.pending.insert(id, PendingSend { dest, data, route });
        st.pending_bytes += len;
        let slot = self.slot(dest);
        st.sent_to[slot] += 1;
        let h = Header {
            kind: Kind::Rts,
            src: self.me,
            dest,
            tag,
            msg_id: id,
            total_len: len,
            frame_len: 0,
            route,
            seq: 0,
            trailer: false,
            ack_now: false,
        };
        self.originate(&mut st, h, Parts::default(), None);
        Ok((id, id))
    }

    /// Send `data` to `dest` as one eager frame (its credit taken by the caller); the
    /// message's number.
    pub(super) fn eager(
        &self,
        st: &mut State,
        dest: NodeId,
        tag: u32,
        data: Parts,
        route: Route,
    ) -> u64 {
        // Every message gets a number, eager ones too: it names it in a trace.
        let id = st.next_msg_id;
        st.next_msg_id += 1;
        let len = data.len() as u64;
        let h = Header {
            kind: Kind::Eager,
            src: self.me,
            dest,
            tag,
            msg_id: id,
            total_len: len,
            frame_len: len as u32,
            route,
            seq: 0,
            trailer: false,
            ack_now: false,
        };
        st.sent_to[self.slot(dest)] += 1;
        self.originate(st, h, data, None);
        id
    }

    /// Tell the members of each closed call a message of which the mailbox dropped
    /// (`Mailbox::close`, `base/notice.rs`): a failure notice to every other member, sent
    /// at once, eagerly, under the lock. A notice is small, so it goes even where the eager
    /// credit is spent (the credit is taken down to zero): it must not wait, nor make the
    /// reader that found the stray wait, for a receiver that may have finished the call.
    pub(super) fn tell_strays(&self, st: &mut State) {
        for s in st.mailbox.take_strays() {
            if st.failure.is_some() {
                return;
            }
            let (tag, members, body) = crate::base::notice::stray(self.me, s.source, s.call);
            for m in members {
                let slot = self.slot(m);
                let cost = body.len() as u64 + EAGER_OVERHEAD;
                st.credits[slot] = st.credits[slot].saturating_sub(cost);
                self.eager(st, m, tag, body.clone().into(), Route::ECUBE);
            }
        }
    }

    /// This node's part of the collective call `call` completed (`Transport::close`):
    /// drop its messages queued and arriving, telling the call's members of each.
    pub(super) fn close(&self, call: u32) {
        let mut st = self.lock();
        for need in st.mailbox.close(call) {
            self.issue_cts(&mut st, Some(need));
        }
        self.settle_dropped(&mut st);
    }

    /// Has the send finished (its bytes handed to the socket)?
    pub(super) fn test_send(&self, token: SendToken) -> Result<bool> {
        let t0 = std::time::Instant::now();
        let st = self.lock();
        if let Some(f) = &st.failure {
            return Err(f.duplicate());
        }
        let done = !st.pending.contains_key(&token);
        drop(st);
        self.after_poll(t0, done, || SEND_WAIT.into());
        Ok(done)
    }

    /// Block until the send has finished; an error if its receiver finished first.
    pub(super) fn wait_send(&self, token: SendToken) -> Result<()> {
        if token == SENT {
            // An eager (or local) send is complete when `isend` returns.
            return Ok(());
        }
        let mut gone = None;
        self.wait_described(SEND_WAIT, &describe_sends, None, |_, st| {
            match st.pending.get(&token) {
                None => Some(()),
                Some(p) if st.finished[self.slot(p.dest)] => {
                    gone = Some(p.dest);
                    Some(())
                }
                Some(_) => None,
            }
        })?;
        match gone {
            None => Ok(()),
            Some(peer) => Err(Error::PeerFinished {
                peer,
                what: "a receive matching a large send".into(),
            }),
        }
    }

    /// Post a receive (its source checked by the caller); a rendezvous message it binds at
    /// once is sent its clear-to-send.
    pub(super) fn post(&self, sel: Select) -> RecvToken {
        let mut st = self.lock();
        let (token, need) = st.mailbox.post(sel);
        self.issue_cts(&mut st, need);
        token
    }

    /// Post a receive whose message lands in `landing` (`base/landing.rs`).
    pub(super) fn post_landing(&self, sel: Select, landing: Landing) -> RecvToken {
        let mut st = self.lock();
        let (token, need) = st.mailbox.post_landing(sel, landing);
        self.landing_hint
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.issue_cts(&mut st, need);
        token
    }

    /// The receive `token` will not be completed: withdraw it, its message (if one is
    /// bound) back to the queue. A receive with a landing takes it back first, under every
    /// link's input lock, so that no link goes on reading into it (`LinkIn::take_back`).
    pub(super) fn abandon(&self, token: RecvToken) {
        {
            let mut st = self.lock();
            if !st.mailbox.has_landing(token) {
                st.mailbox.abandon(token);
                self.settle_dropped(&mut st);
                // Its message may have gone to another posted receive, whose waiter may
                // be parked on another thread.
                return self.notify();
            }
        }
        let mut inputs: Vec<_> = self.inputs.iter().map(|m| relock(m.lock())).collect();
        let mut st = self.lock();
        if let Some(l) = st.mailbox.detach(token) {
            inputs.iter_mut().for_each(|inp| inp.take_back(&l));
        }
        st.mailbox.abandon(token);
        self.settle_dropped(&mut st);
        self.notify();
    }

    /// Let go of lent memory whose lender is returning (`base::lent`): wait a little for
    /// the acknowledgements of the kept frames that still hold some — a frame of lent
    /// memory asks to be acknowledged at once (`wire/frame.rs`, `FLAG_ACK_NOW`), and its
    /// receiver does so as soon as it has read it, most often while the lender's own last
    /// receive completes — and copy what is still kept
    /// then. The wait is bounded by about what the copy would cost (1 ms per MiB, at least
    /// 100 µs): without it, the last step of a collective that lends (allgather into the
    /// caller's memory) copied its whole last message on almost every call. Less than
    /// [`COPY_LENT_BELOW`] is copied at once: there the wait cost more than the copy.
    pub(super) fn release_lent(&self) {
        let kept: usize = self.lock().out.iter().map(LinkOut::kept_returning).sum();
        if kept == 0 {
            return;
        }
        if kept < COPY_LENT_BELOW {
            self.lock().out.iter_mut().for_each(LinkOut::unlend_kept);
            return;
        }
        let bound = std::time::Duration::from_micros(100.max(kept as u64 >> 10));
        let _ = self.wait_for("acknowledgement of lent frames", Some(bound), |_, st| {
            st.out.iter().all(|o| o.kept_returning() == 0).then_some(())
        });
        self.lock().out.iter_mut().for_each(LinkOut::unlend_kept);
    }

    /// The message of a posted receive if it is complete (after reading what came in).
    pub(super) fn test_recv(&self, token: RecvToken) -> Result<Option<Message>> {
        let t0 = std::time::Instant::now();
        let trace_t0 = if trace::on() { trace::now() } else { 0 };
        self.poll_inputs();
        let mut st = self.lock();
        if let Some(m) = self.take(&mut st, token, trace_t0) {
            drop(st);
            self.after_poll(t0, true, String::new);
            return Ok(Some(m));
        }
        if !st.mailbox.knows(token) {
            return Err(Error::InvalidRequest(format!(
                "receive {token} is not pending"
            )));
        }
        if let Some(f) = &st.failure {
            return Err(f.duplicate());
        }
        drop(st);
        self.after_poll(t0, false, || "a posted receive to complete".into());
        Ok(None)
    }

    /// Bind the message a probe returned to a new receive.
    pub(super) fn claim(&self, status: &Status) -> Result<RecvToken> {
        self.claim_with(status, None)
    }

    /// [`Engine::claim`] whose message lands in `landing` (`base/landing.rs`).
    pub(super) fn claim_landing(&self, status: &Status, landing: Landing) -> Result<RecvToken> {
        self.claim_with(status, Some(landing))
    }

    fn claim_with(&self, status: &Status, landing: Option<Landing>) -> Result<RecvToken> {
        let mut st = self.lock();
        let claimed = match landing {
            Some(l) => st.mailbox.claim_landing(status.id, l),
            None => st.mailbox.claim(status.id),
        };
        let Some((token, need)) = claimed else {
            return Err(Error::InvalidRequest(
                "the probed message was already received".into(),
            ));
        };
        self.issue_cts(&mut st, need);
        Ok(token)
    }

    /// Drop every message of `tags`, queued or arriving (`Transport::discard`): ask for the
    /// queued rendezvous messages' payloads (dropped as they come), credit the dropped
    /// eager bytes back.
    pub(super) fn discard(&self, tags: &[u32]) {
        let mut st = self.lock();
        for need in st.mailbox.discard(tags) {
            self.issue_cts(&mut st, Some(need));
        }
        self.settle_dropped(&mut st);
    }

    /// Credit back the eager messages the mailbox dropped (their tags are discarded, or
    /// their calls closed), as if they had been received; tell of the strays.
    pub(super) fn settle_dropped(&self, st: &mut State) {
        for (source, len) in st.mailbox.take_dropped() {
            self.consumed(st, source, len);
        }
        self.tell_strays(st);
    }

    /// Send the clear-to-send a receive that just bound a rendezvous message needs.
    pub(super) fn issue_cts(&self, st: &mut State, need: Option<NeedCts>) {
        if let Some(n) = need {
            let h = Header::control(Kind::Cts, self.me, n.source, n.msg_id, 0);
            self.originate(st, h, Parts::default(), None);
        }
    }

    /// The receiver is ready for a large message: queue its payload as data frames.
    pub(super) fn start_payload(&self, st: &mut State, receiver: NodeId, msg_id: u64) {
        let Some(p) = st.pending.get(&msg_id) else {
            let peer = receiver;
            self.fail(
                st,
                Error::Protocol {
                    peer,
                    detail: format!("clear-to-send for unknown message {msg_id}"),
                },
            );
            return;
        };
        if p.dest != receiver {
            self.fail(
                st,
                Error::Protocol {
                    peer: receiver,
                    detail: format!("clear-to-send for message {msg_id} from the wrong node"),
                },
            );
            return;
        }
        let data = p.data.clone();
        let route = p.route;
        let total = data.len() as u64;
        if data.is_empty() {
            st.pending.remove(&msg_id);
            self.notify();
            return;
        }
        // Every data frame leaves on the route's first link, carrying the rest.
        let mut first = Header::control(Kind::Data, self.me, receiver, msg_id, total);
        first.route = route;
        let Some(link) = self.hop(st, &mut first) else {
            return self.unreachable(st, receiver);
        };
        let slot = self.slot(receiver);
        let chunk = match self.wire_chunk.load(std::sync::atomic::Ordering::Relaxed) {
            0 => self.tuning.chunk,
            c => c,
        };
        let mut off = 0;
        while off < data.len() {
            let end = (off + chunk).min(data.len());
            let last = end == data.len();
            let mut h = Header {
                frame_len: (end - off) as u32,
                ..first
            };
            st.streams.number(slot, &mut h);
            let frame = OutFrame::new(&h, data.slice(off..end), last.then_some(msg_id));
            // Queue all chunks, then write: push() flushes only when the queue was empty.
            self.queue(st, link, frame);
            off = end;
        }
        self.flush(st, link);
    }

    /// Account for a consumed eager message and return credit when enough piled up.
    fn consumed(&self, st: &mut State, source: NodeId, len: u64) {
        if source == self.me {
            return;
        }
        let slot = self.slot(source);
        let c = &mut st.consumed[slot];
        *c += len + EAGER_OVERHEAD;
        if *c >= self.tuning.eager_window / 4 {
            let amount = std::mem::take(c);
            let h = Header::control(Kind::Credit, self.me, source, 0, amount);
            self.originate(st, h, Parts::default(), None);
        }
    }

    /// Take a completed receive's message, accounting for its eager credit; `t0` is when
    /// the receive began to be awaited (for the trace).
    pub(super) fn take(&self, st: &mut State, token: RecvToken, t0: u64) -> Option<Message> {
        let t = st.mailbox.take(token)?;
        // The announced length: a message landed in two pieces is delivered as a view of
        // the first (its credit leaked with `data.len()`, and the sender's later messages
        // went by rendezvous: `docs/perf/analysis.md`).
        if t.eager {
            self.consumed(st, t.message.source, t.len);
        }
        if trace::on() {
            let m = &t.message;
            trace::recv(t0, m.source, m.tag, t.len, t.wire_id);
        }
        Some(t.message)
    }
}
