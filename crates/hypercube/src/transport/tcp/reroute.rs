//! Routing around a dead link (`docs/reliability.md`, "Rerouting"). When the kernel gives up
//! on a cube link (`Error::LinkDead`) and this node is not cut off, the link is declared
//! dead here instead of failing the job:
//!
//! 1. its state is flooded to every node over the links still up (`Kind::Link`), and every
//!    node's routes go around it (`routes.rs`);
//! 2. every frame this node may not have delivered on it — written but not acknowledged
//!    (kept, `link_out.rs`), or still queued — goes again, on its new route, to its
//!    destination, which drops the copies it already has (`sequence.rs`);
//! 3. its input side is abandoned: the bytes of an unfinished frame are forgotten, and a
//!    frame this node was passing on from it is padded and ended void (`OutFrame::void`).
//!
//! A node that can no longer reach another stops the job naming the link and the node.
//! Also here: the error a failed link gives (`Engine::link_error`, and whether this node is
//! cut off), the acknowledgements of idle links, and the `Left` flood of finalize.

use std::sync::atomic::Ordering;

use hypercube_topology::{NodeId, Route};

use super::engine::{relock, Engine, State};
use super::link::{LinkIn, OutFrame};
use super::sockopt;
use crate::base::ids::HOST;
use crate::base::parts::Parts;
use crate::error::{Error, CUT_OFF_PHRASE};
use crate::wire::frame::{Header, Kind};

/// How often, at most, the progress thread looks for links gone quiet with frames not yet
/// acknowledged. Looking at every turn of its loop acknowledged nearly every message on
/// its own, one more frame and one more wake-up of the neighbor's progress thread per
/// message: the 16 KiB all-reduce on 8 ranks over loopback took 1.96× as long (380
/// against 194 µs, medians of five alternated runs). A frame waits at most this long (and
/// the poll timeout of an idle progress thread) before its sender may forget it.
pub(super) const IDLE_ACK: std::time::Duration = std::time::Duration::from_millis(50);

impl Engine {
    /// Link `link` failed with `err`: if it is a cube link the kernel gave up on and this
    /// node is not cut off, declare it dead and route around it (returns true); otherwise
    /// (false) the caller fails the job with `err`.
    pub(super) fn link_down(&self, st: &mut State, link: usize, err: &Error) -> bool {
        let Error::LinkDead {
            dim: Some(k),
            detail,
            ..
        } = err
        else {
            return false;
        };
        if self.me == HOST || link >= self.dim as usize || detail.contains(CUT_OFF_PHRASE) {
            return false;
        }
        if st.dead[link] {
            return true;
        }
        let peer = st.out[link].peer;
        tracing::warn!(
            "link dim {k} between node {} and node {} is dead ({detail}): routing around it",
            self.me.min(peer),
            self.me.max(peer),
        );
        st.dead[link] = true;
        st.link_done[link] = true;
        st.abandon[link] = true;
        let _ = st.out[link].stream.shutdown(std::net::Shutdown::Both);
        st.reports[link] += 1;
        let number = st.reports[link];
        self.learn(st, self.me, *k, number, true, None);
        let frames = st.out[link].unacknowledged();
        let resent = frames.iter().filter(|f| !f.head.kind.link_local()).count();
        tracing::info!("resending {resent} frames that link {k} may not have delivered");
        for f in frames {
            if f.head.kind.link_local() {
                continue;
            }
            // The rest of a listed route was the dead neighbor's to take: from here the
            // frame goes by the routes around the links down.
            let mut h = Header {
                route: Route::ECUBE,
                ..f.head
            };
            match self.hop(st, &mut h) {
                Some(out) => self.push(st, out, f.resend(&h)),
                None => self.unreachable(st, h.dest),
            }
        }
        self.abandoning.store(true, Ordering::SeqCst);
        self.wake_progress();
        self.relink_later(peer);
        true
    }

    /// Node `node`'s report number `number` about its link in dimension `k` (down or up),
    /// made here or come on link `from`: if it is news, take it into the routes and pass it
    /// on over every other link up; then stop the job if some node can no longer be
    /// reached.
    pub(super) fn learn(
        &self,
        st: &mut State,
        node: NodeId,
        k: u32,
        number: u64,
        down: bool,
        from: Option<usize>,
    ) {
        let was_down = st.routes.is_down(node, k);
        if node >= self.num_nodes || !st.routes.apply(node, k, number, down) {
            return;
        }
        let peer = node ^ (1 << k);
        if was_down && !st.routes.is_down(node, k) && (node == self.me || peer == self.me) {
            // Both ends said it is up again (`relink.rs`): it is back in the routes.
            tracing::warn!(
                "link dim {k} between node {} and node {} is up again: routing over it",
                node.min(peer),
                node.max(peer)
            );
        }
        self.detour
            .store(!st.routes.all_up(), std::sync::atomic::Ordering::Relaxed);
        for j in 0..(self.dim as usize).min(st.out.len()) {
            if Some(j) == from || st.dead[j] || st.out[j].closed {
                continue;
            }
            let mut h = Header::control(Kind::Link, node, st.out[j].peer, number, u64::from(!down));
            h.tag = k;
            self.push(st, j, OutFrame::new(&h, Parts::default(), None));
        }
        if let Some(&lost) = st.routes.unreachable(self.me, self.dim).first() {
            return self.unreachable(st, lost);
        }
        // The other end of one of this node's links says it is down: this end takes it
        // down too, at once, rather than after its own link timeout (an idle end would
        // wait for its keepalive probes to go unanswered).
        let link = k as usize;
        if down && node == self.me ^ (1 << k) && link < st.dead.len() && !st.dead[link] {
            let peer = st.out[link].peer;
            let err = Error::LinkDead {
                node: self.me,
                peer,
                dim: Some(k),
                detail: format!("node {node} said so"),
            };
            self.link_down(st, link, &err);
        }
    }

    /// Node `dest` (the host: node 0) cannot be reached over the links up: stop the job,
    /// naming it and a dead link of its.
    pub(super) fn unreachable(&self, st: &mut State, dest: NodeId) {
        let target = if dest == HOST { 0 } else { dest };
        let down = st.routes.down_edges();
        let (a, k) = down
            .iter()
            .copied()
            .find(|&(a, k)| a == target || a ^ (1 << k) == target)
            .or_else(|| down.first().copied())
            .unwrap_or((self.me, 0));
        let links: Vec<String> = down
            .iter()
            .map(|&(a, k)| format!("{a}-{}", a ^ (1 << k)))
            .collect();
        let (node, peer) = if a == target {
            (a, a ^ (1 << k))
        } else {
            (a ^ (1 << k), a)
        };
        let err = Error::LinkDead {
            node,
            peer,
            dim: Some(k),
            detail: format!(
                "node {target} cannot be reached from node {}: the links down ({}) leave no \
                 path to it",
                self.me,
                links.join(", ")
            ),
        };
        self.fail(st, err);
    }

    /// For a thread that holds no lock: abandon the input side of the links declared dead
    /// since the last call (forget an unfinished frame; end void a frame passed on from it).
    pub(super) fn abandon_inputs(&self) {
        if !self.abandoning.swap(false, Ordering::SeqCst) {
            return;
        }
        for k in 0..self.inputs.len() {
            if !self.lock().abandon[k] {
                continue;
            }
            let mut inp = relock(self.inputs[k].lock());
            let mut st = self.lock();
            if st.abandon[k] {
                self.abandon_input(&mut inp, &mut st, k);
            }
        }
    }

    /// Abandon the input side of dead link `k` (its input lock and the state lock held).
    pub(super) fn abandon_input(&self, inp: &mut LinkIn, st: &mut State, k: usize) {
        let owed = inp.abandon();
        st.abandon[k] = false;
        if owed == 0 {
            return;
        }
        let open = st
            .out
            .iter_mut()
            .enumerate()
            .find_map(|(j, o)| o.open_frame(k).map(|f| (j, f)));
        if let Some((j, frame)) = open {
            tracing::debug!(link = k, owed, "ending a frame in transit void");
            frame.void(owed);
            self.flush(st, j);
        }
    }

    /// For the progress thread, at most every [`IDLE_ACK`]: acknowledge the frames of
    /// every link on which some came since the last acknowledgement but none since the
    /// last look. (Acknowledgements only free the frames a sender keeps for a resend; while
    /// frames flow, [`super::dispatch`] acknowledges every 128 frames or 256 KiB.)
    pub(super) fn ack_idle(&self) {
        use std::sync::atomic::Ordering::Relaxed;
        let now = self.epoch.elapsed().as_micros() as u64;
        if now.saturating_sub(self.ack_looked_us.load(Relaxed)) < IDLE_ACK.as_micros() as u64 {
            return;
        }
        let Ok(mut st) = self.state.try_lock() else {
            return;
        };
        self.ack_looked_us.store(now, Relaxed);
        for k in 0..st.out.len() {
            let n = st.frames_in[k];
            if n > st.acked_in[k] && n == st.looked_in[k] {
                self.ack(&mut st, k);
            }
            st.looked_in[k] = n;
        }
    }

    /// Node `node` has passed the finalize barrier (heard on link `from`, or this node
    /// itself): note it, and pass it on over every other link up, the host's too.
    pub(super) fn heard_left(&self, st: &mut State, node: NodeId, from: Option<usize>) {
        let slot = self.slot(node);
        if st.left[slot] {
            return;
        }
        st.left[slot] = true;
        for j in 0..st.out.len() {
            if Some(j) == from || st.dead[j] || st.out[j].closed {
                continue;
            }
            let h = Header::control(Kind::Left, node, st.out[j].peer, 0, 0);
            self.push(st, j, OutFrame::new(&h, Parts::default(), None));
        }
        self.notify();
    }

    /// Has every node (and the host) passed the finalize barrier, as far as this one heard?
    pub(super) fn all_left(&self, st: &State) -> bool {
        self.others().all(|n| st.left[self.slot(n)])
    }

    /// The error for link `link` (to `peer`) failing with `e` while `doing` it ("reading",
    /// "writing to"): a link the kernel gave up on — nothing acknowledged within the link
    /// timeout (`sockopt::set_liveness`), or no route left to the neighbor (its interface
    /// went down) — is [`Error::LinkDead`]; anything else means the peer went away
    /// ([`Error::PeerGone`]: a reset, a close).
    ///
    /// The kernel reports such an abort once, to whichever of the link's reader and writer
    /// comes first; a write after that fails with `EPIPE`, as it would after the peer's
    /// close. So a broken pipe on a link already found dead, or that has heard no
    /// acknowledgement for two thirds of the link timeout (a live peer's kernel
    /// acknowledges at least every second, even when its process is gone), is the dead
    /// link too. Seen in the fault suite's pulled link on the emulated cube: the reader
    /// took "network unreachable", the writer then got a broken pipe, and the job stopped
    /// for a peer that was alive.
    pub(super) fn link_error(
        &self,
        st: &State,
        link: usize,
        peer: NodeId,
        doing: &str,
        e: &std::io::Error,
    ) -> Error {
        let errno = e.raw_os_error().unwrap_or(0);
        let dead = [
            libc::ETIMEDOUT,
            libc::EHOSTUNREACH,
            libc::ENETUNREACH,
            libc::ENETDOWN,
        ];
        let silent_pipe = errno == libc::EPIPE
            && (st.dead.get(link).copied().unwrap_or(false) || self.silent(st, link));
        if !dead.contains(&errno) && !silent_pipe {
            return Error::PeerGone {
                peer,
                detail: format!("{doing} the link failed: {e}"),
            };
        }
        let silent = if self.tuning.link_timeout.is_zero() {
            "the kernel's retransmission limit".to_string()
        } else {
            format!("{:.1} s", self.tuning.link_timeout.as_secs_f64())
        };
        let host_link = self.me == HOST || peer == HOST;
        let mut detail = format!(
            "node {me} had no acknowledgement from node {peer} for {silent} ({doing}: {e})",
            me = self.me,
            doing = doing.trim_end_matches(" to"),
        );
        if !host_link && self.cut_off(st, link) {
            let others: Vec<String> = (0..self.dim as usize)
                .filter(|&k| k != link)
                .map(|k| k.to_string())
                .collect();
            detail += &format!(
                "; node {}{}{} are silent too)",
                self.me,
                crate::error::CUT_OFF_PHRASE,
                others.join(", ")
            );
        }
        Error::LinkDead {
            node: self.me,
            peer,
            dim: (!host_link).then_some(link as u32),
            detail,
        }
    }

    /// Whether this node is cut off from the cube: link `dead` is, and every other cube
    /// link is dead too or has received no acknowledgement for two thirds of the link
    /// timeout (a live link hears one at least every second, keepalive probes included).
    /// False on a 0-cube and without a link timeout.
    pub(super) fn cut_off(&self, st: &State, dead: usize) -> bool {
        let cube_links = (self.dim as usize).min(st.out.len());
        cube_links > 1
            && !(self.tuning.link_timeout * 2 / 3).is_zero()
            && (0..cube_links)
                .filter(|&k| k != dead)
                .all(|k| st.link_done[k] || self.silent(st, k))
    }

    /// Has link `k` received no acknowledgement for two thirds of the link timeout (a live
    /// link hears one at least every second, keepalive probes included)? False without a
    /// link timeout.
    fn silent(&self, st: &State, k: usize) -> bool {
        let quiet = self.tuning.link_timeout * 2 / 3;
        !quiet.is_zero()
            && st
                .out
                .get(k)
                .is_some_and(|o| sockopt::since_last_ack(&o.stream).is_some_and(|t| t >= quiet))
    }
}
