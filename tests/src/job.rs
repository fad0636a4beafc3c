//! Jobs run through the launcher (`hcrun`): to their end with a deadline ([`run_hcrun`],
//! [`run_job`]), or in the background, line by line ([`LiveJob`]); and what they printed.

use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::cargo::hcrun;
use crate::process::Guard;

/// What a job printed and how it ended.
#[derive(Debug)]
pub struct JobOutput {
    /// hcrun's exit status.
    pub status: ExitStatus,
    /// Everything on stdout (lines prefixed by rank).
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
    /// Wall time of the whole job.
    pub elapsed: Duration,
}

impl JobOutput {
    /// The process IDs the ranks printed (`PID n` anywhere in a line of stdout: the `fail`
    /// program prints its own), to check afterwards that none was left behind.
    pub fn pids(&self) -> Vec<u32> {
        self.stdout
            .lines()
            .filter_map(|l| l.split("PID ").nth(1)?.trim().parse().ok())
            .collect()
    }

    /// Lines of stdout printed by `rank` (prefix stripped).
    pub fn rank_lines(&self, rank: u32) -> Vec<&str> {
        let p = format!("[{rank}] ");
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(p.as_str()))
            .collect()
    }

    /// Check the `integrity` program's `OK integrity <messages> <bytes>` lines: every one of
    /// `ranks` ranks printed one, and together they received `messages`; panics (with the
    /// output and `what`) otherwise. Returns the bytes received.
    pub fn assert_integrity(&self, ranks: u32, messages: u64, what: &str) -> u64 {
        let (mut n, mut bytes) = (0, 0);
        for r in 0..ranks {
            let line = self
                .rank_lines(r)
                .into_iter()
                .find(|l| l.starts_with("OK integrity"))
                .unwrap_or_else(|| panic!("{what}: rank {r} did not finish:\n{self:?}"));
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(2)
                .filter_map(|x| x.parse().ok())
                .collect();
            n += f.first().copied().unwrap_or(0);
            bytes += f.get(1).copied().unwrap_or(0);
        }
        assert_eq!(n, messages, "{what}: messages received");
        bytes
    }

    /// Panic unless every one of the `ranks` printed `OK <check>` for every check.
    pub fn assert_every_rank_passed(&self, ranks: u32, checks: &[&str]) -> &Self {
        for r in 0..ranks {
            let lines = self.rank_lines(r);
            for c in checks {
                assert!(
                    lines.contains(&format!("OK {c}").as_str()),
                    "rank {r} did not pass {c}:\n{}\n{}",
                    self.stdout,
                    self.stderr
                );
            }
        }
        self
    }

    /// Panic with the whole output unless the job succeeded.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.status.success(),
            "job failed: {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Run `hcrun <hcrun_args> -- <program> <args>` with extra environment; kill it after
/// `timeout`. Returns what it printed.
pub fn run_hcrun(
    hcrun_args: &[&str],
    program: &[&str],
    env: &[(&str, &str)],
    timeout: Duration,
) -> JobOutput {
    let mut cmd = Command::new(hcrun());
    cmd.args(hcrun_args);
    if !program.is_empty() {
        cmd.arg("--").args(program);
    }
    cmd.envs(env.iter().copied());
    run_command(cmd, timeout)
}

/// Run a command in its own process group with stdin closed and its output captured; the
/// whole group is killed when it ends, fails or outlives `timeout` (then this panics with
/// what it printed).
pub fn run_command(mut cmd: Command, timeout: Duration) -> JobOutput {
    let what = format!("{:?}", cmd.get_program());
    let r = hypercube_procgroup::run(&mut cmd, timeout)
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    if r.timed_out {
        panic!(
            "{what} did not finish within {timeout:?} ({:?})\n--- stdout\n{}\n--- stderr\n{}",
            r.status, r.stdout, r.stderr
        );
    }
    JobOutput {
        status: r.status,
        stdout: r.stdout,
        stderr: r.stderr,
        elapsed: r.elapsed,
    }
}

/// Run a node program (a path, usually `env!("CARGO_BIN_EXE_<name>")`) on a `dim`-cube.
pub fn run_job(dim: u32, program: &str, args: &[&str]) -> JobOutput {
    let d = dim.to_string();
    let mut prog = vec![program];
    prog.extend_from_slice(args);
    run_hcrun(
        &["--dim", &d, "--timeout-s", "120"],
        &prog,
        &[],
        Duration::from_secs(150),
    )
}

/// A job started in the background (`hcrun` in a process group of its own, killed with it
/// when this is dropped), its output arriving line by line: stdout lines as printed, stderr
/// lines prefixed `stderr: `. For tests that act while the job runs (kill a rank, watch for
/// a line).
pub struct LiveJob {
    /// The launcher's process.
    pub child: std::process::Child,
    /// The output lines, as they come.
    pub lines: std::sync::mpsc::Receiver<String>,
    _guard: Guard,
}

impl LiveJob {
    /// Start `cmd` (stdin closed, output piped, its own process group).
    pub fn start(mut cmd: Command) -> LiveJob {
        use std::io::{BufRead, BufReader};
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {:?}: {e}", cmd.get_program()));
        let guard = Guard::new(child.id());
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx2.send(format!("stderr: {l}"));
            }
        });
        LiveJob {
            child,
            lines: rx,
            _guard: guard,
        }
    }

    /// Wait (bounded by `limit`) for the job to end; `None` if it is still running then.
    pub fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("waiting for the job") {
                return Some(st);
            }
            if start.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The lines that come within `quiet` of each other from now on (the rest of the
    /// output of a job that has ended).
    pub fn drain(&self, quiet: Duration) -> Vec<String> {
        let mut v = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(quiet) {
            v.push(l);
        }
        v
    }
}

/// The stderr lines among a [`LiveJob`]'s `lines` (still prefixed `stderr: `), joined by
/// newlines: what the launcher said, e.g. its verdict on a failed job.
pub fn stderr_text(lines: &[String]) -> String {
    lines
        .iter()
        .filter(|l| l.starts_with("stderr:"))
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rank and pid of a line `[R] PID N` that a test program printed through `hcrun`.
pub fn rank_pid_line(line: &str) -> Option<(u32, u32)> {
    let (r, p) = line.strip_prefix('[')?.split_once("] PID ")?;
    Some((r.parse().ok()?, p.trim().parse().ok()?))
}
