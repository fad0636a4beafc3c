//! How a caller waits: spin on the sockets for a short budget (reading them itself), then
//! park in `poll(2)` on the links, spin again after each wake-up; report a wait that sees
//! nothing arrive for a second to the launcher (deadlock detection), in words that say what
//! it waits for ("a message of type 5 from node 3"); give up when that can no longer come
//! (its sender finished). See `docs/architecture.md`, "Threads of a node".

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::blocked::{Say, WaitWatch};
use super::describe::{describe_select, describe_type};
use super::engine::{relock, Engine, State};
use crate::base::message::{Message, Select, Status, TypeSel};
use crate::base::tags;
use crate::error::{Error, Result};
use crate::trace;
use crate::transport::mailbox::RecvToken;

/// A wait's report to the launcher ([`WaitWatch`] decides, this says it), taken back when
/// the wait ends.
struct BlockedReport<'a> {
    e: &'a Engine,
    watch: WaitWatch,
}

impl<'a> BlockedReport<'a> {
    fn new(e: &'a Engine) -> Self {
        let seen = e.activity.load(Ordering::Relaxed);
        BlockedReport {
            e,
            watch: WaitWatch::new(seen, Instant::now()),
        }
    }

    /// Called after each park.
    fn tick(&mut self, st: &State, describe: &dyn Fn(&State) -> String) {
        let act = self.e.activity.load(Ordering::Relaxed);
        let cpu = super::blocked::others_cpu();
        let say = self
            .watch
            .tick(act, Instant::now(), cpu, || self.e.link_stalled(st));
        self.e.say(say, || describe(st));
    }
}

impl Drop for BlockedReport<'_> {
    fn drop(&mut self) {
        let say = self.watch.end();
        self.e.say(say, String::new);
    }
}

impl Engine {
    /// Tell the launcher what [`super::blocked`] decided; `what` describes what this rank
    /// waits for (only called for a report of blocked).
    fn say(&self, say: Say, what: impl FnOnce() -> String) {
        use crate::wire::control::ToLauncher;
        match say {
            Say::Nothing => {}
            Say::Blocked => self.report(&ToLauncher::Blocked {
                rank: self.me,
                waiting_for: what(),
            }),
            Say::Running => self.report(&ToLauncher::Running { rank: self.me }),
        }
    }

    /// Account for one non-blocking poll (`iprobe`, `test`) that started at `t0`; `found`:
    /// it found what it looked for; `what` describes what the rank polls for (only called
    /// to report). See [`super::blocked::Streak`].
    pub(super) fn after_poll(&self, t0: Instant, found: bool, what: impl FnOnce() -> String) {
        let act = self.activity.load(Ordering::Relaxed);
        let step = relock(self.polls.lock()).after_poll(t0, Instant::now(), found, act);
        if step.running {
            self.say(Say::Running, String::new);
        }
        // Waiting on a link that holds untaken bytes is not a deadlock
        // (`Engine::link_stalled`): look again at the next poll. The state lock is never
        // taken under the streak's.
        if step.candidate && !self.link_stalled(&self.lock()) && relock(self.polls.lock()).confirm()
        {
            self.say(Say::Blocked, || {
                format!("{} (polling with iprobe/test, nothing arrives)", what())
            });
        }
    }

    /// For the progress thread: take back the report of a rank that stopped polling (it
    /// computes now). Returns whether a report is still outstanding (then look again
    /// within [`super::blocked::POLL_GAP`]).
    pub(super) fn check_polls(&self) -> bool {
        let (take_back, still) = relock(self.polls.lock()).check(Instant::now());
        if take_back {
            self.say(Say::Running, String::new);
        }
        still
    }
}

/// At the end of a wait, when no other caller drives the sockets: if output is still
/// queued on a full socket, wake the progress thread so that it takes the sockets back at
/// once (the rest of a large send must not wait while the program computes); otherwise
/// note the time, and the progress thread stays aside for a while (a tick, or
/// [`FORWARD_GAP`] on a node that forwarded lately: `progress.rs`). Declared first in a
/// wait, so it runs after the other guards have left.
///
/// A node on an active route used to wake the progress thread at every wait's end too.
/// In a collective, whose waits follow each other within microseconds, that was a context
/// switch per wait for a thread that found the sockets taken again: the 64 KiB shift in
/// rank order on 8 ranks took 170–274 µs with it and 117–180 µs without
/// (`docs/perf/analysis.md`).
///
/// [`FORWARD_GAP`]: super::progress::FORWARD_GAP
struct HandBack<'a>(&'a Engine);

impl Drop for HandBack<'_> {
    fn drop(&mut self) {
        let e = self.0;
        if e.spinners.load(Ordering::SeqCst) != 0 || e.parked.load(Ordering::SeqCst) != 0 {
            return;
        }
        if e.lock().out.iter().any(|o| !o.queue.is_empty()) {
            // Hand back for good: an older wait's end must not send the progress thread
            // aside again after it has taken over.
            e.last_wait_end_us.store(0, Ordering::Relaxed);
            e.wake_progress();
        } else {
            // The program will likely wait again soon (a ping-pong, the next step of a
            // collective): the progress thread keeps off the sockets for a while, or it
            // would sleep in poll on them between two waits and be woken by every
            // message the caller is about to read itself.
            let now = e.epoch.elapsed().as_micros() as u64 + 1;
            e.last_wait_end_us.store(now, Ordering::Relaxed);
            if e.progress_asleep.load(Ordering::SeqCst) {
                // It sleeps until told (this wait parked): it keeps aside for the rest
                // of a tick from now, then takes the sockets while the program computes.
                e.wake_progress();
            }
        }
    }
}

/// Counts a spinning waiter for as long as it lives.
struct Spinning<'a>(&'a Engine);

impl<'a> Spinning<'a> {
    fn new(e: &'a Engine) -> Self {
        e.spinners.fetch_add(1, Ordering::SeqCst);
        Spinning(e)
    }
}

impl Drop for Spinning<'_> {
    fn drop(&mut self) {
        self.0.spinners.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Engine {
    /// Returns whether any bytes came in. With several links, one non-blocking `poll(2)`
    /// finds the readable ones (one syscall instead of a `read` per link per turn).
    pub(super) fn poll_inputs(&self) -> bool {
        let n = self.inputs.len();
        let mut ready = [true; 32];
        if n > 1 && n <= ready.len() {
            let mut fds = [libc::pollfd {
                fd: -1,
                events: 0,
                revents: 0,
            }; 32];
            for (k, m) in self.inputs.iter().enumerate() {
                if let Ok(inp) = m.try_lock() {
                    if !inp.eof {
                        fds[k] = libc::pollfd {
                            fd: std::os::fd::AsRawFd::as_raw_fd(&inp.stream),
                            events: libc::POLLIN,
                            revents: 0,
                        };
                    }
                }
            }
            // SAFETY: `fds[..n]` is a valid, exclusively borrowed array of pollfd structs
            // (negative fds are ignored by poll).
            let r = unsafe { libc::poll(fds.as_mut_ptr(), n as libc::nfds_t, 0) };
            if r == 0 {
                return false;
            }
            if r > 0 {
                for k in 0..n {
                    ready[k] = fds[k].revents != 0;
                }
            }
        }
        let mut any = false;
        for (i, m) in self.inputs.iter().enumerate() {
            if !ready.get(i).copied().unwrap_or(true) {
                continue;
            }
            if let Ok(mut inp) = m.try_lock() {
                if !inp.eof {
                    let before = inp.bytes_read;
                    self.service_input(&mut inp, i);
                    any |= inp.bytes_read != before;
                }
            }
        }
        any
    }

    /// Wait until `f` yields a value: spin (reading the sockets ourselves), then park.
    pub(super) fn wait_for<T>(
        &self,
        what: &str,
        timeout: Option<Duration>,
        f: impl FnMut(&Engine, &mut State) -> Option<T>,
    ) -> Result<T> {
        self.wait_described(what, &|_| what.to_string(), timeout, f)
    }

    /// [`Engine::wait_described`] that also gives up, with the error `hopeless` returns,
    /// when the awaited message can no longer come (its sender finished).
    pub(super) fn wait_or_give_up<T>(
        &self,
        what: &str,
        describe: &dyn Fn(&State) -> String,
        timeout: Option<Duration>,
        mut ready: impl FnMut(&Engine, &mut State) -> Option<T>,
        hopeless: impl Fn(&Engine, &State) -> Option<Error>,
    ) -> Result<T> {
        let mut gave_up = None;
        let r = self.wait_described(what, describe, timeout, |e, st| {
            if let Some(v) = ready(e, st) {
                return Some(Some(v));
            }
            gave_up = hopeless(e, st);
            gave_up.as_ref().map(|_| None)
        })?;
        match (r, gave_up) {
            (Some(v), _) => Ok(v),
            (None, Some(err)) => Err(err),
            (None, None) => Err(Error::InvalidRequest(format!(
                "{what}: the wait ended empty"
            ))),
        }
    }

    /// [`Engine::wait_for`] with a description of what is awaited, computed only if the
    /// wait lasts long enough to be reported to the launcher (after `blocked::BLOCKED_REPORT` without
    /// any frame arriving); the launcher ends a job in which every rank is so blocked.
    pub(super) fn wait_described<T>(
        &self,
        what: &str,
        describe: &dyn Fn(&State) -> String,
        timeout: Option<Duration>,
        mut f: impl FnMut(&Engine, &mut State) -> Option<T>,
    ) -> Result<T> {
        if !trace::on() {
            return self.wait_loop(what, describe, timeout, f);
        }
        // Traced: a wait whose first look did not find what it waits for blocked; record
        // how long, and on what (described at that first look).
        let t0 = trace::now();
        let mut blocked: Option<String> = None;
        let mut first = true;
        let r = self.wait_loop(what, describe, timeout, |e, st| {
            let v = f(e, st);
            if v.is_none() && std::mem::take(&mut first) {
                blocked = Some(describe(st));
            }
            v
        });
        if let Some(on) = blocked {
            trace::wait(t0, &on);
        }
        r
    }

    /// The wait itself (see [`Engine::wait_described`]).
    fn wait_loop<T>(
        &self,
        what: &str,
        describe: &dyn Fn(&State) -> String,
        timeout: Option<Duration>,
        mut f: impl FnMut(&Engine, &mut State) -> Option<T>,
    ) -> Result<T> {
        let _hand_back = HandBack(self);
        let mut blocked = BlockedReport::new(self);
        let start = Instant::now();
        let mut spin_until = start + self.tuning.spin;
        let deadline = timeout.map(|t| start + t);
        let mut spinning = (!self.tuning.spin.is_zero()).then(|| Spinning::new(self));
        loop {
            {
                let mut st = self.lock();
                if let Some(v) = f(self, &mut st) {
                    return Ok(v);
                }
                if let Some(e) = &st.failure {
                    return Err(e.duplicate());
                }
                // Output a full socket would not take: while a caller spins, the progress
                // thread stays off the sockets, so the caller writes it on as room appears
                // (otherwise a large message stalls until the spin budget runs out).
                for k in 0..st.out.len() {
                    if st.out[k].has_writable() {
                        self.write_out(&mut st, k);
                    }
                }
                let now = Instant::now();
                if let Some(d) = deadline {
                    if now >= d {
                        return Err(Error::Timeout {
                            what: what.to_string(),
                            timeout_ms: timeout.map_or(0, |t| t.as_millis() as u64),
                        });
                    }
                }
                if now >= spin_until {
                    // From spinning to parked: still driving the sockets (in poll), so the
                    // progress thread stays aside.
                    spinning = None;
                    let mut park = Duration::from_millis(50);
                    if let Some(d) = deadline {
                        park = park.min(d - now);
                    }
                    // Park in poll(2) on the links and the waiter pipe: whatever arrives
                    // wakes this thread directly, and it reads it itself.
                    self.parked.fetch_add(1, Ordering::SeqCst);
                    let fds = self.poll_set(&st);
                    drop(st);
                    if trace::on() {
                        // Idle: a good moment to put the trace on disk.
                        trace::flush();
                    }
                    // No longer parked once poll returns, before it reads what woke it: a
                    // frame it lands itself must not make it notify itself (a write to
                    // its own waiter pipe, and a spurious wake-up at its next park).
                    let polled = self.poll_and_service(
                        &self.waiter_rx,
                        fds,
                        park,
                        false,
                        Some(&self.parked),
                    );
                    // The progress thread sleeps while callers are parked: the quiet
                    // links' acknowledgements are looked for here.
                    self.ack_idle();
                    blocked.tick(&self.lock(), describe);
                    // Woken (by a frame or a notification): spin a while again before the
                    // next park, since a reply often follows quickly. Not after a park
                    // that timed out with nothing: an idle rank spun 200 µs every 50 ms.
                    if polled.any && !self.tuning.spin.is_zero() {
                        spin_until = Instant::now() + self.tuning.spin;
                        spinning = Some(Spinning::new(self));
                    }
                    continue;
                }
            }
            if self.poll_inputs() {
                if !self.tuning.spin.is_zero() {
                    // Data is flowing (e.g. a large message): keep reading rather than park
                    // and pay a wake-up for every segment.
                    spin_until = Instant::now() + self.tuning.spin;
                    if spinning.is_none() {
                        spinning = Some(Spinning::new(self));
                    }
                }
                // Look at once: what came may be what this wait is for. A yield here put a
                // `sched_yield` (and often another rank's turn on the core) between every
                // arrival and its answer: 8 B ping-pong on 8 ranks over 2 cores, 5.5 µs
                // from the data's `recv` to the reply's `sendmsg` under tracing
                // (`docs/perf/analysis.md`).
                continue;
            }
            if self.tuning.spin_yield {
                // Polite spinning: give the core away if anyone else wants it (the peer we
                // wait for may be that someone).
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

impl Engine {
    /// Block until the posted receive completes, the deadline passes, or the message can
    /// no longer come (its sender finished: the receive is then withdrawn).
    pub(super) fn wait_recv(&self, token: RecvToken, timeout: Option<Duration>) -> Result<Message> {
        let t0 = if trace::on() { trace::now() } else { 0 };
        {
            let st = self.lock();
            if !st.mailbox.knows(token) {
                return Err(Error::InvalidRequest(format!(
                    "receive {token} is not pending"
                )));
            }
        }
        let describe = |st: &State| match st.mailbox.unbound_select(token) {
            Some(sel) => describe_select(&sel),
            None => "the rest of a large message".to_string(),
        };
        let r = self.wait_or_give_up(
            "a message",
            &describe,
            timeout,
            |e, st| e.take(st, token, t0),
            |e, st| e.hopeless(st, token),
        );
        if let Err(Error::PeerFinished { .. }) = r {
            self.lock().mailbox.cancel(token);
        }
        r
    }

    /// Block until a message matching `sel` is here (or can no longer come) and describe it.
    pub(super) fn wait_probe(&self, sel: &Select, timeout: Option<Duration>) -> Result<Status> {
        let describe = |_: &State| describe_select(sel);
        self.wait_or_give_up(
            "a message (probe)",
            &describe,
            timeout,
            |_, st| st.mailbox.probe(sel),
            |e, st| e.hopeless_sel(st, sel),
        )
    }

    /// A receive that can never complete because the nodes it could come from finished.
    fn hopeless(&self, st: &State, token: RecvToken) -> Option<Error> {
        let sel = st.mailbox.unbound_select(token)?;
        self.hopeless_sel(st, &sel)
    }

    /// Can a message matching `sel` still come?
    fn hopeless_sel(&self, st: &State, sel: &Select) -> Option<Error> {
        if sel.ty == TypeSel::Is(tags::FINALIZE) {
            return None;
        }
        // Cheap checks first: this runs on every turn of a waiting loop.
        let peer = match sel.source {
            Some(s) if s != self.me && st.finished[self.slot(s)] => s,
            Some(_) => return None,
            None => {
                if !self.others().all(|n| st.finished[self.slot(n)]) {
                    return None;
                }
                self.others().last()?
            }
        };
        let what = describe_type(sel);
        Some(Error::PeerFinished { peer, what })
    }
}
