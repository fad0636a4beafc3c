//! The message protocol on the engine. Sending: a small message within the receiver's
//! eager credit goes whole (`Eager`); any other announces itself (`Rts`) and waits for the
//! receiver's clear-to-send (`Cts`) before its payload streams as `Data` frames. Receiving:
//! the mailbox binds messages to receives, a bound `Rts` is answered with a `Cts`, consumed
//! eager bytes are credited back in batches (`Credit`). And the dispatch of every frame that
//! arrives: deliver it here, or forward it on its e-cube route. `docs/protocol.md` has the
//! frames.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use hypercube_topology::{NodeId, Route};

use super::engine::{Engine, PendingSend, State};
use super::link::{Item, LinkIn, OutFrame, ReadError, ReadOutcome};
use super::wait::{describe_sends, SEND_WAIT};
use crate::base::message::{Message, Select, Status};
use crate::base::parts::Parts;
use crate::error::{Error, Result};
use crate::trace;
use crate::transport::api::SendToken;
use crate::transport::mailbox::RecvToken;
use crate::transport::mailbox::{Body, NeedCts};
use crate::wire::frame::{Header, Kind};

/// Per-message overhead charged against eager credit (so empty messages are bounded too).
const EAGER_OVERHEAD: u64 = 64;
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
            if len <= eager_limit as u64 && st.credits[slot] >= cost {
                st.credits[slot] -= cost;
                // Every message gets a number, eager ones too: it names it in a trace.
                let id = st.next_msg_id;
                st.next_msg_id += 1;
                let h = Header {
                    kind: Kind::Eager,
                    src: self.me,
                    dest,
                    tag,
                    msg_id: id,
                    total_len: len,
                    frame_len: len as u32,
                    route,
                };
                st.sent_to[slot] += 1;
                self.send_frame(&mut st, h, data, None);
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
        };
        self.send_frame(&mut st, h, Parts::default(), None);
        Ok((id, id))
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
        let mut st = self.lock();
        let Some((token, need)) = st.mailbox.claim(status.id) else {
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

    /// Credit back the eager messages the mailbox dropped (their tags are discarded), as
    /// if they had been received.
    pub(super) fn settle_dropped(&self, st: &mut State) {
        for (source, len) in st.mailbox.take_dropped() {
            self.consumed(st, source, len);
        }
    }

    /// Send the clear-to-send a receive that just bound a rendezvous message needs.
    fn issue_cts(&self, st: &mut State, need: Option<NeedCts>) {
        if let Some(n) = need {
            let h = Header::control(Kind::Cts, self.me, n.source, n.msg_id, 0);
            self.send_frame(st, h, Parts::default(), None);
        }
    }

    /// Read one link (the caller holds its input lock) and act on what came.
    pub(super) fn service_input(&self, inp: &mut LinkIn, link: usize) {
        let res = inp.read(self.num_nodes, self.has_host);
        if matches!(&res, Ok(ReadOutcome::Frames(f)) if f.is_empty()) {
            return;
        }
        let mut st = self.lock();
        let (frames, eof) = match res {
            Ok(ReadOutcome::Frames(f)) => (f, false),
            Ok(ReadOutcome::Eof(f)) => (f, true),
            Err(err) => {
                st.link_done[link] = true;
                let _ = inp.stream.shutdown(std::net::Shutdown::Both);
                let e = match err {
                    ReadError::Protocol(detail) => Error::Protocol {
                        peer: inp.peer,
                        detail,
                    },
                    ReadError::Io(e) => self.link_error(&st, link, inp.peer, "reading", &e),
                };
                if !st.closing {
                    self.fail(&mut st, e);
                }
                return;
            }
        };
        let any = !frames.is_empty();
        if any {
            self.activity.fetch_add(1, Ordering::Relaxed);
        }
        for item in frames {
            match item {
                Item::Frame(h, payload) => self.dispatch(&mut st, link, h, payload),
                Item::Start(h, first) => self.pass_on_start(&mut st, link, h, first),
                Item::More(more, last) => self.pass_on_more(&mut st, link, more, last),
            }
        }
        if eof && !st.link_done[link] {
            st.link_done[link] = true;
            if !st.peer_closed[link] && !st.closing {
                let e = Error::PeerGone {
                    peer: inp.peer,
                    detail: "the connection closed without a goodbye (the process probably died)"
                        .into(),
                };
                self.fail(&mut st, e);
            }
        }
        if any || eof {
            self.notify();
        }
    }

    /// Act on one arrived frame: forward it, or deliver it to this node's mailbox and
    /// protocol state.
    fn dispatch(&self, st: &mut State, link: usize, h: Header, payload: Bytes) {
        if h.kind == Kind::Close {
            st.peer_closed[link] = true;
            return;
        }
        if h.dest != self.me {
            // Forward on the e-cube route; the payload is shared, not copied.
            if trace::on() {
                self.trace_forward(&h);
            }
            self.send_frame(st, h, payload.into(), None);
            self.note_forward();
            return;
        }
        match h.kind {
            Kind::Eager => {
                st.mailbox
                    .arrive_id(h.src, h.tag, h.total_len, Body::Ready(payload), h.msg_id);
                self.settle_dropped(st);
                self.arrived(st, h.src);
            }
            Kind::Rts => {
                self.arrived(st, h.src);
                let need = st.mailbox.arrive_id(
                    h.src,
                    h.tag,
                    h.total_len,
                    Body::Pending {
                        msg_id: h.msg_id,
                        buf: None,
                    },
                    h.msg_id,
                );
                self.issue_cts(st, need);
            }
            Kind::Cts => self.start_payload(st, h.src, h.msg_id),
            Kind::Data => {
                if let Err(detail) = st.mailbox.data(h.src, h.msg_id, payload) {
                    let peer = st.out[link].peer;
                    self.fail(st, Error::Protocol { peer, detail });
                }
            }
            Kind::Credit => {
                let slot = self.slot(h.src);
                let c = &mut st.credits[slot];
                *c = c.saturating_add(h.total_len).min(self.tuning.eager_window);
            }
            Kind::Fin => {
                let slot = self.slot(h.src);
                st.fin_count[slot] = Some(h.total_len);
                st.finished[slot] = st.arrived_from[slot] >= h.total_len;
            }
            Kind::Close => {}
        }
    }

    /// A message (eager or announced) from `src` arrived: count it, and if `src`'s `Fin`
    /// came first (it took a shorter route), `src` is finished once its count is reached.
    fn arrived(&self, st: &mut State, src: NodeId) {
        let slot = self.slot(src);
        st.arrived_from[slot] += 1;
        if let Some(n) = st.fin_count[slot] {
            st.finished[slot] = st.arrived_from[slot] >= n;
        }
    }

    /// Cut-through: a frame for another node whose payload still arrives on input `link`
    /// goes on its route now, open, with the bytes that came so far.
    fn pass_on_start(&self, st: &mut State, link: usize, mut h: Header, first: Bytes) {
        if trace::on() {
            self.trace_forward(&h);
        }
        let out = self.hop(&mut h);
        self.push(st, out, OutFrame::open(&h, first, link));
        self.note_forward();
    }

    /// Cut-through: more bytes of the frame input `link` is passing on (the open frame fed
    /// by that link, on whichever output it is queued); `last` completes it.
    fn pass_on_more(&self, st: &mut State, link: usize, more: Bytes, last: bool) {
        let open = st
            .out
            .iter_mut()
            .enumerate()
            .find_map(|(k, o)| o.open_frame(link).map(|f| (k, f)));
        let Some((out, frame)) = open else {
            // Its outgoing link was closed (the job is ending): nothing more goes out on it.
            tracing::debug!(
                link,
                "dropping bytes of a frame in transit: its link is closed"
            );
            return;
        };
        frame.extend(more, last);
        self.flush(st, out);
        self.note_forward();
    }

    /// Note that this node forwarded just now (see `progress.rs`: a node on an active
    /// route keeps its progress thread's look-aside short).
    fn note_forward(&self) {
        let now = self.epoch.elapsed().as_millis() as u64 + 1;
        self.last_forward_ms.store(now, Ordering::Relaxed);
    }

    /// Did this node forward a frame within the last progress tick?
    pub(super) fn forwarded_lately(&self) -> bool {
        let last = self.last_forward_ms.load(Ordering::Relaxed);
        let now = self.epoch.elapsed().as_millis() as u64 + 1;
        last != 0 && now.saturating_sub(last) <= self.tuning.progress_tick.as_millis() as u64
    }

    /// The receiver is ready for a large message: queue its payload as data frames.
    fn start_payload(&self, st: &mut State, receiver: NodeId, msg_id: u64) {
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
        let link = self.hop(&mut first);
        let chunk = match self.wire_chunk.load(std::sync::atomic::Ordering::Relaxed) {
            0 => self.tuning.chunk,
            c => c,
        };
        let mut off = 0;
        while off < data.len() {
            let end = (off + chunk).min(data.len());
            let last = end == data.len();
            let h = Header {
                frame_len: (end - off) as u32,
                ..first
            };
            let frame = OutFrame::new(&h, data.slice(off..end), last.then_some(msg_id));
            // Queue all chunks, then write: push() flushes only when the queue was empty.
            st.out[link].queue.push_back(frame);
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
            self.send_frame(st, h, Parts::default(), None);
        }
    }

    /// Take a completed receive's message, accounting for its eager credit; `t0` is when
    /// the receive began to be awaited (for the trace).
    pub(super) fn take(&self, st: &mut State, token: RecvToken, t0: u64) -> Option<Message> {
        let t = st.mailbox.take(token)?;
        if t.eager {
            self.consumed(st, t.message.source, t.message.data.len() as u64);
        }
        if trace::on() {
            let m = &t.message;
            trace::recv(t0, m.source, m.tag, m.data.len() as u64, t.wire_id);
        }
        Some(t.message)
    }

    /// Record a frame this node forwards (tracing is on): the message frames, not the
    /// protocol's own (clear-to-send, credits, finish notices).
    #[cold]
    fn trace_forward(&self, h: &Header) {
        let kind = match h.kind {
            Kind::Eager => "eager",
            Kind::Rts => "rts",
            Kind::Data => "data",
            _ => return,
        };
        if h.kind != Kind::Data && trace::hidden(h.tag) {
            return;
        }
        let bytes = if h.kind == Kind::Rts {
            0
        } else {
            h.frame_len as u64
        };
        trace::forward(h.src, h.dest, h.msg_id, kind, bytes, self.next_link(h));
    }
}
