//! `RUST_LOG` tracing for node programs, with the rank on every line.

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

/// Install a stderr subscriber filtered by `RUST_LOG` (default `warn`) unless the program
/// installed its own.
pub(crate) fn init(rank: u32) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| QuietStderr)
        .with_timer(RankTime {
            rank,
            start: std::time::Instant::now(),
        })
        .try_init();
}
