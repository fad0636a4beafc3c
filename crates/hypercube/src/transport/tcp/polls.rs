//! Polling counts as waiting: a rank that spins on `iprobe` / `test` with nothing arriving
//! is as stuck as one blocked in `recv`, and the launcher's deadlock detector must see it
//! (measured: 42 million `iprobe` calls in 20 s without a verdict before this).
//!
//! A *streak* is a run of non-blocking polls that find nothing, with no frame arriving at
//! this node and no gap longer than [`POLL_GAP`] between two of them. When a streak has
//! lasted [`super::wait::BLOCKED_REPORT`] and the rank spent at least half of that time
//! inside the polls themselves, it is reported `Blocked`, like a long wait. A rank that
//! computes between polls (a loop that checks `iprobe` now and then) spends a small share
//! of its time polling and is never reported, so it is never mistaken for a deadlock. The
//! report is taken back (`Running`) when a poll finds something, a frame arrives, or the
//! rank stops polling for longer than the gap (the progress thread notices that).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::engine::{relock, Engine};
use crate::wire::control::ToLauncher;

/// A longer pause between two polls means the rank did something else: the streak ends.
pub(super) const POLL_GAP: Duration = Duration::from_millis(100);

/// The share of a streak's time spent inside the polls above which the rank is spinning.
const SPINNING_SHARE: f64 = 0.5;

/// The current streak of polls that found nothing.
#[derive(Default)]
pub(super) struct Streak {
    start: Option<Instant>,
    last: Option<Instant>,
    inside: Duration,
    seen: u64,
    reported: bool,
}

/// The engine's streak (its own lock: polls never take the state lock for it).
pub(super) type Polls = Mutex<Streak>;

impl Engine {
    /// Account for one non-blocking poll that started at `t0`; `found`: it found what it
    /// looked for. `what` describes what the rank polls for (only called to report).
    pub(super) fn after_poll(&self, t0: Instant, found: bool, what: impl FnOnce() -> String) {
        let now = Instant::now();
        let act = self.activity.load(std::sync::atomic::Ordering::Relaxed);
        let mut s = relock(self.polls.lock());
        let broken = found || act != s.seen || !s.last.is_some_and(|l| t0 <= l + POLL_GAP);
        if broken {
            let was = std::mem::take(&mut s.reported);
            *s = Streak {
                start: (!found).then_some(t0),
                seen: act,
                ..Streak::default()
            };
            drop(s);
            if was {
                self.report(&ToLauncher::Running { rank: self.me });
            }
            if found {
                return;
            }
            s = relock(self.polls.lock());
        }
        s.inside += now.saturating_duration_since(t0);
        s.last = Some(now);
        let Some(start) = s.start else { return };
        let span = now.saturating_duration_since(start);
        if !s.reported
            && span >= super::wait::BLOCKED_REPORT
            && s.inside.as_secs_f64() >= SPINNING_SHARE * span.as_secs_f64()
        {
            drop(s);
            // Waiting on a link that holds untaken bytes is not a deadlock (see
            // `Engine::link_stalled`): look again at the next poll.
            if self.link_stalled(&self.lock()) {
                return;
            }
            s = relock(self.polls.lock());
            if std::mem::replace(&mut s.reported, true) {
                return;
            }
            drop(s);
            self.report(&ToLauncher::Blocked {
                rank: self.me,
                waiting_for: format!("{} (polling with iprobe/test, nothing arrives)", what()),
            });
        }
    }

    /// For the progress thread: take back a report of a rank that stopped polling (it
    /// computes now). Returns whether a report is still outstanding (then look again
    /// within [`POLL_GAP`]).
    pub(super) fn check_polls(&self) -> bool {
        let mut s = relock(self.polls.lock());
        if !s.reported {
            return false;
        }
        if s.last.is_some_and(|l| l.elapsed() > POLL_GAP) {
            *s = Streak::default();
            drop(s);
            self.report(&ToLauncher::Running { rank: self.me });
            return false;
        }
        true
    }
}
