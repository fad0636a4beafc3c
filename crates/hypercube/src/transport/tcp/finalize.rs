//! Leaving the job (`Transport::finalize`): a `Fin` to every node (so a receive that waits
//! for this one fails instead of hanging), a barrier by recursive doubling over the links
//! (the host arrives at node 0 first and is released after; afterwards no node needs
//! another to forward anything), a flush, `Close` on every link and the neighbors' `Close`
//! awaited; then the report of messages never received, every link's frame counts when
//! asked for (`HYPERCUBE_LINK_STATS=1`), and the progress thread stopped.

use std::sync::atomic::Ordering;
use std::time::Duration;

use hypercube_topology::NodeId;

use super::engine::relock;
use super::link::OutFrame;
use super::link_stats::FrameCounts;
use super::TcpTransport;
use crate::base::ids::HOST;
use crate::base::message::{Select, MAX_USER_TYPE};
use crate::base::parts::Parts;
use crate::base::tags;
use crate::error::Result;
use crate::trace;
use crate::transport::api::Transport;
use crate::wire::frame::{Header, Kind};

impl TcpTransport {
    /// Finalize once (later calls return at once).
    pub(super) fn leave(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let e = &*self.engine;
        let call = trace::Call::begin("finalize", e.dim, 0);
        let result = (|| -> Result<()> {
            // 0. Tell every node we are done: a receive waiting for us fails instead of hanging.
            {
                let mut st = e.lock();
                let others: Vec<NodeId> = e.others().collect();
                for n in others {
                    // It carries how many messages went to `n`: those on other routes may
                    // arrive after it, and `n` waits for them before it calls us finished.
                    let sent = st.sent_to[e.slot(n)];
                    let h = Header::control(Kind::Fin, e.me, n, 0, sent);
                    e.originate(&mut st, h, Parts::default(), None);
                }
            }
            // 1. Barrier by recursive doubling over the links: afterwards no node needs
            //    another to forward anything a program will receive.
            // Each exchange posts its receive before waiting for its send, so that a
            // barrier message that had to go by rendezvous still completes.
            let exchange = |peer: NodeId, send: bool, receive: bool| -> Result<()> {
                let t = if send {
                    Some(self.isend(peer, tags::FINALIZE, Parts::default())?)
                } else {
                    None
                };
                if receive {
                    let r = self.post_recv(Select::internal(Some(peer), tags::FINALIZE))?;
                    self.wait_recv(r, None)?;
                }
                t.map_or(Ok(()), |t| self.wait_send(t))
            };
            if e.me == HOST {
                // The host arrives at node 0 and is released by it.
                exchange(0, true, true)?;
            } else {
                if e.me == 0 && e.has_host {
                    exchange(HOST, false, true)?;
                }
                for k in 0..e.dim {
                    exchange(e.me ^ (1 << k), true, true)?;
                }
                if e.me == 0 && e.has_host {
                    exchange(HOST, true, false)?;
                }
            }
            // 2. Wait until every node has passed the barrier (flooded over the links, so
            //    that none depends on another's forwarding): a barrier message routed
            //    around a dead link is forwarded by nodes that may have passed it already.
            {
                let mut st = e.lock();
                e.heard_left(&mut st, e.me, None);
            }
            e.wait_for(
                "every node to pass the finalize barrier",
                Some(Duration::from_secs(30)),
                |e, st| e.all_left(st).then_some(()),
            )?;
            // 3. Flush, say goodbye on every link, and wait for the neighbors' goodbyes.
            e.wait_for("output to drain", Some(Duration::from_secs(30)), |_, st| {
                st.out.iter().all(|o| o.queue.is_empty()).then_some(())
            })?;
            {
                let mut st = e.lock();
                st.closing = true;
                e.relink_no_more();
                for k in 0..st.out.len() {
                    if st.dead[k] {
                        continue;
                    }
                    let peer = st.out[k].peer;
                    let h = Header::control(Kind::Close, e.me, peer, 0, 0);
                    e.push(&mut st, k, OutFrame::new(&h, Parts::default(), None));
                    st.out[k].closed = true;
                }
            }
            e.wait_for(
                "the neighbors' goodbyes",
                Some(Duration::from_secs(30)),
                |_, st| {
                    let closed = (0..st.out.len()).all(|k| st.peer_closed[k] || st.dead[k]);
                    (closed && st.out.iter().all(|o| o.queue.is_empty())).then_some(())
                },
            )?;
            Ok(())
        })();
        {
            let mut st = e.lock();
            st.closing = true;
            e.relink_no_more();
            let left = st.mailbox.unreceived();
            let user: Vec<_> = left
                .iter()
                .filter(|s| s.msg_type.0 <= MAX_USER_TYPE)
                .collect();
            if !user.is_empty() {
                tracing::warn!(
                    count = user.len(),
                    "messages arrived at node {} that the program never received: {:?}",
                    e.me,
                    user.iter()
                        .take(8)
                        .map(|s| (s.source, s.msg_type.0, s.len))
                        .collect::<Vec<_>>()
                );
            }
        }
        if e.link_stats {
            self.print_link_stats();
        }
        drop(call);
        trace::finish();
        self.done_flag.store(true, Ordering::SeqCst);
        self.stop_progress();
        for o in &e.lock().out {
            let _ = o.stream.shutdown(std::net::Shutdown::Both);
        }
        if result.is_ok() {
            crate::job::finished();
        }
        result
    }
}

impl TcpTransport {
    /// Every link's counts, written and read, as (peer, written, read) (`link_stats.rs`).
    pub(crate) fn link_counts(&self) -> Vec<(NodeId, FrameCounts, FrameCounts)> {
        let e = &*self.engine;
        // The engine's lock and a link's input lock are taken one after the other, never
        // together.
        let outs: Vec<(NodeId, FrameCounts)> = e
            .lock()
            .out
            .iter()
            .map(|o| (o.peer, o.stats.clone()))
            .collect();
        outs.into_iter()
            .zip(&e.inputs)
            .map(|((peer, out), input)| (peer, out, relock(input.lock()).stats.clone()))
            .collect()
    }

    /// Print [`TcpTransport::link_counts`] to standard error, a line per link.
    fn print_link_stats(&self) {
        for (peer, out, input) in self.link_counts() {
            eprintln!(
                "{}",
                super::link_stats::line(self.engine.me, peer, &out, &input)
            );
        }
    }
}
