//! What arrives on a link, and what is done with it: a frame for another node goes on
//! towards it (whole, or in pieces as it arrives: cut-through); a frame for this node is
//! acted on in its pair's order (`sequence.rs`) — delivered to the mailbox, or to the
//! protocol state (`protocol.rs`); the link-local frames (`Ack`, `Link`, `Left`, `Close`)
//! at once. A read error that means a dead link routes around it (`reroute.rs`).

use std::sync::atomic::Ordering;

use bytes::Bytes;
use hypercube_topology::NodeId;

use super::engine::{Engine, State};
use super::link::{Item, LinkIn, OutFrame, ReadError, ReadOutcome};
use super::sequence::Turn;
use crate::error::Error;
use crate::trace;
use crate::transport::mailbox::Body;
use crate::wire::frame::{Header, Kind};

/// A link's receiver acknowledges at least every this many frames...
const ACK_FRAMES: u64 = 128;
/// ... or this many bytes read, whichever comes first (and an idle link's frames at the
/// progress thread's look after `reroute::IDLE_ACK`: `Engine::ack_idle`). What the sender
/// keeps meanwhile is memory its allocator cannot reuse: at 1 MiB the 64 KiB all-to-all
/// on 8 ranks over loopback paid twice the page faults and ran 1.15× as long.
const ACK_BYTES: u64 = 256 << 10;

impl Engine {
    /// Read one link (the caller holds its input lock) and act on what came.
    pub(super) fn service_input(&self, inp: &mut LinkIn, link: usize) {
        inp.pass_on = !self.detour.load(Ordering::Relaxed);
        inp.header_first = self.landing_hint.load(Ordering::Relaxed);
        let res = inp.read_into(self.num_nodes, self.has_host, &mut |h| {
            let mut st = self.lock();
            let found = (|| {
                let slot = self.slot(h.src);
                if !st.streams.in_turn(slot, h) {
                    return None;
                }
                // Not while another link's reader lands a copy of it (`claim.rs`).
                let claim = st.claims.take(slot, h.seq, link)?;
                let (to, at) = match h.kind {
                    // A long eager message lands if its receive is posted with a landing.
                    Kind::Eager => st.mailbox.land_eager(h.src, h.tag, h.total_len, h.msg_id),
                    _ => st.mailbox.landing_at(h.src, h.msg_id),
                }?;
                Some((to, at, claim))
            })();
            if found.is_none() && !st.mailbox.has_landings() {
                self.landing_hint.store(false, Ordering::Relaxed);
            }
            found
        });
        if matches!(&res, Ok(ReadOutcome::Frames(f)) if f.is_empty()) {
            return;
        }
        let mut st = self.lock();
        let (frames, eof) = match res {
            Ok(ReadOutcome::Frames(f)) => (f, false),
            Ok(ReadOutcome::Eof(f)) => (f, true),
            Err(_) if st.dead[link] => return,
            Err(err) => {
                let e = match err {
                    ReadError::Protocol(detail) => Error::Protocol {
                        peer: inp.peer,
                        detail,
                    },
                    ReadError::Io(e) => self.link_error(&st, link, inp.peer, "reading", &e),
                };
                let e = self.unconfirmed(&st, link, e);
                if st.closing || !self.link_down(&mut st, link, &e) {
                    st.link_done[link] = true;
                    let _ = inp.stream.shutdown(std::net::Shutdown::Both);
                    if !st.closing {
                        self.fail(&mut st, e);
                    }
                }
                return;
            }
        };
        let any = !frames.is_empty();
        // A frame whose sender lent its payload is acknowledged at once: the sender waits to
        // have the memory back (`collectives/lend.rs`).
        let prompt = frames.iter().any(|i| match i {
            Item::Landed(h, _) | Item::Frame(h, _) => h.ack_now,
            _ => false,
        });
        if any {
            self.activity.fetch_add(1, Ordering::Relaxed);
        }
        for item in frames {
            match item {
                Item::Frame(h, payload) => self.dispatch(&mut st, link, h, payload),
                Item::Start(h, first) => self.pass_on_start(&mut st, link, h, first),
                Item::More(more, last) => self.pass_on_more(&mut st, link, more, last),
                Item::Landed(h, trailer) => self.landed(&mut st, link, h, trailer),
            }
        }
        st.frames_in[link] = inp.frames_in;
        if (prompt && inp.frames_in > st.acked_in[link])
            || inp.frames_in - st.acked_in[link] >= ACK_FRAMES
            || inp.bytes_read - st.acked_bytes[link] >= ACK_BYTES
        {
            st.acked_bytes[link] = inp.bytes_read;
            self.ack(&mut st, link);
        }
        if eof && !st.link_done[link] {
            st.link_done[link] = true;
            if !st.peer_closed[link] && !st.closing {
                let e = Error::PeerGone {
                    peer: inp.peer,
                    detail: "the connection closed without a goodbye (the process probably died)"
                        .into(),
                };
                let e = self.unconfirmed(&st, link, e);
                if !self.link_down(&mut st, link, &e) {
                    self.fail(&mut st, e);
                }
            }
        }
        if any || eof {
            self.notify();
        }
    }

    /// Acknowledge the frames received whole on `link` so far.
    pub(super) fn ack(&self, st: &mut State, link: usize) {
        let n = st.frames_in[link];
        st.acked_in[link] = n;
        if st.dead[link] || st.out[link].closed {
            return;
        }
        let h = Header::control(Kind::Ack, self.me, st.out[link].peer, 0, n);
        self.push(st, link, OutFrame::new(&h, Default::default(), None));
    }

    /// Act on one arrived frame: a link-local one at once; forward one for another node;
    /// deliver one for this node in its turn.
    fn dispatch(&self, st: &mut State, link: usize, h: Header, payload: Bytes) {
        if h.kind.link_local() {
            return self.link_frame(st, link, &h);
        }
        if h.dest != self.me {
            // Forward on its route; the body is shared, not copied (a trailer byte and all).
            if trace::on() {
                self.trace_forward(st, &h);
            }
            self.send_frame(st, h, payload.into(), None);
            self.note_forward();
            return;
        }
        let (h, payload) = match (h.trailer, payload.last()) {
            (false, _) => (h, payload),
            (true, Some(1)) => (
                Header {
                    trailer: false,
                    ..h
                },
                payload.slice(..payload.len() - 1),
            ),
            (true, Some(0)) => {
                // A copy cut short when a link died on its way: its sender resends it.
                tracing::debug!(src = h.src, seq = h.seq, "dropping a void frame");
                return;
            }
            (true, _) => {
                let peer = st.out[link].peer;
                let detail = "a frame's trailer is neither 0 nor 1".to_string();
                return self.fail(st, Error::Protocol { peer, detail });
            }
        };
        let slot = self.slot(h.src);
        match st.streams.arrive(slot, &h, &payload, link) {
            Turn::Now => {
                // A copy of it another link is landing goes no further (`claim.rs`).
                st.claims.acted(slot, h.seq, link);
                self.act(st, link, h, payload);
                while let Some((h, payload, link)) = st.streams.next_early(slot, h.kind) {
                    self.act(st, link, h, payload);
                }
            }
            Turn::Held => {}
            Turn::Duplicate => {
                tracing::debug!(src = h.src, seq = h.seq, "dropping a duplicate frame");
            }
        }
    }

    /// A `Data` frame (or a long `Eager` one) for this node whose payload its link read
    /// into the memory the receive named (`link.rs`, "Landing"): in its turn (the link
    /// asked first), unless a resent copy of it came first on another link.
    fn landed(&self, st: &mut State, link: usize, h: Header, trailer: u8) {
        let slot = self.slot(h.src);
        match trailer {
            1 => {}
            0 => {
                // Cut short on its way (void): its sender resends it, to land again.
                tracing::debug!(src = h.src, seq = h.seq, "dropping a void frame");
                st.claims.void(slot, h.seq, link);
                return;
            }
            _ => {
                let peer = st.out[link].peer;
                let detail = "a frame's trailer is neither 0 nor 1".to_string();
                return self.fail(st, Error::Protocol { peer, detail });
            }
        }
        let h = Header {
            trailer: false,
            ..h
        };
        match st.streams.arrive(slot, &h, &Bytes::new(), link) {
            Turn::Now => {
                st.claims.acted(slot, h.seq, link);
                if let Err(detail) = st.mailbox.landed(h.src, h.msg_id, h.frame_len as usize) {
                    let peer = st.out[link].peer;
                    return self.fail(st, Error::Protocol { peer, detail });
                }
                if h.kind == Kind::Eager {
                    self.eager_arrived(st, h.src);
                }
                while let Some((h, payload, link)) = st.streams.next_early(slot, h.kind) {
                    self.act(st, link, h, payload);
                }
            }
            Turn::Duplicate => {
                tracing::debug!(src = h.src, seq = h.seq, "dropping a duplicate frame");
            }
            Turn::Held => {
                // Its link asked whether it was its turn before reading it into the landing;
                // nothing of its stream can have been acted on since.
                let detail = format!(
                    "frame {} from node {} was read into a receive's memory out of turn",
                    h.seq, h.src
                );
                self.fail(
                    st,
                    Error::Protocol {
                        peer: self.me,
                        detail,
                    },
                );
            }
        }
    }

    /// A frame that crosses only this link.
    fn link_frame(&self, st: &mut State, link: usize, h: &Header) {
        let peer = st.out[link].peer;
        match h.kind {
            Kind::Close => st.peer_closed[link] = true,
            Kind::Ack => {
                if let Err(detail) = st.out[link].acked(h.total_len) {
                    self.fail(st, Error::Protocol { peer, detail });
                }
            }
            Kind::Link if h.tag < self.dim && h.total_len <= 1 && self.me != crate::HOST => {
                self.learn(st, h.src, h.tag, h.msg_id, h.total_len == 0, Some(link));
            }
            Kind::Left => self.heard_left(st, h.src, Some(link)),
            _ => {
                let detail = format!(
                    "a {:?} frame that is not one (dimension {}, state {})",
                    h.kind, h.tag, h.total_len
                );
                self.fail(st, Error::Protocol { peer, detail });
            }
        }
    }

    /// Act on a frame for this node whose turn has come.
    fn act(&self, st: &mut State, link: usize, h: Header, payload: Bytes) {
        match h.kind {
            // Bound as it began to arrive (`Mailbox::land_eager`), then read into a buffer
            // of the link's own (its receive took the landing back): payload of a bound
            // message.
            Kind::Eager if st.mailbox.expects(h.src, h.msg_id) => {
                if let Err(detail) = st.mailbox.data(h.src, h.msg_id, payload) {
                    let peer = st.out[link].peer;
                    return self.fail(st, Error::Protocol { peer, detail });
                }
                self.eager_arrived(st, h.src);
            }
            Kind::Eager => {
                st.mailbox
                    .arrive_id(h.src, h.tag, h.total_len, Body::Ready(payload), h.msg_id);
                self.eager_arrived(st, h.src);
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
                self.tell_strays(st);
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
            Kind::Close | Kind::Ack | Kind::Link | Kind::Left => {}
        }
    }

    /// An eager message from `src` is whole here (received, landed, or dropped with its
    /// discarded tag): credit back what the mailbox dropped, and count it
    /// ([`Engine::arrived`]).
    fn eager_arrived(&self, st: &mut State, src: NodeId) {
        self.settle_dropped(st);
        self.arrived(st, src);
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
            self.trace_forward(st, &h);
        }
        match self.hop(st, &mut h) {
            Some(out) => self.push(st, out, OutFrame::open(&h, first, link)),
            None => self.unreachable(st, h.dest),
        }
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

    /// Record a frame this node forwards (tracing is on): the message frames, not the
    /// protocol's own (clear-to-send, credits, finish notices).
    #[cold]
    fn trace_forward(&self, st: &mut State, h: &Header) {
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
        let link = self.next_link(st, h).unwrap_or(usize::MAX);
        trace::forward(h.src, h.dest, h.msg_id, kind, bytes, link);
    }
}
