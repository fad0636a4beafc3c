//! The lock every benchmark run of the checkout holds (`flock` on [`LOCK_PATH`]): the
//! comparison on the emulated network (`cubenet`) and the model fit (`cubenet-model`) take
//! it around each run, and the shell scripts and people take it with `flock(1)`, so that
//! no two benchmarks share the cores.

use anyhow::{Context, Result};

/// The lock's file.
pub const LOCK_PATH: &str = "/tmp/hc-bench.lock";

/// [`LOCK_PATH`], held (`flock(LOCK_EX)`) while the value lives (closing the file
/// releases it).
pub struct BenchLock {
    _file: std::fs::File,
}

impl BenchLock {
    /// Wait for the lock and take it. A wait interrupted by a signal asks `stop` whether to
    /// go on waiting (its error ends the wait).
    pub fn take(mut stop: impl FnMut() -> Result<()>) -> Result<BenchLock> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(LOCK_PATH)
            .with_context(|| format!("opening {LOCK_PATH}"))?;
        loop {
            // SAFETY: flock(2) on a file we hold open.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(BenchLock { _file: f });
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e).with_context(|| format!("locking {LOCK_PATH}"));
            }
            stop()?;
        }
    }
}
