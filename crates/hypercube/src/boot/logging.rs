//! `RUST_LOG` tracing for node programs, with the rank on every line: installed when the
//! process joins its job and knows its rank.

use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

struct RankTime {
    rank: u32,
    start: std::time::Instant,
}

impl FormatTime for RankTime {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        write!(
            w,
            "{:>10.6}s rank={}",
            self.start.elapsed().as_secs_f64(),
            self.rank
        )
    }
}

/// Standard error that swallows write failures: when the launcher is gone, stderr is a
/// broken pipe, and a failed log line must never panic a thread (tracing-subscriber
/// reports write errors with `eprintln!`, which panics on a broken pipe).
struct QuietStderr;

impl std::io::Write for QuietStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

use crate::wire::control::ENV_COLOR;

/// Whether to colour, from `HYPERCUBE_COLOR`'s value; `None` for a value that is none of
/// the three (then `auto`).
fn ansi(value: Option<&str>, stderr_is_terminal: bool, no_color: bool) -> Option<bool> {
    match value.map(str::trim) {
        Some("always") => Some(true),
        Some("never") => Some(false),
        None | Some("auto") | Some("") => Some(stderr_is_terminal && !no_color),
        Some(_) => None,
    }
}

/// Install a stderr subscriber filtered by `RUST_LOG` (default `warn`) unless the program
/// installed its own; colour as `HYPERCUBE_COLOR` says.
pub(crate) fn init(rank: u32) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let value = std::env::var(ENV_COLOR).ok();
    let terminal = std::io::stderr().is_terminal();
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let choice = ansi(value.as_deref(), terminal, no_color);
    let installed = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| QuietStderr)
        .with_ansi(choice.unwrap_or(terminal && !no_color))
        .with_timer(RankTime {
            rank,
            start: std::time::Instant::now(),
        })
        .try_init()
        .is_ok();
    if let (true, None, Some(v)) = (installed, choice, value) {
        tracing::warn!("{ENV_COLOR}={v:?} is not auto, always or never; using auto");
    }
}

#[cfg(test)]
mod tests {
    use super::ansi;

    #[test]
    fn colour_follows_the_launcher_then_the_terminal() {
        assert_eq!(ansi(Some("always"), false, true), Some(true));
        assert_eq!(ansi(Some("never"), true, false), Some(false));
        assert_eq!(ansi(None, true, false), Some(true));
        assert_eq!(ansi(Some("auto"), true, true), Some(false));
        assert_eq!(ansi(None, false, false), Some(false));
        assert_eq!(ansi(Some("sometimes"), true, false), None);
    }
}
