//! One run at a time: under the benchmarks' lock, with a deadline, retried (bounded) when
//! it fails; Ctrl-C stops between runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::compare::run_cmd;
use crate::lock::BenchLock;
use crate::report::size_text;
use crate::Bench;

use super::network::{Network, Tools};
use super::plan::osu_iters_arg;
use super::rows::{parse_output, Measured, OMPI};

pub(super) static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Catch SIGINT, SIGTERM and SIGHUP: the run in progress ends (runs are in process groups
/// of their own), then the network is removed and the program stops.
pub(super) fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only stores to an atomic (async-signal-safe).
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

pub(super) fn check_stop() -> Result<()> {
    if STOP.load(Ordering::SeqCst) {
        bail!("stopped by a signal");
    }
    Ok(())
}

/// The state of a measurement run.
pub(super) struct Runner {
    pub(super) tools: Tools,
    pub(super) mpi_bin: Option<PathBuf>,
    pub(super) retries: u32,
    pub(super) timeout: Duration,
    pub(super) burst: Option<String>,
    /// `hcrun --bind-to core` for our runs.
    pub(super) bind_cores: bool,
    pub(super) notes: Vec<String>,
    /// Retries per (d, rate, impl).
    pub(super) retry_count: BTreeMap<(u32, String, String), u32>,
    pub(super) runs: u32,
    /// Time spent waiting for [`crate::lock::LOCK_PATH`] (other benchmarks of the checkout).
    pub(super) lock_wait: Duration,
}

/// One run to make.
pub(super) struct Job<'a> {
    pub(super) imp: &'static str,
    pub(super) dim: u32,
    pub(super) rate: &'a str,
    pub(super) bench: Bench,
    pub(super) size: u64,
    pub(super) iters: u64,
    pub(super) warmup: u64,
}

impl Runner {
    pub(super) fn ours_cmd(&self, j: &Job<'_>) -> Command {
        let mut c = Command::new(&self.tools.hcrun);
        c.args([
            "--dim".to_string(),
            j.dim.to_string(),
            "--link-rate".into(),
            j.rate.to_string(),
        ]);
        if let Some(b) = &self.burst {
            c.args(["--link-burst", b]);
        }
        if self.bind_cores {
            c.args(["--bind-to", "core"]);
        }
        c.args([
            "--no-prefix".to_string(),
            "--timeout-s".into(),
            self.timeout.as_secs().max(1).to_string(),
            "--".into(),
        ])
        .arg(&self.tools.osu)
        .args(bench_args(j));
        c
    }

    pub(super) fn mpi_cmd(&self, net: &Network, bin: &Path, j: &Job<'_>) -> Command {
        let np = if j.bench.is_p2p() { 2 } else { net.nodes };
        let mut c = net.mpirun(np);
        c.arg(bin).args(bench_args(j));
        c
    }

    /// Run a job (with retries); its one measured row, or `None` after the last attempt
    /// failed (noted).
    pub(super) fn run(&mut self, j: &Job<'_>, net: Option<&Network>) -> Result<Option<Measured>> {
        let label = format!(
            "{} d={} {} {} {}",
            j.imp,
            j.dim,
            j.rate,
            j.bench,
            size_text(j.size)
        );
        for attempt in 0..=self.retries {
            check_stop()?;
            let mut cmd = match (j.imp, net, &self.mpi_bin) {
                (OMPI, Some(net), Some(bin)) => self.mpi_cmd(net, bin, j),
                (OMPI, _, _) => bail!("Open MPI run without its network"),
                _ => self.ours_cmd(j),
            };
            let r = {
                let asked = Instant::now();
                let _lock = BenchLock::take(check_stop)?;
                self.lock_wait += asked.elapsed();
                run_cmd(&mut cmd, self.timeout + Duration::from_secs(10))?
            };
            self.runs += 1;
            let got = if r.ok() {
                parse_output(&r.stdout)
                    .into_iter()
                    .find(|m| m.size == j.size || j.bench == Bench::Barrier)
            } else {
                None
            };
            eprintln!(
                "cubenet-bench: {label:<40} -i {:<4} {:>6.1} s  {}",
                j.iters,
                r.elapsed.as_secs_f64(),
                match &got {
                    Some(m) => {
                        let lp = m
                            .loop_us
                            .map_or(String::new(), |l| format!(", loop {l:.2}"));
                        format!("{:.2} (slowest {:.2}{lp})", m.value, m.slowest())
                    }
                    None => "failed".into(),
                }
            );
            if got.is_some() {
                return Ok(got);
            }
            let why = if r.timed_out {
                format!("timed out after {:.0} s", r.elapsed.as_secs_f64())
            } else {
                failure_line(&r.stderr, &r.stdout)
            };
            if attempt < self.retries {
                *self
                    .retry_count
                    .entry((j.dim, j.rate.to_string(), j.imp.to_string()))
                    .or_default() += 1;
                self.notes.push(format!(
                    "retry: {label}, attempt {} failed: {why}",
                    attempt + 1
                ));
                eprintln!(
                    "cubenet-bench: {label}: attempt {} failed ({why}); again",
                    attempt + 1
                );
                if let Some(net) = net.filter(|_| j.imp == OMPI) {
                    net.rebuild()?;
                }
            } else {
                self.notes.push(format!(
                    "failed: {label}, all {} attempts; the last: {why}",
                    self.retries + 1
                ));
            }
        }
        Ok(None)
    }
}

/// The arguments of `osu` / `osu_mpi` for a job: one size, its iterations and warm-up,
/// per-rank times for collectives.
pub(super) fn bench_args(j: &Job<'_>) -> Vec<String> {
    let mut v = vec![
        j.bench.name().to_string(),
        "-m".into(),
        format!("{0}:{0}", j.size),
        "-i".into(),
        osu_iters_arg(j.iters, j.size).to_string(),
        "-x".into(),
        j.warmup.to_string(),
    ];
    if !j.bench.is_p2p() {
        v.push("--per-rank".into());
    }
    v
}

/// The most telling line of a failed run: a rank's or Open MPI's own reason if given.
pub(super) fn failure_line(stderr: &str, stdout: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("---"))
        .collect();
    lines
        .iter()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("firewall")
                || l.contains("aborts the job")
                || l.contains("panicked")
                || l.contains("error")
                || l.contains("file exists")
        })
        .or_else(|| lines.last())
        .map_or_else(|| "no output".to_string(), |l| l.to_string())
}
