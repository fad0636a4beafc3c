//! The fault suite: what the runtime promises under failures, checked on every CI run with
//! fresh random choices (the seed is printed; `HYPERCUBE_FAULT_SEED=N` replays a run).
//!
//! - a rank killed by SIGKILL at a random moment of a job with random traffic: the job stops
//!   within seconds, non-zero, and no process is left (`FAULT_KILL_RUNS` runs, default 10);
//! - random traffic (random types, sizes 0..256 KiB, destinations) arrives complete,
//!   uncorrupted and in order per source and type.
//!
//! `docs/reliability.md` has the table of faults and the figures of a full run.

use std::process::Command;
use std::time::{Duration, Instant};

use hypercube_tests::{alive, hcrun, rank_pid_line, run_hcrun, stderr_text, LiveJob, SplitMix64};

const INTEGRITY: &str = env!("CARGO_BIN_EXE_integrity");

fn seed() -> u64 {
    let s = std::env::var("HYPERCUBE_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        });
    eprintln!("fault suite seed: {s} (replay with HYPERCUBE_FAULT_SEED={s})");
    s
}

#[test]
fn random_traffic_arrives_whole_and_in_order() {
    let s = seed();
    for (d, msgs) in [(3u32, 500u32), (4, 250)] {
        let seed = SplitMix64::mix(s ^ u64::from(d));
        let out = run_hcrun(
            &["--dim", &d.to_string(), "--timeout-s", "120"],
            &[INTEGRITY, &seed.to_string(), &msgs.to_string()],
            &[],
            Duration::from_secs(150),
        );
        out.assert_ok();
        let n = u64::from(msgs) << d;
        let bytes = out.assert_integrity(1 << d, n, &format!("seed {seed}"));
        eprintln!(
            "integrity d={d}: {n} messages, {:.1} MB, {:.2} s",
            bytes as f64 / 1e6,
            out.elapsed.as_secs_f64()
        );
    }
}

/// Start hcrun with the integrity program.
fn start(d: u32, seed: u64) -> LiveJob {
    let mut cmd = Command::new(hcrun());
    cmd.args(["--dim", &d.to_string(), "--timeout-s", "60", "--"])
        .args([INTEGRITY, &seed.to_string(), "40", "20000"]);
    LiveJob::start(cmd)
}

#[test]
fn a_rank_killed_at_a_random_moment_stops_the_job() {
    let s = seed();
    let runs: u64 = std::env::var("FAULT_KILL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let d = 3u32;
    let mut stops = Vec::new();
    for run in 0..runs {
        let r = SplitMix64::mix(s.wrapping_add(run));
        let victim = (r % 8) as u32;
        let delay = Duration::from_millis(20 + (r >> 8) % 400);
        let mut job = start(d, r);
        let start = Instant::now();
        let mut lines = Vec::new();
        let mut pids = std::collections::HashMap::new();
        // Collect the ranks' pids (bounded), then wait for the random moment.
        while pids.len() < 8 && start.elapsed() < Duration::from_secs(20) {
            if let Ok(l) = job.lines.recv_timeout(Duration::from_millis(100)) {
                if let Some((rank, pid)) = rank_pid_line(&l) {
                    pids.insert(rank, pid);
                }
                lines.push(l);
            }
        }
        assert_eq!(
            pids.len(),
            8,
            "run {run} (seed {r}): ranks did not start: {lines:?}"
        );
        std::thread::sleep(delay.saturating_sub(start.elapsed().min(delay)));
        let killed_at = Instant::now();
        // SAFETY: kill(2) of a rank this test started.
        unsafe { libc::kill(pids[&victim] as i32, 9) };
        let status = job.wait_for_exit(Duration::from_secs(10)).unwrap_or_else(|| {
            panic!(
                "run {run} (seed {r}): the job did not stop within 10 s after rank {victim} was killed"
            )
        });
        let stop = killed_at.elapsed();
        lines.extend(job.drain(Duration::from_millis(200)));
        assert!(
            !status.success(),
            "run {run} (seed {r}): the job succeeded: {lines:?}"
        );
        let verdict = stderr_text(&lines);
        assert!(
            verdict.contains(&format!("rank {victim}")),
            "run {run} (seed {r}): hcrun does not name the killed rank {victim}:\n{verdict}"
        );
        std::thread::sleep(Duration::from_millis(100));
        for (rank, p) in &pids {
            assert!(
                !alive(*p),
                "run {run} (seed {r}): rank {rank} (pid {p}) was left behind"
            );
        }
        stops.push(stop);
    }
    stops.sort();
    eprintln!(
        "killed a random rank {} times: the job stopped in {:?} .. {:?} (median {:?})",
        stops.len(),
        stops.first().unwrap(),
        stops.last().unwrap(),
        stops[stops.len() / 2]
    );
}

const SPINNER: &str = env!("CARGO_BIN_EXE_spinner");

#[test]
fn a_rank_spinning_on_iprobe_is_part_of_a_deadlock() {
    let out = run_hcrun(
        &["--dim", "2", "--timeout-s", "60"],
        &[SPINNER, "spin"],
        &[],
        Duration::from_secs(90),
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(out.stderr.contains("deadlock"), "{}", out.stderr);
    assert!(
        out.stderr.contains("rank 0") && out.stderr.contains("polling with iprobe"),
        "the report must name the spinning rank: {}",
        out.stderr
    );
    assert!(
        out.elapsed < Duration::from_secs(20),
        "took {:?}",
        out.elapsed
    );
}

#[test]
fn a_rank_that_computes_between_iprobes_is_not_a_deadlock() {
    let out = run_hcrun(
        &["--dim", "2", "--timeout-s", "60"],
        &[SPINNER, "compute", "5000"],
        &[],
        Duration::from_secs(90),
    );
    out.assert_ok();
    assert!(!out.stderr.contains("deadlock"), "{}", out.stderr);
}
