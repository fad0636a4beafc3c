//! Supervising a started job ([`Supervisor`]): follow the ranks' exits and the control
//! channel's events until the job ends or fails — a rank's failure, a deadlock, a timeout,
//! Ctrl-C — and, when it fails, tear it down: tell the ranks why, give them a moment, kill
//! the rest. What is left is the verdict.

use std::time::{Duration, Instant};

use anyhow::Result;

use crate::control::{Control, Event};
use crate::spawn::{Exit, Ranks, Slots};
use crate::verdict::{JobFailure, RankExit};

/// How long every running rank must have reported a blocked wait (each after 1 s with
/// nothing arriving) before the launcher calls it a deadlock.
const DEADLOCK_GRACE: Duration = Duration::from_secs(2);

/// After the first rank fails, how long hcrun collects further exits before it names a rank
/// in the abort it sends the others.
const SETTLE: Duration = Duration::from_millis(100);

/// How long the ranks have, after the abort, to end by themselves before hcrun kills them.
const ABORT_GRACE: Duration = Duration::from_millis(300);

/// The job's limits, for the supervisor.
pub struct Limits {
    /// How long the cube may take to be wired (counted from the start).
    pub boot_timeout: Duration,
    /// How long the whole job may run.
    pub timeout: Option<Duration>,
}

/// The state of a running job, as hcrun sees it.
pub struct Supervisor {
    slots: Slots,
    ranks: Ranks,
    control: Control,
    limits: Limits,
    /// Who has said hello, by slot.
    joined: Vec<bool>,
    /// Deadlock detection: a live rank that reported a long wait, what it waits for.
    blocked: Vec<Option<String>>,
    /// Who has exited, by slot.
    exited: Vec<bool>,
    /// Since when every live rank has been blocked.
    all_blocked_since: Option<tokio::time::Instant>,
    /// Who exited 0 without having said hello (before the cube was wired).
    exited_unjoined: Vec<u32>,
    /// The cube is wired and every rank told to go.
    all_ready: bool,
    /// How many processes have not been reaped yet.
    alive: u32,
    /// A failure that is not a rank's exit (deadlock, timeouts, Ctrl-C, ...).
    failure: Option<JobFailure>,
    /// Ranks that exited unsuccessfully before hcrun killed anyone, in the order reaped.
    failed: Vec<RankExit>,
}

impl Supervisor {
    /// Supervise the started `ranks`, whose control channel is `control`.
    pub fn new(slots: Slots, ranks: Ranks, control: Control, limits: Limits) -> Supervisor {
        let total = slots.total() as usize;
        Supervisor {
            slots,
            ranks,
            control,
            limits,
            joined: vec![false; total],
            blocked: vec![None; total],
            exited: vec![false; total],
            all_blocked_since: None,
            exited_unjoined: Vec::new(),
            all_ready: false,
            alive: total as u32,
            failure: None,
            failed: Vec::new(),
        }
    }

    /// Follow the job until every process has exited or the job has failed.
    pub async fn watch(&mut self) {
        let start = Instant::now();
        let boot_deadline = tokio::time::Instant::now() + self.limits.boot_timeout;
        let job_deadline = self.limits.timeout.map(|t| tokio::time::Instant::now() + t);
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        let far = tokio::time::Instant::now() + Duration::from_secs(10 * 365 * 24 * 3600);
        while self.alive > 0 && !self.failing() {
            self.note_all_blocked();
            let booting = !self.all_ready && self.joined.iter().any(|j| *j);
            tokio::select! {
                Some(x) = self.ranks.exits.recv() => self.on_exit(x),
                Some(ev) = self.control.next() => self.on_event(ev, start),
                _ = tokio::time::sleep_until(self.all_blocked_since.map_or(far, |t| t + DEADLOCK_GRACE)) => {
                    self.failure = Some(self.deadlock());
                }
                _ = tokio::time::sleep_until(boot_deadline), if booting => {
                    let missing = self.slots_where(|s, slot| !s.joined[slot as usize]);
                    self.failure = Some(JobFailure::BootTimeout {
                        ms: self.limits.boot_timeout.as_millis(),
                        missing,
                    });
                }
                _ = tokio::time::sleep_until(job_deadline.unwrap_or(far)) => {
                    self.failure = Some(JobFailure::JobTimeout {
                        secs: self.limits.timeout.map_or(0, |t| t.as_secs()),
                    });
                }
                _ = &mut ctrl_c => self.failure = Some(JobFailure::Interrupted),
            }
        }
        self.control.stop_rendezvous();
    }

    /// Has the job failed (so far)?
    pub fn failing(&self) -> bool {
        self.failure.is_some() || !self.failed.is_empty()
    }

    /// Stop a failing job: tell the ranks why, give them a moment to say so, then kill
    /// whatever is left. Exits until then are still judged.
    pub async fn tear_down(&mut self) -> Result<()> {
        // A rank's failure is followed at once by its neighbors' (`PeerGone`), whose exits
        // may be reaped first: collect what comes in the next moment before naming anyone
        // in the abort.
        if self.failure.is_none() {
            self.judge_exits_until(tokio::time::Instant::now() + SETTLE)
                .await;
        }
        let reason = match &self.failure {
            Some(f) => f.abort_reason(),
            None => JobFailure::from_exits(self.failed.clone()).abort_reason(),
        };
        self.control.abort(reason).await?;
        self.judge_exits_until(tokio::time::Instant::now() + ABORT_GRACE)
            .await;
        self.ranks.kill_all();
        while self.alive > 0 {
            match tokio::time::timeout(Duration::from_secs(2), self.ranks.exits.recv()).await {
                Ok(Some(_)) => self.alive -= 1,
                _ => break,
            }
        }
        Ok(())
    }

    /// The job has ended: let the output drain, and judge it (`None`: it succeeded).
    pub async fn verdict(mut self) -> Option<JobFailure> {
        self.ranks.drain_output().await;
        self.control.close();
        match self.failure {
            Some(f) => Some(f),
            None if !self.failed.is_empty() => Some(JobFailure::from_exits(self.failed)),
            // Every process exited 0 without ever saying hello: not a hypercube program.
            None if !self.joined.iter().any(|j| *j) => Some(JobFailure::NoneJoined),
            None => None,
        }
    }

    /// Keep the state of "every live rank is blocked" up to date.
    fn note_all_blocked(&mut self) {
        let mut live = (0..self.exited.len())
            .filter(|r| !self.exited[*r])
            .peekable();
        let all_blocked =
            self.all_ready && live.peek().is_some() && live.all(|r| self.blocked[r].is_some());
        self.all_blocked_since = match (all_blocked, self.all_blocked_since) {
            (true, Some(t)) => Some(t),
            (true, None) => Some(tokio::time::Instant::now()),
            (false, _) => None,
        };
    }

    /// A process has exited.
    fn on_exit(&mut self, x: Exit) {
        self.alive -= 1;
        let slot = x.slot as usize;
        self.exited[slot] = true;
        match &x.status {
            Ok(s) if s.success() => {
                if !self.joined[slot] && !self.all_ready {
                    self.exited_unjoined.push(x.slot);
                    if self.joined.iter().any(|j| *j) {
                        self.failure = Some(JobFailure::ExitedUnjoined {
                            name: self.slots.name(x.slot),
                        });
                    }
                }
            }
            Ok(s) => {
                let failed = RankExit::new(self.slots.name(x.slot), *s, x.cause, self.joined[slot]);
                self.failed.push(failed);
            }
            Err(e) => {
                self.failure = Some(JobFailure::CannotWait {
                    name: self.slots.name(x.slot),
                    error: e.to_string(),
                })
            }
        }
    }

    /// The control channel reported something.
    fn on_event(&mut self, ev: Event, start: Instant) {
        match ev {
            Event::Joined(r) => {
                self.joined[r as usize] = true;
                if let Some(u) = self.exited_unjoined.first() {
                    self.failure = Some(JobFailure::ExitedUnjoined {
                        name: self.slots.name(*u),
                    });
                }
            }
            Event::AllReady => {
                self.all_ready = true;
                tracing::debug!("the cube is wired after {:?}", start.elapsed());
            }
            Event::Blocked(slot, what) => self.blocked[slot as usize] = Some(what),
            Event::Running(slot) => self.blocked[slot as usize] = None,
        }
    }

    /// Every live rank has waited too long: what each waits for.
    fn deadlock(&self) -> JobFailure {
        let waits = (0..self.slots.total())
            .filter_map(|r| {
                let w = self.blocked[r as usize].as_ref()?;
                Some(format!("{} waits for {w}", self.slots.name(r)))
            })
            .collect();
        JobFailure::Deadlock {
            secs: (DEADLOCK_GRACE + Duration::from_secs(1)).as_secs(),
            waits,
        }
    }

    /// The names of the slots for which `pick` holds.
    fn slots_where(&self, pick: impl Fn(&Self, u32) -> bool) -> Vec<String> {
        (0..self.slots.total())
            .filter(|slot| pick(self, *slot))
            .map(|slot| self.slots.name(slot))
            .collect()
    }

    /// Judge the exits reaped until `deadline`, or until no process is left.
    async fn judge_exits_until(&mut self, deadline: tokio::time::Instant) {
        while self.alive > 0 {
            tokio::select! {
                Some(x) = self.ranks.exits.recv() => {
                    self.alive -= 1;
                    if let Ok(s) = &x.status {
                        if !s.success() {
                            let joined = self.joined[x.slot as usize];
                            self.failed.push(RankExit::new(self.slots.name(x.slot), *s, x.cause, joined));
                        }
                    }
                }
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
    }
}
