//! A dead link that comes back (`docs/reliability.md`, "Links coming back"). The node whose
//! bit k is 0 — the one that dialed link k at start-up — dials it again every second while
//! it is dead here, with the same handshake; the other end's link acceptor, which stays up
//! for the whole job, takes that neighbor again once the link is dead there too (the
//! [`Gate`]). Both ends then put the new connection in the old one's place — socket, reader,
//! frame counters — and report the link up (a newer report number, flooded like the down
//! one): once both ends' reports say up, the routes take it back. Nothing needs resending:
//! what the dead link may not have delivered went again when it died, and the numbers per
//! pair make a frame delivered twice harmless (`sequence.rs`).
//!
//! One thread per node (`hc-relink-<rank>`) does the dialing and the installing, so that a
//! dial into a link that is still down (up to a second for the connection, two for the
//! handshake) never holds the engine's locks or its progress thread.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use hypercube_topology::NodeId;

use super::engine::{relock, Engine, State};
use super::link::OutFrame;
use super::TcpTransport;
use crate::base::parts::Parts;
use crate::error::Error;
use crate::wire::frame::{Header, Kind};

/// How often a dead link's dialing end tries to dial it again, at first.
pub(crate) const REDIAL_EVERY: Duration = Duration::from_secs(1);

/// Dials a second apart while a link has been dead for about this many tries...
const REDIAL_FAST_TRIES: u32 = 10;

/// ... then the period doubles from one failed dial to the next, up to this.
pub(crate) const REDIAL_AT_MOST: Duration = Duration::from_secs(8);

/// The time from the start of one dial to the start of the next after `tries` failed
/// dials: [`REDIAL_EVERY`] for the first [`REDIAL_FAST_TRIES`] (a cable put back within
/// ten seconds is used again within a second), then doubling up to [`REDIAL_AT_MOST`] (a
/// link that stays down costs a failed `connect` every 8 s, not every second, for the
/// rest of the job).
pub(crate) fn redial_after(tries: u32) -> Duration {
    let extra = tries.saturating_sub(REDIAL_FAST_TRIES).min(8);
    REDIAL_EVERY.saturating_mul(1 << extra).min(REDIAL_AT_MOST)
}

/// Which neighbors the link acceptor takes: during start-up each expected neighbor once;
/// afterwards a neighbor again only when its link is dead here (the engine opens the gate
/// for it), and nobody once the job is closing or failing.
#[derive(Default)]
pub(crate) struct Gate {
    /// The neighbors whose link is up (or being handed over): a second connection claiming
    /// one of them is refused.
    up: Mutex<Vec<NodeId>>,
    /// No connection is taken any more.
    shut: AtomicBool,
}

impl Gate {
    /// Would a connection from `peer` be taken now?
    pub fn admits(&self, peer: NodeId) -> bool {
        !self.shut.load(Ordering::SeqCst) && !relock(self.up.lock()).contains(&peer)
    }

    /// Take `peer`'s connection (its handshake passed): false if it may not come now.
    pub fn take(&self, peer: NodeId) -> bool {
        let mut up = relock(self.up.lock());
        if self.shut.load(Ordering::SeqCst) || up.contains(&peer) {
            return false;
        }
        up.push(peer);
        true
    }

    /// `peer`'s link is dead here: it may dial in again.
    pub fn reopen(&self, peer: NodeId) {
        relock(self.up.lock()).retain(|&p| p != peer);
    }

    /// Take nobody any more (the job is closing or failing).
    pub fn shut(&self) {
        self.shut.store(true, Ordering::SeqCst);
    }
}

/// What the relink thread is told.
pub(crate) enum Relink {
    /// The link acceptor took a connection from this neighbor (its handshake passed).
    Accepted(NodeId, TcpStream),
    /// This node's link to the neighbor died, and this node dials it: dial it again.
    Dead(NodeId),
}

/// Dials a neighbor and passes the handshake, bounded (a second to connect, two for the
/// handshake); the error says why not.
pub(crate) type Dialer = Box<dyn Fn(NodeId) -> Result<TcpStream, String> + Send>;

/// What the engine keeps to bring links back.
pub(super) struct Relinking {
    gate: Arc<Gate>,
    tell: Sender<Relink>,
}

impl TcpTransport {
    /// Bring dead links back from now on: `gate` is the link acceptor's, which sends what
    /// it takes on `tell`; `hear` is the other end of that channel, `dial` dials a neighbor.
    pub(crate) fn relink_with(
        &self,
        gate: Arc<Gate>,
        tell: Sender<Relink>,
        hear: Receiver<Relink>,
        dial: Dialer,
    ) -> crate::error::Result<()> {
        let e = &self.engine;
        let weak = Arc::downgrade(e);
        std::thread::Builder::new()
            .name(format!("hc-relink-{}", e.me))
            .spawn(move || run(&weak, &hear, &dial))
            .map_err(|err| Error::io("starting the relink thread", err))?;
        let _ = e.relinking.set(Relinking { gate, tell });
        Ok(())
    }
}

/// The relink thread: install what the acceptor takes; dial the dead links this node dials,
/// every [`REDIAL_EVERY`] at first and less often later ([`redial_after`]), until they are
/// back or the job ends.
fn run(engine: &Weak<Engine>, hear: &Receiver<Relink>, dial: &Dialer) {
    // The neighbors to dial, and when next.
    let mut due: Vec<(NodeId, Instant, u32)> = Vec::new();
    loop {
        let next = due.iter().map(|d| d.1).min();
        let heard = match next {
            None => hear.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(t) => hear.recv_timeout(t.saturating_duration_since(Instant::now())),
        };
        match heard {
            Ok(Relink::Accepted(peer, s)) => match engine.upgrade() {
                Some(e) => e.install(peer, s, "it dialed in again"),
                None => return,
            },
            Ok(Relink::Dead(peer)) => {
                if !due.iter().any(|d| d.0 == peer) {
                    due.push((peer, Instant::now() + REDIAL_EVERY, 0));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        let mut i = 0;
        while i < due.len() {
            let (peer, when, tries) = due[i];
            if when > Instant::now() {
                i += 1;
                continue;
            }
            let Some(e) = engine.upgrade() else { return };
            if !e.redial_wanted(peer) {
                due.swap_remove(i);
                continue;
            }
            drop(e);
            // From the start of one dial to the next (one that gets no answer takes the
            // second itself).
            let started = Instant::now();
            match dial(peer) {
                Ok(s) => {
                    due.swap_remove(i);
                    let Some(e) = engine.upgrade() else { return };
                    let how = format!("dialed again, attempt {}", tries + 1);
                    e.install(peer, s, &how);
                }
                Err(why) => {
                    tracing::debug!("dialing node {peer} again: {why}");
                    due[i] = (peer, started + redial_after(tries + 1), tries + 1);
                    i += 1;
                }
            }
        }
    }
}

impl Engine {
    /// The link to `peer` died here (`reroute.rs`): the end that dials it dials it again; the
    /// other lets the acceptor take the neighbor again.
    pub(super) fn relink_later(&self, peer: NodeId) {
        let Some(r) = self.relinking.get() else {
            return;
        };
        let k = (self.me ^ peer).trailing_zeros();
        if self.me & (1 << k) == 0 {
            let _ = r.tell.send(Relink::Dead(peer));
        } else {
            r.gate.reopen(peer);
        }
    }

    /// Take no link back any more (the job is closing or failing).
    pub(super) fn relink_no_more(&self) {
        if let Some(r) = self.relinking.get() {
            r.gate.shut();
        }
    }

    /// Link `link` failed with `e`. If it came back and its other end has not said so yet
    /// (the edge is down by that end's latest report), a reset or an end of file means the
    /// new connection did not take — its dialer gave up during the handshake, or the link
    /// dropped again — not that the neighbor's process died: the link is dead again
    /// ([`Error::LinkDead`]), to be dialed again. Any other error is returned as it is.
    pub(super) fn unconfirmed(&self, st: &State, link: usize, e: Error) -> Error {
        let k = link as u32;
        let fresh = self.relinking.get().is_some()
            && k < self.dim
            && self.me != crate::base::ids::HOST
            && !st.dead[link]
            && st.routes.is_down(self.me, k);
        match e {
            Error::PeerGone { peer, detail } if fresh => Error::LinkDead {
                node: self.me,
                peer,
                dim: Some(k),
                detail: format!(
                    "the connection that brought it back failed before node {peer} said it is \
                     up ({detail})"
                ),
            },
            e => e,
        }
    }

    /// Is the link to `peer` still dead, and worth dialing (the job goes on)?
    fn redial_wanted(&self, peer: NodeId) -> bool {
        let k = (self.me ^ peer).trailing_zeros() as usize;
        let st = self.lock();
        !self.stop.load(Ordering::SeqCst)
            && st.failure.is_none()
            && !st.closing
            && st.dead.get(k).copied().unwrap_or(false)
    }

    /// A new connection to `peer` (`how` it came): put it in place of the dead link's —
    /// socket, reader, the link's frame counters — and report the link up.
    fn install(&self, peer: NodeId, s: TcpStream, how: &str) {
        let diff = self.me ^ peer;
        if !diff.is_power_of_two() || peer >= self.num_nodes {
            return;
        }
        let k = diff.trailing_zeros() as usize;
        if let Err(e) = self.configure(&s, peer) {
            return tracing::warn!("the link to node {peer} came back but {e}; left dead");
        }
        let r = match s.try_clone() {
            Ok(r) => r,
            Err(e) => return tracing::warn!("the link to node {peer} came back but {e}"),
        };
        let mut inp = relock(self.inputs[k].lock());
        let mut st = self.lock();
        if !st.dead[k] || st.failure.is_some() {
            // Not ours to take (the gate admits only a dead link's neighbor; a failing job
            // ends anyway): closing it makes its other end find it dead again.
            return tracing::debug!("not taking back the link to node {peer}");
        }
        if st.abandon[k] {
            self.abandon_input(&mut inp, &mut st, k);
        }
        debug_assert!(st.out[k].queue.is_empty() && st.out[k].kept.is_empty());
        inp.reset(r);
        st.out[k].reset(s);
        reset_counters(&mut st, k);
        let dim = k as u32;
        tracing::warn!(
            "link dim {dim} to node {peer} is connected again ({how}): routing over it once \
             node {peer} says so too"
        );
        if st.closing {
            // This end has said goodbye on its other links already: the new one gets its
            // goodbye at once (the other end waits for one on every link it has up).
            let h = Header::control(Kind::Close, self.me, peer, 0, 0);
            self.push(&mut st, k, OutFrame::new(&h, Parts::default(), None));
            st.out[k].closed = true;
        } else {
            st.reports[k] += 1;
            let number = st.reports[k];
            self.learn(&mut st, self.me, dim, number, false, None);
        }
        self.notify();
        drop(st);
        drop(inp);
        self.wake_progress();
    }
}

/// The per-link state a new connection starts from.
fn reset_counters(st: &mut State, k: usize) {
    st.dead[k] = false;
    st.link_done[k] = false;
    st.abandon[k] = false;
    st.peer_closed[k] = false;
    st.frames_in[k] = 0;
    st.acked_in[k] = 0;
    st.acked_bytes[k] = 0;
    st.looked_in[k] = 0;
}

#[cfg(test)]
mod tests {
    use super::{redial_after, Gate};
    use std::time::Duration;

    #[test]
    fn redialing_is_every_second_for_ten_tries_then_backs_off_to_eight_seconds() {
        let s = |t| redial_after(t).as_secs();
        assert_eq!((0..=10).map(s).collect::<Vec<_>>(), vec![1; 11]);
        assert_eq!((11..=14).map(s).collect::<Vec<_>>(), vec![2, 4, 8, 8]);
        assert_eq!(redial_after(u32::MAX), Duration::from_secs(8));
        // A link down for a minute is dialed 18 times, not 60.
        let mut t = Duration::ZERO;
        let tries = (0..).take_while(|&n| {
            t += redial_after(n);
            t <= Duration::from_secs(60)
        });
        assert_eq!(tries.count(), 18);
    }

    #[test]
    fn the_gate_takes_a_neighbor_once_again_after_its_link_died_and_nobody_once_shut() {
        let g = Gate::default();
        assert!(g.admits(3) && g.take(3));
        assert!(!g.admits(3) && !g.take(3), "a second link from node 3");
        assert!(g.admits(1), "another neighbor still comes");
        g.reopen(3);
        assert!(
            g.admits(3) && g.take(3),
            "node 3 dials in again after its link died"
        );
        g.reopen(3);
        g.shut();
        assert!(
            !g.admits(3) && !g.take(3) && !g.admits(1),
            "the job is closing"
        );
    }
}
