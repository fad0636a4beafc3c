//! Why a job failed, and which rank to blame for it.
//!
//! When one rank dies, its neighbors fail too (`PeerGone`), and the rest stop when hcrun
//! tells them to (`Shutdown`); their exits may well be reaped before the one that caused
//! them. So hcrun collects the exits of a short while before it judges, reads each failed
//! rank's last error line, and blames by cause: killed by a signal, then failed on its own
//! (a panic, an error that is not a reaction), then gave up on a finished rank
//! (`PeerFinished`), then the reactions; among equals, the first to exit.

use std::fmt;

use hypercube::Error;

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
        let Some(i) = (0..failed.len()).min_by_key(|&i| (failed[i].blame, i)) else {
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

/// A cycle of ranks each blocked in a large (rendezvous) send to the next, found in the
/// deadlock report's "rank N waits for ..." lines (the ranks word such a wait with
/// `hypercube::wire::control::large_send_text`); the ranks in cycle order, starting with
/// the smallest, or `None`.
pub fn send_cycle(waits: &[String]) -> Option<Vec<u32>> {
    use std::collections::BTreeMap;
    let edges: BTreeMap<u32, Vec<u32>> = waits
        .iter()
        .filter_map(|w| {
            let rest = w.strip_prefix("rank ")?;
            let (rank, what) = rest.split_once(" waits for ")?;
            let dests = hypercube::wire::control::large_send_dests(what);
            (!dests.is_empty()).then(|| Some((rank.parse().ok()?, dests)))?
        })
        .collect();
    // Depth-first from each rank in order; a rank met again on the current path closes a
    // cycle. Bounded: each rank is entered at most once per start.
    for &start in edges.keys() {
        let mut path = vec![start];
        let mut next = vec![0usize];
        while let (Some(&at), Some(i)) = (path.last(), next.last_mut()) {
            let Some(&to) = edges.get(&at).and_then(|d| d.get(*i)) else {
                path.pop();
                next.pop();
                continue;
            };
            *i += 1;
            if let Some(k) = path.iter().position(|&r| r == to) {
                let mut cycle = path[k..].to_vec();
                let m = (0..cycle.len()).min_by_key(|&j| cycle[j]).unwrap_or(0);
                cycle.rotate_left(m);
                return Some(cycle);
            }
            if edges.contains_key(&to) && path.len() < edges.len() {
                path.push(to);
                next.push(0);
            }
        }
    }
    None
}

/// The longest cause text kept (characters).
const MAX_CAUSE: usize = 400;

/// Follows a rank's stderr, line by line, and keeps its last error line: an error returned
/// from `main` (`Error: ...`, with anyhow's "Caused by:" list joined to it), a panic's
/// location and message, an ERROR event of the node's log, the notice a node prints when it
/// aborts or is stopped. Backtraces, notes and other log levels are skipped; a line that
/// is none of these is kept as a fallback.
#[derive(Debug, Default)]
pub struct ErrorTail {
    error: Option<String>,
    other: Option<String>,
    /// A panic's "panicked at FILE:LINE:COL:" whose message is on the next line.
    panic_at: Option<String>,
    /// Inside the "Caused by:" list after an `Error: ` line.
    causes: bool,
}

impl ErrorTail {
    /// Take in one line of the rank's stderr.
    pub fn feed(&mut self, raw: &str) {
        let line = strip_ansi(raw);
        let t = line.trim_end();
        if let Some(at) = self.panic_at.take() {
            self.error = Some(clip(format!("{at} {}", t.trim())));
            return;
        }
        if t.trim().is_empty() {
            return;
        }
        if let Some(i) = t.find("panicked at ") {
            let what = &t[i..];
            self.causes = false;
            if what.ends_with(':') {
                self.panic_at = Some(what.to_string());
            } else {
                self.error = Some(clip(what.to_string()));
            }
            return;
        }
        if let Some(msg) = t.strip_prefix("Error: ") {
            self.error = Some(clip(msg.to_string()));
            self.causes = true;
            return;
        }
        if self.causes {
            if t == "Caused by:" {
                return;
            }
            if t.starts_with(' ') {
                let c = t.trim_start();
                let c = match c.split_once(": ") {
                    Some((n, rest)) if n.chars().all(|ch| ch.is_ascii_digit()) => rest,
                    _ => c,
                };
                if let Some(e) = self.error.as_mut() {
                    e.push_str(": ");
                    e.push_str(c);
                    *e = clip(std::mem::take(e));
                }
                return;
            }
            self.causes = false;
        }
        if let Some((level, msg)) = log_event(t) {
            if level == "ERROR" {
                self.error = Some(clip(msg.to_string()));
            }
            return;
        }
        if is_noise(t) {
            return;
        }
        if t.starts_with("node ")
            && (t.contains(": the job is shutting down: ") || t.contains(" aborts the job: "))
        {
            self.error = Some(clip(t.to_string()));
            return;
        }
        self.other = Some(clip(t.to_string()));
    }

    /// The rank's last error line (or, if it printed none, its last other line).
    pub fn cause(&self) -> Option<String> {
        self.error
            .clone()
            .or_else(|| self.panic_at.clone())
            .or_else(|| self.other.clone())
    }
}

fn clip(mut s: String) -> String {
    if let Some((i, _)) = s.char_indices().nth(MAX_CAUSE) {
        s.truncate(i);
        s.push_str(" ...");
    }
    s
}

/// A line of the node's log (`logging.rs`): "  0.59s rank=7 LEVEL target: message".
fn log_event(t: &str) -> Option<(&str, &str)> {
    let mut w = t.split_whitespace();
    let secs = w.next()?.strip_suffix('s')?;
    secs.parse::<f64>().ok()?;
    w.next()?.strip_prefix("rank=")?;
    let level = w.next()?;
    if !["TRACE", "DEBUG", "INFO", "WARN", "ERROR"].contains(&level) {
        return None;
    }
    let rest = t[t.find(level)? + level.len()..].trim_start();
    // Drop the target ("hypercube::transport::tcp: ").
    let msg = match rest.split_once(": ") {
        Some((target, msg)) if !target.contains(' ') => msg,
        _ => rest,
    };
    Some((level, msg))
}

/// Lines that never say why: backtraces and the runtime's notes.
fn is_noise(t: &str) -> bool {
    let s = t.trim_start();
    s.starts_with("note: ")
        || s.eq_ignore_ascii_case("stack backtrace:")
        || (t.starts_with(' ') && s.starts_with("at "))
        || (t.starts_with(' ')
            && s.split_once(": ")
                .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit())))
        || (t.starts_with(' ') && s.chars().next().is_some_and(|c| c.is_ascii_digit()))
}

/// The line without ANSI escape sequences (ESC '[' ... final byte).
pub fn strip_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\x1b') {
        return s.into();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cause_of(text: &str) -> Option<String> {
        let mut t = ErrorTail::default();
        for l in text.lines() {
            t.feed(l);
        }
        t.cause()
    }

    #[test]
    fn an_error_returned_from_main_with_a_backtrace() {
        let text = "\x1b[2m  0.59s rank=7\x1b[0m \x1b[31mERROR\x1b[0m \x1b[2mhypercube::node\x1b[0m\x1b[2m:\x1b[0m finalize failed: peer node 6 is gone (eof); the job cannot continue\n\
                    Error: peer node 6 is gone (eof); the job cannot continue\n\
                    \n\
                    Stack backtrace:\n   0: anyhow::error::from\n             at /x/anyhow/src/backtrace.rs:10:14\n  19: _start\n";
        let c = cause_of(text).unwrap();
        assert_eq!(c, "peer node 6 is gone (eof); the job cannot continue");
        assert_eq!(Blame::of(false, Some(&c)), Blame::Reaction);
    }

    #[test]
    fn an_error_with_causes() {
        let text = "Error: sending the result\n\nCaused by:\n    0: node 2 said no\n    1: rank 1 gives up\n";
        assert_eq!(
            cause_of(text).unwrap(),
            "sending the result: node 2 said no: rank 1 gives up"
        );
    }

    #[test]
    fn a_panic() {
        let text = "thread 'main' (123) panicked at tests/src/bin/fail.rs:15:22:\nrank 5 panics on purpose\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        let c = cause_of(text).unwrap();
        assert_eq!(
            c,
            "panicked at tests/src/bin/fail.rs:15:22: rank 5 panics on purpose"
        );
        assert_eq!(Blame::of(false, Some(&c)), Blame::Own);
        let unwrap = "thread 'main' panicked at src/main.rs:9:30:\ncalled `Result::unwrap()` on an `Err` value: PeerGone { peer: 6, detail: \"eof\" }\n";
        assert_eq!(
            Blame::of(false, cause_of(unwrap).as_deref()),
            Blame::Reaction
        );
    }

    #[test]
    fn the_stop_notice_and_plain_lines() {
        assert_eq!(
            Blame::of(
                false,
                cause_of("node 3: the job is shutting down: rank 6 failed (killed by signal 9)")
                    .as_deref()
            ),
            Blame::Reaction
        );
        assert_eq!(cause_of("something broke\n").unwrap(), "something broke");
        assert_eq!(cause_of(""), None);
        // Warnings are no cause.
        assert_eq!(
            cause_of("  0.1s rank=1  WARN hypercube: rejected a link"),
            None
        );
        assert_eq!(
            Blame::of(true, Some("peer node 2 is gone (x)")),
            Blame::Signal
        );
        assert_eq!(
            Blame::of(
                false,
                Some("node 1 has finished (it left its program or called finalize) while ...")
            ),
            Blame::Finished
        );
    }

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
