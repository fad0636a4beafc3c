//! Run a command as the tests and the benchmarks run theirs: in a process group of its
//! own, stdin closed, stdout and stderr captured, with a deadline. At the deadline the
//! whole group is killed (a launcher's or `mpirun`'s processes included), and whatever is
//! left of the group when the command has ended is killed too, so a run leaves nothing
//! behind.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What a command printed and how it ended.
#[derive(Debug)]
pub struct Finished {
    /// How it ended (after SIGKILL if it outlived its deadline).
    pub status: ExitStatus,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// From its start to its end.
    pub elapsed: Duration,
    /// It outlived its deadline and was killed.
    pub timed_out: bool,
}

impl Finished {
    /// It exited successfully, in time.
    pub fn ok(&self) -> bool {
        self.status.success() && !self.timed_out
    }
}

/// Kills a process group (SIGKILL) when dropped — also when the caller panics half-way.
#[derive(Debug)]
pub struct GroupGuard {
    pid: i32,
}

impl GroupGuard {
    /// Guard the process group led by `pid`.
    pub fn new(pid: u32) -> GroupGuard {
        GroupGuard { pid: pid as i32 }
    }

    /// Kill the group now (it is killed again when dropped).
    pub fn kill(&self) {
        // SAFETY: kill(2) on the process group of a child we started; no memory is involved.
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Run `cmd` in a process group of its own with stdin closed and its output captured; the
/// whole group is killed when the command outlives `timeout` (then `timed_out` is set), and
/// when it has ended. An error means it could not be started or waited for.
pub fn run(cmd: &mut Command, timeout: Duration) -> std::io::Result<Finished> {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let group = GroupGuard::new(child.id());
    let t_out = capture(child.stdout.take());
    let t_err = capture(child.stderr.take());
    let mut timed_out = false;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() > timeout {
            timed_out = true;
            group.kill();
            break child.wait()?;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = start.elapsed();
    Ok(Finished {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        elapsed,
        timed_out,
    })
}

/// Read a stream to its end on a thread of its own.
fn capture(stream: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut r) = stream {
            let _ = r.read_to_string(&mut s);
        }
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_status_and_deadline() {
        let r = run(
            Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
            Duration::from_secs(20),
        )
        .unwrap();
        assert_eq!(
            (r.stdout.as_str(), r.stderr.as_str(), r.status.code()),
            ("out\n", "err\n", Some(3))
        );
        assert!(!r.ok() && !r.timed_out);

        // A child of the command holds the pipes too: killing the group ends both.
        let r = run(
            Command::new("sh").args(["-c", "sleep 30 & sleep 30"]),
            Duration::from_millis(200),
        )
        .unwrap();
        assert!(r.timed_out && !r.ok(), "{r:?}");
        assert!(r.elapsed < Duration::from_secs(20), "{r:?}");
    }
}
