//! When a rank counts as blocked, for the launcher's deadlock detector: two plain state
//! machines that know nothing of the engine — they are given the node's frame count and
//! the time, and say what to report; the engine (`wait.rs`) reports it.
//!
//! - **A wait** ([`WaitWatch`]): a caller parked in a blocking call that sees no frame
//!   arrive at this node for [`BLOCKED_REPORT`] is blocked — unless a link of this node
//!   holds bytes its neighbour has not taken (`Engine::link_stalled`: a slow or dying link
//!   is not a deadlock), or another thread of the rank computes: the process's other
//!   threads used at least [`BUSY_SHARE`] of a core over the last [`BUSY_WINDOW`] (a parked
//!   rank's use well under 1 %). Without that a program that waits on one thread
//!   while another computes — a background receiver — was stopped as a deadlock after
//!   3 s. The report is taken back when a frame arrives, another thread computes again or
//!   the wait ends. (Not in the in-process transport, whose nodes are all threads of one
//!   process: there the waiting threads' own looks on a large cube add up to a busy
//!   process, and a real deadlock on 64 nodes went unreported — tried and reverted.)
//! - **Polling counts as waiting** ([`Streak`]): a rank that spins on `iprobe` / `test`
//!   with nothing arriving is as stuck as one blocked in `recv` (measured: 42 million
//!   `iprobe` calls in 20 s without a verdict before this). A *streak* is a run of
//!   non-blocking polls that find nothing, with no frame arriving at this node and no gap
//!   longer than [`POLL_GAP`] between two of them. When a streak has lasted
//!   [`BLOCKED_REPORT`] and the rank spent at least half of that time inside the polls
//!   themselves, it is blocked, like a long wait. A rank that computes between polls (a
//!   loop that checks `iprobe` now and then) spends a small share of its time polling and
//!   is never reported, so it is never mistaken for a deadlock. The report is taken back
//!   when a poll finds something, a frame arrives, or the rank stops polling for longer
//!   than the gap (the progress thread looks: [`Streak::check`]).

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a caller must wait with no frame arriving before the launcher hears of it.
pub(super) const BLOCKED_REPORT: Duration = Duration::from_secs(1);

/// A longer pause between two polls means the rank did something else: the streak ends.
pub(super) const POLL_GAP: Duration = Duration::from_millis(100);

/// The share of a streak's time spent inside the polls above which the rank is spinning.
const SPINNING_SHARE: f64 = 0.5;

/// The share of one core a rank's process must use, while a wait of it sees nothing, to
/// count as computing on another thread. A parked rank uses under 1 % (the progress
/// thread's looks, the waiter's spin after each 50 ms park); a computing thread, even with
/// 16 ranks on 2 cores, about 12 %.
const BUSY_SHARE: f64 = 0.05;

/// The window over which [`BUSY_SHARE`] is measured.
const BUSY_WINDOW: Duration = Duration::from_millis(100);

/// Did other threads use [`BUSY_SHARE`] of a core: `used` of their CPU time over `window`?
fn busy(used: Duration, window: Duration) -> bool {
    used.as_secs_f64() >= BUSY_SHARE * window.as_secs_f64()
}

/// CPU time used so far by this process's other threads than the calling one
/// (`CLOCK_PROCESS_CPUTIME_ID` less `CLOCK_THREAD_CPUTIME_ID`): a waiter's own spinning is
/// not another thread's computation.
pub(super) fn others_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
        .saturating_sub(cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID))
}

/// The CPU-time clock `id` (zero if it cannot be read).
fn cpu_clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; `id` is one of the platform's clock ids.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// What to tell the launcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Say {
    Nothing,
    /// This rank is blocked.
    Blocked,
    /// This rank, reported blocked before, runs again.
    Running,
}

/// One blocking wait: blocked after [`BLOCKED_REPORT`] without a frame arriving while the
/// rank's other threads do not compute.
pub(super) struct WaitWatch {
    seen: u64,
    since: Instant,
    /// Start of the current CPU window and the other threads' CPU time then (from the first
    /// tick: a wait that ends before its first park never reads the clock).
    cpu_window: Option<(Instant, Duration)>,
    reported: bool,
}

impl WaitWatch {
    /// A wait that starts at `now`, when the node had received `activity` frames.
    pub(super) fn new(activity: u64, now: Instant) -> Self {
        WaitWatch {
            seen: activity,
            since: now,
            cpu_window: None,
            reported: false,
        }
    }

    /// After each park: frames arrived, or the process's other threads used [`BUSY_SHARE`]
    /// of a core over the last [`BUSY_WINDOW`] (`cpu`: their CPU time now, [`others_cpu`])
    /// → running again; neither for [`BLOCKED_REPORT`] and no link `stalled` (asked only
    /// then) → blocked.
    pub(super) fn tick(
        &mut self,
        activity: u64,
        now: Instant,
        cpu: Duration,
        stalled: impl FnOnce() -> bool,
    ) -> Say {
        if activity != self.seen {
            self.seen = activity;
            self.since = now;
            self.cpu_window = Some((now, cpu));
            return self.end();
        }
        let (t0, cpu0) = *self.cpu_window.get_or_insert((now, cpu));
        let window = now.saturating_duration_since(t0);
        if window >= BUSY_WINDOW {
            self.cpu_window = Some((now, cpu));
            let used = cpu.saturating_sub(cpu0);
            if busy(used, window) {
                // Another thread of this rank computes: it may yet send what is awaited.
                self.since = now;
                return self.end();
            }
        }
        if !self.reported
            && now.saturating_duration_since(self.since) >= BLOCKED_REPORT
            && !stalled()
        {
            self.reported = true;
            return Say::Blocked;
        }
        Say::Nothing
    }

    /// The wait is over (or frames came): take back a report, if one is out.
    pub(super) fn end(&mut self) -> Say {
        if std::mem::take(&mut self.reported) {
            Say::Running
        } else {
            Say::Nothing
        }
    }
}

/// What one poll changed ([`Streak::after_poll`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct PollStep {
    /// A streak that had been reported ended: report running.
    pub running: bool,
    /// The streak is long enough and mostly polling: blocked, unless a link is stalled
    /// (the caller looks, without this streak's lock, then calls [`Streak::confirm`]).
    pub candidate: bool,
}

/// The current streak of polls that found nothing.
#[derive(Debug, Default)]
pub(super) struct Streak {
    start: Option<Instant>,
    last: Option<Instant>,
    inside: Duration,
    seen: u64,
    reported: bool,
}

/// The engine's streak (its own lock: polls never take the state lock for it).
pub(super) type Polls = Mutex<Streak>;

impl Streak {
    /// Account for one non-blocking poll that ran from `t0` to `now`; `found`: it found
    /// what it looked for; `activity`: the node's frame count.
    pub(super) fn after_poll(
        &mut self,
        t0: Instant,
        now: Instant,
        found: bool,
        activity: u64,
    ) -> PollStep {
        let mut step = PollStep::default();
        let broken =
            found || activity != self.seen || !self.last.is_some_and(|l| t0 <= l + POLL_GAP);
        if broken {
            step.running = std::mem::take(&mut self.reported);
            *self = Streak {
                start: (!found).then_some(t0),
                seen: activity,
                ..Streak::default()
            };
            if found {
                return step;
            }
        }
        self.inside += now.saturating_duration_since(t0);
        self.last = Some(now);
        let Some(start) = self.start else { return step };
        let span = now.saturating_duration_since(start);
        step.candidate = !self.reported
            && span >= BLOCKED_REPORT
            && self.inside.as_secs_f64() >= SPINNING_SHARE * span.as_secs_f64();
        step
    }

    /// A candidate was not excused by a stalled link: true if this call marks the streak
    /// reported (false if another thread did already).
    pub(super) fn confirm(&mut self) -> bool {
        !std::mem::replace(&mut self.reported, true)
    }

    /// For the progress thread, at `now`: (take the report back, a report is still out).
    /// A reported streak whose last poll is more than [`POLL_GAP`] ago has ended: the rank
    /// computes now.
    pub(super) fn check(&mut self, now: Instant) -> (bool, bool) {
        if !self.reported {
            return (false, false);
        }
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) > POLL_GAP)
        {
            *self = Streak::default();
            return (true, false);
        }
        (false, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_silent_wait_is_blocked_once_and_taken_back_when_frames_come() {
        let t = Instant::now();
        let mut w = WaitWatch::new(7, t);
        let idle = Duration::ZERO; // the process's CPU time does not move
        assert_eq!(w.tick(7, t + 500 * MS, idle, || false), Say::Nothing);
        // A stalled link excuses it.
        assert_eq!(w.tick(7, t + 1100 * MS, idle, || true), Say::Nothing);
        assert_eq!(w.tick(7, t + 1200 * MS, idle, || false), Say::Blocked);
        assert_eq!(w.tick(7, t + 1300 * MS, idle, || false), Say::Nothing);
        assert_eq!(w.tick(8, t + 1400 * MS, idle, || false), Say::Running);
        assert_eq!(w.end(), Say::Nothing);
        assert_eq!(w.tick(8, t + 2500 * MS, idle, || false), Say::Blocked);
        assert_eq!(w.end(), Say::Running);
    }

    /// A wait that sees nothing while another thread of the rank computes is not blocked;
    /// once reported, computing again takes the report back. The rank's own looks (under
    /// the share) do not count.
    #[test]
    fn a_wait_beside_a_computing_thread_is_not_blocked() {
        let t = Instant::now();
        let mut w = WaitWatch::new(7, t);
        // 30 ms of CPU per 50 ms park, for 3 s: never blocked.
        for k in 1..=60u32 {
            let say = w.tick(7, t + k * 50 * MS, k * 30 * MS, || false);
            assert_eq!(say, Say::Nothing, "tick {k}");
        }
        // The computation ends; the rank's own looks use 0.1 ms per park: blocked a second
        // after the last window that saw the computation (it closed at tick 1 below).
        let quiet = |k: u32| 1800 * MS + k * MS / 10;
        let at = |k: u32| t + 3000 * MS + k * 50 * MS;
        let first = (1..=30u32).find(|&k| w.tick(7, at(k), quiet(k), || false) == Say::Blocked);
        assert_eq!(
            first,
            Some(21),
            "blocked a second after the computation ended"
        );
        // It computes again: taken back within two windows.
        let back = (22..=30u32).find(|&k| {
            let cpu = quiet(21) + (k - 21) * 40 * MS;
            w.tick(7, at(k), cpu, || false) == Say::Running
        });
        assert!(matches!(back, Some(22..=24)), "{back:?}");
    }

    #[test]
    fn polls_that_find_nothing_for_a_second_are_blocked_unless_the_rank_computes() {
        let t = Instant::now();
        // Spinning: back-to-back polls of 1 ms each.
        let mut s = Streak::default();
        let mut blocked_at = None;
        for i in 0..1500u32 {
            let t0 = t + i * MS;
            let step = s.after_poll(t0, t0 + MS, false, 0);
            if step.candidate && s.confirm() {
                blocked_at.get_or_insert(i);
            }
        }
        // The poll that ends one second after the first began.
        assert_eq!(blocked_at, Some(999));
        // Something arrives: running again, streak over.
        let step = s.after_poll(t + 1500 * MS, t + 1501 * MS, true, 0);
        assert_eq!(
            step,
            PollStep {
                running: true,
                candidate: false
            }
        );
        // Computing between polls: 1 ms of polling every 50 ms, never a candidate.
        let mut c = Streak::default();
        for i in 0..100u32 {
            let t0 = t + i * 50 * MS;
            assert!(!c.after_poll(t0, t0 + MS, false, 0).candidate);
        }
    }

    #[test]
    fn a_reported_streak_ends_when_polling_stops() {
        let t = Instant::now();
        let mut s = Streak::default();
        for i in 0..1001u32 {
            let t0 = t + i * MS;
            if s.after_poll(t0, t0 + MS, false, 0).candidate {
                assert!(s.confirm());
            }
        }
        assert_eq!(s.check(t + 1050 * MS), (false, true));
        assert_eq!(s.check(t + 1200 * MS), (true, false));
        assert_eq!(s.check(t + 1300 * MS), (false, false));
    }
}
