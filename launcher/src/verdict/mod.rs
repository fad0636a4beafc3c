//! Why a job failed, and which rank to blame for it.
//!
//! When one rank dies, its neighbors fail too (`PeerGone`), and the rest stop when hcrun
//! tells them to (`Shutdown`); their exits may well be reaped before the one that caused
//! them. So hcrun collects the exits of a short while before it judges, reads each failed
//! rank's last error line, and blames by cause: killed by a signal, then failed on its own
//! (a panic, an error that is not a reaction), then gave up on a finished rank
//! (`PeerFinished`), then the reactions; among equals, a node that reports itself cut off
//! from the cube (every link dead), then the first to exit.

mod cycle;
mod tail;

use std::fmt;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use hypercube::Error;

pub use cycle::send_cycle;
pub use tail::ErrorTail;

/// How much a failed rank is to blame: the smaller, the more it is the cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Blame {
    /// Killed by a signal (not one hcrun sent).
    Signal,
    /// Failed for a cause of its own: a panic, or an error that is not a reaction.
    Own,
    /// Waited for a rank that had finished (`PeerFinished`): often another rank's early end.
    Finished,
    /// Failed because another rank did, or because the job was being stopped (`PeerGone`,
    /// `Shutdown`).
    Reaction,
}

impl Blame {
    /// Classify an exit: by a signal, or with this last error line (`cause`).
    pub fn of(signal: bool, cause: Option<&str>) -> Blame {
        match cause {
            _ if signal => Blame::Signal,
            Some(c) if Error::is_reaction_text(c) => Blame::Reaction,
            Some(c) if Error::is_peer_finished_text(c) => Blame::Finished,
            _ => Blame::Own,
        }
    }
}

/// A rank (or the host) that exited unsuccessfully before hcrun killed anyone.
#[derive(Debug, Clone)]
pub struct RankExit {
    /// "rank 6" or "the host".
    pub name: String,
    /// How it ended ("killed by signal 9 (SIGKILL)", "exit status 1").
    pub how: String,
    /// Its last error line, if it printed one.
    pub cause: Option<String>,
    /// Whether it had joined the job (said hello) before it ended.
    pub joined: bool,
    /// How much it is to blame.
    pub blame: Blame,
}

impl fmt::Display for RankExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed", self.name)?;
        if !self.joined {
            write!(f, " before it joined the job")?;
        }
        write!(f, ": {}", self.how)?;
        if let Some(c) = &self.cause {
            write!(f, ": {c}")?;
        }
        Ok(())
    }
}

impl RankExit {
    /// A rank that ended unsuccessfully with `status`, with its last error line (`cause`);
    /// `joined`: whether it had said hello.
    pub fn new(name: String, status: ExitStatus, cause: Option<String>, joined: bool) -> RankExit {
        RankExit {
            name,
            how: describe(status),
            blame: Blame::of(status.signal().is_some(), cause.as_deref()),
            cause,
            joined,
        }
    }
}

/// How a rank ended.
fn describe(status: ExitStatus) -> String {
    if let Some(c) = status.code() {
        if c == 101 {
            return format!("exit status {c} (a Rust panic)");
        }
        return format!("exit status {c}");
    }
    if let Some(sig) = status.signal() {
        let name = match sig {
            libc::SIGKILL => "SIGKILL",
            libc::SIGSEGV => "SIGSEGV",
            libc::SIGABRT => "SIGABRT",
            libc::SIGTERM => "SIGTERM",
            libc::SIGINT => "SIGINT",
            libc::SIGBUS => "SIGBUS",
            _ => "signal",
        };
        return format!("killed by signal {sig} ({name})");
    }
    "ended for an unknown reason".into()
}

/// Why hcrun stopped a job (or found it failed). Each says what happened and what to do.
#[derive(Debug)]
pub enum JobFailure {
    /// Ranks failed; `culprit` is the one to blame, `others` the rest in exit order.
    RankFailed {
        /// The rank named in the verdict.
        culprit: RankExit,
        /// Every other rank that failed before hcrun killed the rest.
        others: Vec<RankExit>,
    },
    /// Every process exited 0 without ever connecting to hcrun.
    NoneJoined,
    /// A process exited 0 without joining while others joined.
    ExitedUnjoined {
        /// Which one.
        name: String,
    },
    /// Every running rank has waited for a message, with nothing arriving, for `secs`.
    Deadlock {
        /// How long every rank had waited.
        secs: u64,
        /// What each rank waits for ("rank 3 waits for ...").
        waits: Vec<String>,
    },
    /// The cube was not wired within the bootstrap timeout.
    BootTimeout {
        /// The timeout.
        ms: u128,
        /// Who never joined.
        missing: Vec<String>,
    },
    /// The whole-job timeout passed.
    JobTimeout {
        /// The timeout.
        secs: u64,
    },
    /// Ctrl-C (SIGINT).
    Interrupted,
    /// hcrun could not wait for a process.
    CannotWait {
        /// Which one.
        name: String,
        /// What the operating system said.
        error: String,
    },
}

/// `n` and `word`, in the plural unless `n` is 1 ("1 rank", "2 ranks", "3 processes").
pub fn count(n: u64, word: &str) -> String {
    match n {
        1 => format!("1 {word}"),
        n if word.ends_with('s') => format!("{n} {word}es"),
        n => format!("{n} {word}s"),
    }
}

impl JobFailure {
    /// Blame one of the failed exits (in the order they were reaped; not empty).
    pub fn from_exits(mut failed: Vec<RankExit>) -> JobFailure {
        // Among equals, a node that found itself cut off from the cube goes first: it names
        // what failed (a node), where its neighbors name one link each.
        let cut_off = |i: usize| {
            failed[i]
                .cause
                .as_deref()
                .is_some_and(Error::is_cut_off_text)
        };
        let Some(i) = (0..failed.len()).min_by_key(|&i| (failed[i].blame, !cut_off(i), i)) else {
            return JobFailure::CannotWait {
                name: "a rank".into(),
                error: "hcrun had no exit to judge (a bug in hcrun; please report it)".into(),
            };
        };
        let culprit = failed.remove(i);
        JobFailure::RankFailed {
            culprit,
            others: failed,
        }
    }

    /// hcrun's exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            JobFailure::Interrupted => 130,
            _ => 1,
        }
    }

    /// A short reason for the ranks' `Abort`: every rank prints it (in its stop notice, and
    /// often in the error its program returns), so the full report, which can be long, is
    /// left to hcrun, which prints it once.
    pub fn abort_reason(&self) -> String {
        match self {
            JobFailure::RankFailed { culprit, .. } => {
                format!("{} failed ({})", culprit.name, culprit.how)
            }
            JobFailure::Deadlock { .. } => {
                "hcrun found a deadlock (its report says what each rank waits for)".into()
            }
            JobFailure::BootTimeout { .. } => {
                "the bootstrap timed out (hcrun's report names who never joined)".into()
            }
            JobFailure::JobTimeout { secs } => format!("the job ran longer than {secs} s"),
            other => other.to_string(),
        }
    }

    /// The lines hcrun prints: the verdict, the other ranks that failed on their own, and
    /// — with `verbose` — the reactions.
    pub fn report(&self, verbose: bool) -> String {
        let JobFailure::RankFailed { culprit, others } = self else {
            return match self {
                JobFailure::NoneJoined => format!("hcrun: {self}"),
                _ => format!("hcrun: {self}; stopped the job"),
            };
        };
        let mut out = format!("hcrun: {culprit}; stopped the job");
        let victims = others.iter().filter(|o| o.blame >= Blame::Finished).count();
        if victims > 0 && !verbose {
            out.push_str(&format!(
                " ({} failed in reaction; --verbose shows how)",
                count(victims as u64, "other rank")
            ));
        }
        const SHOWN: usize = 8;
        let mut own = others.iter().filter(|o| o.blame < Blame::Finished);
        for o in own.by_ref().take(SHOWN) {
            out.push_str(&format!("\nhcrun: also {o}"));
        }
        let more = own.count();
        if more > 0 {
            out.push_str(&format!(
                "\nhcrun: and {} failed on their own",
                count(more as u64, "more rank")
            ));
        }
        if verbose {
            for o in others.iter().filter(|o| o.blame >= Blame::Finished) {
                out.push_str(&format!("\nhcrun: in reaction, {o}"));
            }
        }
        out
    }
}

impl fmt::Display for JobFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobFailure::RankFailed { culprit, .. } => write!(f, "{culprit}"),
            JobFailure::NoneJoined => write!(
                f,
                "no rank joined the job (did the program call hypercube::init?); every process \
                 exited 0 without connecting to hcrun — a node program must call \
                 hypercube::init() (or hypercube::run) before it communicates"
            ),
            JobFailure::ExitedUnjoined { name } => write!(
                f,
                "{name} exited before joining the cube (did it call hypercube::init?)"
            ),
            JobFailure::Deadlock { secs, waits } if send_cycle(waits).is_some() => {
                let cycle = send_cycle(waits).unwrap_or_default();
                let who = match cycle.as_slice() {
                    [a, b] => format!("ranks {a} and {b} each wait in a large send to the other"),
                    c => {
                        let names: Vec<String> = c.iter().map(u32::to_string).collect();
                        let (last, first) = names.split_last().unwrap_or((&names[0], &[]));
                        format!(
                            "ranks {} and {last} each wait in a large send to the next ({} -> {})",
                            first.join(", "),
                            names.join(" -> "),
                            names[0]
                        )
                    }
                };
                write!(
                    f,
                    "deadlock: {who} (a cycle of rendezvous sends): use sendrecv or isend — a \
                     send above HYPERCUBE_EAGER_LIMIT waits until its receiver posts a matching \
                     receive, so every rank of the cycle waits for the next; exchange with \
                     Node::sendrecv (or Subcube::exchange), or start the sends with isend and \
                     receive before waiting for them (every running rank has waited for over \
                     {secs} s with nothing arriving: {})",
                    waits.join("; ")
                )
            }
            JobFailure::Deadlock { secs, waits } => write!(
                f,
                "deadlock: every running rank has waited for over {secs} s with nothing \
                 arriving ({}); check that every receive has a matching send, and that no two \
                 ranks both send each other a message above HYPERCUBE_EAGER_LIMIT before \
                 receiving (such a send waits for its receive: exchange with Node::sendrecv \
                 or isend)",
                waits.join("; ")
            ),
            JobFailure::BootTimeout { ms, missing } => {
                const NAMED: usize = 16;
                let mut names = missing[..missing.len().min(NAMED)].join(", ");
                if missing.len() > NAMED {
                    names.push_str(", ...");
                }
                write!(
                    f,
                    "bootstrap timed out after {ms} ms ({} never joined: {names}); raise \
                     --boot-timeout-ms or check the ranks' output",
                    count(missing.len() as u64, "process")
                )
            }
            JobFailure::JobTimeout { secs } => write!(
                f,
                "the job ran longer than its timeout of {secs} s; raise --timeout-s (0 = no \
                 limit) or look for a rank that never ends"
            ),
            JobFailure::Interrupted => write!(f, "interrupted (Ctrl-C)"),
            JobFailure::CannotWait { name, error } => {
                write!(f, "{name}: cannot wait for it: {error}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(name: &str, blame: Blame) -> RankExit {
        RankExit {
            name: name.into(),
            how: "exit status 1".into(),
            cause: None,
            joined: true,
            blame,
        }
    }

    #[test]
    fn the_cause_is_blamed_whatever_the_order() {
        let f = JobFailure::from_exits(vec![
            exit("rank 7", Blame::Reaction),
            exit("rank 4", Blame::Finished),
            exit("rank 6", Blame::Signal),
            exit("rank 2", Blame::Reaction),
        ]);
        let JobFailure::RankFailed { culprit, others } = &f else {
            panic!("{f:?}")
        };
        assert_eq!(culprit.name, "rank 6");
        assert_eq!(others.len(), 3);
        let quiet = f.report(false);
        assert!(
            quiet.starts_with("hcrun: rank 6 failed: exit status 1; stopped the job (3 other ranks failed in reaction; --verbose shows how)"),
            "{quiet}"
        );
        assert!(!quiet.contains("rank 7"), "{quiet}");
        let loud = f.report(true);
        assert!(
            loud.contains("\nhcrun: in reaction, rank 7 failed"),
            "{loud}"
        );
        // Equals: the first to exit.
        let f =
            JobFailure::from_exits(vec![exit("rank 3", Blame::Own), exit("rank 1", Blame::Own)]);
        let r = f.report(false);
        assert!(r.starts_with("hcrun: rank 3 failed"), "{r}");
        assert!(r.contains("\nhcrun: also rank 1 failed"), "{r}");
    }

    /// A node cut off from the cube is named before its neighbors, each of which names one
    /// of its dead links, whichever exited first.
    #[test]
    fn a_node_cut_off_is_named_before_its_neighbors() {
        let dead = |name: &str, text: &str| {
            let mut e = exit(name, Blame::Own);
            e.cause = Some(format!(
                "Error: link dim 0 between node 4 and node 5 is dead: {text}"
            ));
            e
        };
        let cut = hypercube::Error::LinkDead {
            node: 5,
            peer: 4,
            dim: Some(0),
            detail: "no acknowledgement; node 5 is cut off (its links in dims 1, 2 are silent too)"
                .into(),
        }
        .to_string();
        assert!(Error::is_cut_off_text(&cut), "{cut}");
        let f = JobFailure::from_exits(vec![
            exit("rank 1", Blame::Reaction),
            dead("rank 4", "no acknowledgement from node 5"),
            dead("rank 5", &cut),
        ]);
        let r = f.report(false);
        assert!(r.starts_with("hcrun: rank 5 failed"), "{r}");
        assert!(r.contains("\nhcrun: also rank 4 failed"), "{r}");
    }

    #[test]
    fn a_cycle_of_large_sends_is_named() {
        use hypercube::wire::control::large_send_text;
        let w = |r: u32, to: u32| format!("rank {r} waits for {}", large_send_text(to, 8 << 20));
        let two = JobFailure::Deadlock {
            secs: 3,
            waits: vec![w(0, 1), w(1, 0)],
        };
        let text = two.to_string();
        assert!(
            text.starts_with(
                "deadlock: ranks 0 and 1 each wait in a large send to the other (a cycle of \
                 rendezvous sends): use sendrecv or isend"
            ),
            "{text}"
        );
        let three = vec![
            w(2, 3),
            w(3, 1),
            w(1, 2),
            "rank 0 waits for a message of type 1 from any node".to_string(),
        ];
        assert_eq!(send_cycle(&three), Some(vec![1, 2, 3]));
        let text = JobFailure::Deadlock {
            secs: 3,
            waits: three,
        }
        .to_string();
        assert!(
            text.contains(
                "ranks 1, 2 and 3 each wait in a large send to the next (1 -> 2 -> 3 -> 1)"
            ),
            "{text}"
        );
        // A chain that ends in a receive is no cycle: the general advice.
        let chain = vec![
            w(0, 1),
            "rank 1 waits for a message of type 1 from node 2".to_string(),
        ];
        assert_eq!(send_cycle(&chain), None);
        let text = JobFailure::Deadlock {
            secs: 3,
            waits: chain,
        }
        .to_string();
        assert!(text.starts_with("deadlock: every running rank"), "{text}");
        // Several sends per rank; the cycle is found behind a dead end.
        let multi = vec![
            format!(
                "rank 4 waits for {} and {}",
                large_send_text(6, 1 << 20),
                large_send_text(5, 1 << 20)
            ),
            w(5, 4),
        ];
        assert_eq!(send_cycle(&multi), Some(vec![4, 5]));
    }

    #[test]
    fn plurals() {
        assert_eq!(count(1, "rank"), "1 rank");
        assert_eq!(count(2, "rank"), "2 ranks");
        let t = JobFailure::BootTimeout {
            ms: 100,
            missing: vec!["rank 3".into()],
        };
        assert!(
            t.to_string().contains("(1 process never joined: rank 3)"),
            "{t}"
        );
        let t = JobFailure::BootTimeout {
            ms: 100,
            missing: vec!["rank 3".into(), "the host".into()],
        };
        assert!(
            t.to_string()
                .contains("(2 processes never joined: rank 3, the host)"),
            "{t}"
        );
    }
}
