//! The progress thread: blocks in `poll(2)` on every link and a wake-up pipe, reads what
//! arrives (delivering or forwarding it) and writes what the sockets would not take at once.
//! It is what keeps forwarding alive while the node program computes or waits elsewhere.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::engine::{Engine, State};

/// How long the progress thread stays aside, at most, on a node that forwarded within the
/// last tick: frames for other nodes then wait at most this long while the program
/// computes between two waits (instead of a whole tick), at the price of one look every
/// `FORWARD_GAP` while it keeps waiting.
pub(super) const FORWARD_GAP: Duration = Duration::from_millis(3);

pub(super) fn run(e: &Engine) {
    let mut woken = false;
    while !e.stop.load(Ordering::SeqCst) {
        e.abandon_inputs();
        e.ack_idle();
        crate::base::memory::give_back_when_due();
        // A caller is spinning on (or parked in poll on) the sockets, or left a wait less
        // than a tick ago and will likely wait again: stay out of its way, but look again
        // after (the rest of) a tick — it may go back to computing without telling us (it
        // does tell us, by the wake-up pipe, if output is queued on a full socket). On a
        // node that forwarded lately the look comes after `FORWARD_GAP` instead, so
        // forwarding is delayed by at most that.
        let aside = if e.forwarded_lately() {
            e.tuning.progress_tick.min(FORWARD_GAP)
        } else {
            e.tuning.progress_tick
        };
        let aside_us = aside.as_micros() as u64;
        // Announced before `parked` is read: the last parked caller to leave its wait reads
        // this after its own decrement (`wait.rs`, `HandBack`), so either this thread sees
        // it gone, or it sees this thread asleep and wakes it.
        e.progress_asleep.store(true, Ordering::SeqCst);
        let spinning = e.spinners.load(Ordering::SeqCst) > 0;
        let parked = e.parked.load(Ordering::SeqCst) > 0;
        // Only parked callers: they drive the sockets from their `poll` and wake on what
        // comes, so this thread sleeps until the last of them leaves its wait (and wakes
        // it) instead of looking every tick — an idle rank (waiting in a barrier, or in
        // finalize for a long benchmark of two others) woke 120 times a second, and on
        // 16 ranks over 2 cores those wake-ups take the core from the ranks at work.
        let asleep = parked && !spinning;
        if !asleep {
            e.progress_asleep.store(false, Ordering::SeqCst);
        }
        let since_wait = match e.last_wait_end_us.load(Ordering::Relaxed) {
            0 => u64::MAX,
            t => (e.epoch.elapsed().as_micros() as u64 + 1).saturating_sub(t),
        };
        let recent = !woken && since_wait < aside_us;
        // A rank reported as spinning on iprobe/test is looked at again within the gap
        // that ends its streak, so that the report is taken back once it computes.
        let idle = if e.check_polls() {
            super::blocked::POLL_GAP
        } else {
            Duration::from_secs(1)
        };
        let (fds, timeout) = if asleep {
            (Vec::new(), idle)
        } else if spinning {
            (Vec::new(), aside)
        } else if recent {
            (Vec::new(), Duration::from_micros(aside_us - since_wait))
        } else {
            (e.poll_set(&e.lock()), idle)
        };
        woken = e
            .poll_and_service(&e.wake_rx, fds, timeout, true, None)
            .woken;
        if asleep {
            e.progress_asleep.store(false, Ordering::SeqCst);
            // Woken from this sleep: look again (the caller that left asked for no more:
            // if it left output queued, it said so with `last_wait_end_us` = 0).
            woken = false;
        }
    }
}

/// What one [`Engine::poll_and_service`] saw.
pub(super) struct Polled {
    /// The wake-up pipe was written to.
    pub(super) woken: bool,
    /// Anything at all was ready (the pipe, a link's input or room for its output);
    /// false: the timeout passed.
    pub(super) any: bool,
}

impl Engine {
    /// The links to poll, with POLLOUT where output is queued.
    pub(super) fn poll_set(&self, st: &State) -> Vec<(usize, libc::pollfd)> {
        st.out
            .iter()
            .enumerate()
            .filter(|(k, _)| !st.link_done[*k])
            .map(|(k, o)| {
                let mut ev = libc::POLLIN;
                if o.has_writable() {
                    ev |= libc::POLLOUT;
                }
                (
                    k,
                    libc::pollfd {
                        fd: o.stream.as_raw_fd(),
                        events: ev,
                        revents: 0,
                    },
                )
            })
            .collect()
    }

    /// Block in poll(2) on `wake` and the given links (at most `timeout`), then read what
    /// is readable and write what is writable; returns whether `wake` was written to and
    /// whether anything was ready.
    /// `blocking_locks`: wait for a link's input lock held by another reader (the progress
    /// thread) rather than skip it. `parked`: the count of parked callers this caller was
    /// counted in ([`Engine::parked`], incremented under the state lock before the park),
    /// decremented as soon as `poll` returns — before the caller lands what woke it, which
    /// would otherwise [`Engine::notify`] the caller itself.
    pub(super) fn poll_and_service(
        &self,
        wake: &UnixStream,
        links: Vec<(usize, libc::pollfd)>,
        timeout: Duration,
        blocking_locks: bool,
        parked: Option<&std::sync::atomic::AtomicUsize>,
    ) -> Polled {
        let mut fds: Vec<libc::pollfd> = Vec::with_capacity(links.len() + 1);
        fds.push(libc::pollfd {
            fd: wake.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        fds.extend(links.iter().map(|(_, p)| *p));
        let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd structs.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if let Some(parked) = parked {
            parked.fetch_sub(1, Ordering::SeqCst);
        }
        if r < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                tracing::error!("poll failed: {err}");
                std::thread::sleep(Duration::from_millis(10));
            }
            return Polled {
                woken: false,
                any: true,
            };
        }
        let woken = fds[0].revents != 0;
        if woken {
            let mut drain = [0u8; 64];
            while matches!((&*wake).read(&mut drain), Ok(n) if n > 0) {}
        }
        for (i, (k, _)) in links.iter().enumerate() {
            let rev = fds[i + 1].revents;
            if rev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                let guard = if blocking_locks {
                    Some(crate::transport::api::relock(self.inputs[*k].lock()))
                } else {
                    self.inputs[*k].try_lock().ok()
                };
                if let Some(mut inp) = guard {
                    self.service_input(&mut inp, *k);
                }
            }
            if rev & libc::POLLOUT != 0 {
                let mut st = self.lock();
                self.flush(&mut st, *k);
                self.notify();
            }
        }
        Polled { woken, any: r > 0 }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::time::Duration;

    use hypercube_topology::NodeId;

    use super::super::test_job::tcp_job_tuned;
    use super::super::{TcpTransport, Tuning};
    use crate::base::message::{MsgType, Select, TypeSel};
    use crate::node::Node;

    /// A caller parked in `poll` that lands the frame it waits for does not notify itself:
    /// nothing is left in its waiter pipe (before the fix, every such wake-up wrote a byte
    /// there, and the next park woke at once for it).
    #[test]
    fn a_parked_caller_does_not_notify_itself() {
        fn program(
            me: NodeId,
            node: &Node,
            t: &TcpTransport,
        ) -> Result<(), Box<dyn std::error::Error>> {
            for round in 0..5u8 {
                if me == 0 {
                    // Long enough for node 1 to stop spinning and park.
                    std::thread::sleep(Duration::from_millis(20));
                    node.send(1, MsgType(1), vec![round])?;
                } else {
                    let m = node.recv(Select::from_node(0, TypeSel::Is(1)))?;
                    if m.data()[..] != [round] {
                        return Err(format!("round {round}: got {:?}", m.data()).into());
                    }
                    t.engine.waiter_rx.set_nonblocking(true)?;
                    let mut b = [0u8; 8];
                    match (&t.engine.waiter_rx).read(&mut b) {
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        other => {
                            return Err(
                                format!("round {round}: the waiter pipe held {other:?}").into()
                            )
                        }
                    }
                }
            }
            Ok(())
        }
        let tuning = Tuning {
            spin: Duration::from_micros(100),
            ..Tuning::default()
        };
        tcp_job_tuned(1, tuning, program);
    }

    /// The progress thread of a node whose caller is parked sleeps until that caller
    /// leaves its wait, and is then woken (`HandBack`): frames for other nodes are
    /// forwarded while the program computes. Nodes 1 and 2 (the two routes from 0 to 3)
    /// park for node 0's word; a message of another type wakes them meanwhile, so that
    /// their progress threads look again while the callers are parked, and sleep; they
    /// take the word, then compute for 600 ms without a call. Node 0's message to node 3
    /// must pass them before that ends. Without the wake their progress threads slept on
    /// for up to a second (checked by leaving it out: node 3 took the message after the
    /// computing).
    #[test]
    fn a_node_that_waited_parked_forwards_while_it_computes() {
        use std::sync::atomic::{AtomicU32, Ordering};
        // Nodes 1 and 2 that have finished computing.
        static COMPUTED: AtomicU32 = AtomicU32::new(0);
        fn program(
            me: NodeId,
            node: &Node,
            _: &TcpTransport,
        ) -> Result<(), Box<dyn std::error::Error>> {
            let (word, other) = (MsgType(1), MsgType(2));
            let pause = || std::thread::sleep(Duration::from_millis(40));
            match me {
                0 => {
                    for ty in [other, word] {
                        // Long enough for nodes 1 and 2 to park (and sleep) first.
                        pause();
                        for n in [1, 2] {
                            node.send(n, ty, vec![0])?;
                        }
                    }
                    pause();
                    node.send(3, word, vec![1])?;
                }
                1 | 2 => {
                    node.recv(Select::from_node(0, TypeSel::Is(word.0)))?;
                    node.recv(Select::from_node(0, TypeSel::Is(other.0)))?;
                    std::thread::sleep(Duration::from_millis(600));
                    COMPUTED.fetch_add(1, Ordering::SeqCst);
                }
                _ => {
                    node.recv(Select::from_node(0, TypeSel::Is(word.0)))?;
                    let done = COMPUTED.load(Ordering::SeqCst);
                    if done != 0 {
                        return Err(format!(
                            "node 3 got node 0's message after {done} of the nodes on its \
                             routes had finished computing: not forwarded meanwhile"
                        )
                        .into());
                    }
                }
            }
            Ok(())
        }
        let tuning = Tuning {
            spin: Duration::from_micros(100),
            ..Tuning::default()
        };
        tcp_job_tuned(2, tuning, program);
    }
}
