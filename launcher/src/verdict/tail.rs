//! A rank's last error line, read from its stderr as it goes by ([`ErrorTail`]).

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

/// A line of the node's log (the runtime's `boot/logging.rs`):
/// "  0.59s rank=7 LEVEL target: message".
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
    use crate::verdict::Blame;

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
}
