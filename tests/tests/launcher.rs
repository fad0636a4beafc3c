//! The launcher's behaviour: examples, failures, foreign connections, config files.

use std::time::Duration;

use hypercube_tests::{alive, run_hcrun, run_job};

fn pids(out: &hypercube_tests::JobOutput) -> Vec<u32> {
    out.stdout
        .lines()
        .filter_map(|l| l.split("PID ").nth(1)?.trim().parse().ok())
        .collect()
}

fn failing_rank_stops_job(how: &str, cause: &str) {
    let out = run_hcrun(
        &["--dim", "3"],
        &[env!("CARGO_BIN_EXE_fail"), "5", how],
        &[],
        Duration::from_secs(60),
    );
    assert!(!out.status.success(), "the job should fail");
    assert!(
        out.stderr.contains("rank 5 failed") && out.stderr.contains(cause),
        "hcrun must name the rank and the cause:\n{}",
        out.stderr
    );
    // The rank fails 200 ms after start; everything must be over well within 2 s after.
    assert!(
        out.elapsed < Duration::from_secs(5),
        "took {:?}",
        out.elapsed
    );
    let ps = pids(&out);
    assert_eq!(ps.len(), 8, "every rank prints its pid:\n{}", out.stdout);
    std::thread::sleep(Duration::from_millis(100));
    for p in ps {
        assert!(!alive(p), "process {p} was left behind");
    }
}

#[test]
fn failing_rank_exit_code() {
    failing_rank_stops_job("exit", "exit status 3");
}

#[test]
fn failing_rank_panic() {
    failing_rank_stops_job("panic", "panic");
}

#[test]
fn failing_rank_signal() {
    failing_rank_stops_job("abort", "SIGABRT");
}

#[test]
fn foreign_connection_rejected_job_completes() {
    let out = run_job(2, env!("CARGO_BIN_EXE_foreign"), &[]);
    out.assert_ok();
    assert!(out
        .rank_lines(0)
        .contains(&"OK foreign connections rejected"));
    for r in 0..4 {
        assert!(
            out.rank_lines(r).contains(&"OK job carried on"),
            "{}",
            out.stdout
        );
    }
    assert!(
        out.stderr.contains("rejected a link connection"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_flood_of_strangers_on_a_link_listener_is_one_line() {
    let out = run_job(2, env!("CARGO_BIN_EXE_foreign"), &["200"]);
    out.assert_ok();
    let lines = out
        .stderr
        .lines()
        .filter(|l| l.contains("rejected a link connection"))
        .count();
    assert!(
        (1..=2).contains(&lines),
        "202 strangers gave {lines} warning lines:\n{}",
        out.stderr
    );
    assert!(out.stderr.contains("counted, not listed"), "{}", out.stderr);
}

#[test]
fn example_hello_through_cargo() {
    let out = run_hcrun(
        &["--dim", "2", "--example", "hello"],
        &[],
        &[],
        Duration::from_secs(300),
    );
    out.assert_ok();
    for r in 0..4 {
        assert!(out
            .rank_lines(r)
            .iter()
            .any(|l| l.starts_with(&format!("hello from node {r} of 4"))));
    }
    assert!(out
        .rank_lines(3)
        .contains(&"node 3 got \"hi\" from node 0 (2 hops away)"));
}

#[test]
fn config_file_and_no_prefix() {
    let dir = std::env::temp_dir().join(format!("hc-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("job.toml");
    std::fs::write(
        &cfg,
        format!(
            "dim = 2\nprogram = {:?}\nargs = []\nprefix = false\n",
            env!("CARGO_BIN_EXE_foreign")
        ),
    )
    .unwrap();
    let out = run_hcrun(
        &["--config", cfg.to_str().unwrap()],
        &[],
        &[],
        Duration::from_secs(60),
    );
    out.assert_ok();
    assert_eq!(
        out.stdout
            .lines()
            .filter(|l| *l == "OK job carried on")
            .count(),
        4,
        "{}",
        out.stdout
    );
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "dim = \"three\"\n").unwrap();
    let out = run_hcrun(
        &["--config", bad.to_str().unwrap()],
        &[],
        &[],
        Duration::from_secs(60),
    );
    assert!(
        !out.status.success() && out.stderr.contains("config"),
        "{}",
        out.stderr
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn job_timeout_stops_everything() {
    let out = run_hcrun(
        &["--dim", "1", "--timeout-s", "1"],
        &[env!("CARGO_BIN_EXE_fail"), "9", "never"],
        &[],
        Duration::from_secs(30),
    );
    assert!(!out.status.success());
    assert!(out.stderr.contains("timeout"), "{}", out.stderr);
    for p in pids(&out) {
        assert!(!alive(p), "process {p} was left behind");
    }
}

#[test]
fn killed_launcher_leaves_no_ranks() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(hypercube_tests::hcrun())
        .args(["--dim", "2", "--", env!("CARGO_BIN_EXE_fail"), "9", "never"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut ps = Vec::new();
    let mut line = String::new();
    while ps.len() < 4 && r.read_line(&mut line).unwrap_or(0) > 0 {
        if let Some(p) = line.split("PID ").nth(1) {
            ps.push(p.trim().parse::<u32>().unwrap());
        }
        line.clear();
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while ps.iter().any(|p| alive(*p)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for p in ps {
        assert!(!alive(p), "rank process {p} outlived its launcher");
    }
}

#[test]
fn rank_returning_an_error_does_not_hang_the_job() {
    let out = run_hcrun(
        &["--dim", "2"],
        &[env!("CARGO_BIN_EXE_early_exit")],
        &[],
        Duration::from_secs(60),
    );
    assert!(!out.status.success(), "the job should fail");
    assert!(
        out.stderr.contains("rank 1 gives up on purpose"),
        "{}",
        out.stderr
    );
    assert!(
        out.rank_lines(0)
            .iter()
            .any(|l| l.starts_with("OK receive failed: node 1 has finished")),
        "{}",
        out.stdout
    );
    assert!(
        out.rank_lines(2)
            .iter()
            .any(|l| l.starts_with("OK any-type receive failed")),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.rank_lines(3)
            .iter()
            .any(|l| l.starts_with("OK any-source receive failed")),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    // Rank 0 failed too (PeerFinished, waiting for rank 1), but rank 1 is the cause.
    assert!(
        out.stderr
            .contains("hcrun: rank 1 failed: exit status 1: rank 1 gives up on purpose"),
        "{}",
        out.stderr
    );
}

#[test]
fn deadlock_is_detected_and_named() {
    // Every rank waits for a message of type 1 that nobody sends.
    let out = run_hcrun(
        &["--dim", "2"],
        &[env!("CARGO_BIN_EXE_fail"), "9", "never"],
        &[],
        Duration::from_secs(60),
    );
    assert!(!out.status.success(), "a deadlocked job must fail");
    assert!(out.stderr.contains("deadlock"), "{}", out.stderr);
    // The report is printed once, by hcrun — not once more by every rank it stops.
    assert_eq!(
        out.stderr
            .matches("rank 3 waits for a message of type 1 from any node")
            .count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.elapsed < Duration::from_secs(20),
        "took {:?}",
        out.elapsed
    );
    for p in pids(&out) {
        assert!(!alive(p), "process {p} was left behind");
    }
}

#[test]
fn a_long_computation_is_not_a_deadlock() {
    // Rank 0 computes for 4 s while the others wait for it: no deadlock report.
    let out = run_hcrun(
        &["--dim", "2"],
        &[env!("CARGO_BIN_EXE_slow_root"), "4000"],
        &[],
        Duration::from_secs(60),
    );
    out.assert_ok();
    assert!(!out.stderr.contains("deadlock"), "{}", out.stderr);
}

#[test]
fn a_computation_beside_a_waiting_thread_is_not_a_deadlock() {
    // Every rank waits on one thread for 4 s while another computes (then sends what is
    // awaited): hcrun stopped this as a deadlock after 3 s before the waits looked at the
    // process's CPU time.
    let out = run_hcrun(
        &["--dim", "1"],
        &[env!("CARGO_BIN_EXE_slow_root"), "4000", "threads"],
        &[],
        Duration::from_secs(60),
    );
    out.assert_ok();
    assert!(!out.stderr.contains("deadlock"), "{}", out.stderr);
}

#[test]
fn ctrl_c_stops_the_job() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(hypercube_tests::hcrun())
        .args(["--dim", "2", "--", env!("CARGO_BIN_EXE_slow_root"), "30000"])
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = hypercube_tests::Guard::new(child.id());
    // Wait until the job is wired (the ranks run `slow_root`, which prints nothing before
    // it is done), then interrupt hcrun as a terminal's Ctrl-C would.
    std::thread::sleep(Duration::from_millis(1500));
    // The `kill` command delivers SIGINT to hcrun.
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let start = std::time::Instant::now();
    let status = child.wait().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(status.code(), Some(130), "{status:?}");
    let mut err = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .for_each(|l| err.push_str(&l));
    assert!(err.contains("interrupted"), "{err}");
}

#[test]
fn launcher_killed_during_bootstrap_leaves_no_ranks() {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    use std::time::Instant;
    let dir = hypercube_tests::TempDir::new("pdeath");
    let mut ranks = hypercube_tests::KillList::default();
    let mut child = Command::new(hypercube_tests::hcrun())
        .args([
            "--dim",
            "4",
            "--",
            env!("CARGO_BIN_EXE_fail"),
            "99",
            "never",
        ])
        .env("HC_TEST_PID_DIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let _hcrun = hypercube_tests::Guard::new(child.id());
    // ~10 ms in, and at least one rank spawned: the launcher is still starting ranks or
    // waiting for their hellos when it dies.
    std::thread::sleep(Duration::from_millis(10));
    let start = Instant::now();
    while ranks.pids().is_empty() && start.elapsed() < Duration::from_secs(10) {
        ranks.add(hypercube_tests::children_of(child.id()));
        std::thread::sleep(Duration::from_millis(1));
    }
    ranks.add(hypercube_tests::children_of(child.id()));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !ranks.pids().is_empty(),
        "hcrun started no rank within 10 s"
    );
    // A rank forked just before the kill writes its pid file once it runs (if it runs).
    let killed = Instant::now();
    loop {
        ranks.add(dir.pids());
        let left = ranks.alive();
        if left.is_empty() && killed.elapsed() >= Duration::from_millis(500) {
            break;
        }
        assert!(
            killed.elapsed() < Duration::from_secs(3),
            "rank processes {left:?} (of {:?}) outlived their launcher by 3 s",
            ranks.pids()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn unknown_options_are_rejected_not_run() {
    let dir = hypercube_tests::TempDir::new("badflag");
    let env = [("HC_TEST_PID_DIR", dir.path().to_str().unwrap())];
    for (args, bad) in [
        (&["--frobnicate", "--dim", "2"][..], "--frobnicate"),
        (&["--dimm", "2"][..], "--dimm"),
    ] {
        let out = run_hcrun(
            args,
            &[env!("CARGO_BIN_EXE_fail"), "99", "never"],
            &env,
            Duration::from_secs(30),
        );
        assert!(!out.status.success(), "{args:?} must fail");
        assert!(
            out.stderr.contains(&format!("unexpected argument '{bad}'")),
            "{args:?}: the error must name the bad option:\n{}",
            out.stderr
        );
        assert!(
            !out.stderr.contains("starting rank"),
            "{args:?}: nothing may be run:\n{}",
            out.stderr
        );
        assert_eq!(
            dir.pids(),
            Vec::<u32>::new(),
            "{args:?}: a rank was started"
        );
    }
    // A program given as a positional (no `--`) still takes the hyphenated arguments after
    // it as its own.
    let out = run_hcrun(
        &[
            "--dim",
            "1",
            env!("CARGO_BIN_EXE_foreign"),
            "--not-for-hcrun",
        ],
        &[],
        &[],
        Duration::from_secs(60),
    );
    out.assert_ok();
}

#[test]
fn a_program_that_never_joins_is_reported() {
    let out = run_hcrun(
        &["--dim", "2"],
        &["/bin/true"],
        &[],
        Duration::from_secs(30),
    );
    assert!(!out.status.success(), "the job must fail:\n{}", out.stderr);
    assert!(
        out.stderr
            .contains("no rank joined the job (did the program call hypercube::init?)"),
        "{}",
        out.stderr
    );
}

/// Start `fail <victim> hang` on a 3-cube, wait until every rank runs, then SIGKILL rank
/// `victim` while hcrun is stopped (SIGSTOP, as a launcher on a loaded machine that does
/// not get the CPU for a while): by the time hcrun runs again, the victim's neighbors have
/// failed with `PeerGone` too, so several exits wait to be reaped at once. Returns hcrun's
/// exit status and stderr.
fn kill_rank_behind_a_stopped_launcher(
    victim: u32,
    verbose: bool,
) -> (std::process::ExitStatus, String) {
    use std::io::{BufRead, BufReader, Read};
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut child = Command::new(hypercube_tests::hcrun())
        .args(["--dim", "3", "--timeout-s", "60"])
        .args(verbose.then_some("--verbose"))
        .arg("--")
        .args([env!("CARGO_BIN_EXE_fail"), &victim.to_string(), "hang"])
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let _hcrun = hypercube_tests::Guard::new(child.id());
    let mut ranks = hypercube_tests::KillList::default();
    let mut err = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut pid_of = std::collections::BTreeMap::new();
    let mut line = String::new();
    while pid_of.len() < 8 && out.read_line(&mut line).unwrap_or(0) > 0 {
        // "[r] PID p"
        let mut w = line.split_whitespace();
        if let (Some(r), Some("PID"), Some(p)) = (w.next(), w.next(), w.next()) {
            let r: u32 = r.trim_matches(|c| c == '[' || c == ']').parse().unwrap();
            pid_of.insert(r, p.parse::<i32>().unwrap());
        }
        line.clear();
    }
    ranks.add(pid_of.values().map(|p| *p as u32));
    assert_eq!(pid_of.len(), 8, "every rank prints its pid");
    let out = std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let hcrun = child.id() as i32;
    // SAFETY: kill(2) on the hcrun this test started and on one of its ranks.
    unsafe {
        libc_kill(hcrun, SIGSTOP);
        libc_kill(pid_of[&victim], 9);
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: as above.
    unsafe {
        libc_kill(hcrun, SIGCONT);
    }
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "hcrun did not stop the job"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let _ = out.join();
    (status, err.join().unwrap_or_default())
}

const SIGSTOP: i32 = 19;
const SIGCONT: i32 = 18;

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn the_killed_rank_is_blamed_not_its_victims() {
    for i in 0..10 {
        // The last run also asks for the reactions.
        let verbose = i == 9;
        let (status, err) = kill_rank_behind_a_stopped_launcher(6, verbose);
        assert_eq!(status.code(), Some(1), "run {i}: {status:?}\n{err}");
        let verdict = err.lines().find(|l| l.starts_with("hcrun: ")).unwrap_or("");
        assert!(
            verdict.starts_with("hcrun: rank 6 failed: killed by signal 9 (SIGKILL)"),
            "run {i}: the verdict must name rank 6 and its signal: {verdict:?}\n{err}"
        );
        // Rank 7, a neighbor of rank 6, fails in reaction: shown only with --verbose.
        assert_eq!(
            err.contains("hcrun: in reaction, rank 7 failed: exit status 1: "),
            verbose,
            "run {i}:\n{err}"
        );
    }
}

#[test]
fn a_dimension_out_of_range_names_the_limit() {
    for bad in ["-1", "17", "three"] {
        let out = run_hcrun(
            &["--dim", bad],
            &["/bin/true"],
            &[],
            Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(2), "--dim {bad}: {}", out.stderr);
        assert!(
            out.stderr.contains("--dim must be in 0..=16"),
            "--dim {bad}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("4294967295"), "{}", out.stderr);
    }
    let dir = hypercube_tests::TempDir::new("dimcfg");
    let cfg = dir.path().join("job.toml");
    std::fs::write(&cfg, "dim = -1\nprogram = \"/bin/true\"\n").unwrap();
    let out = run_hcrun(
        &["--config", cfg.to_str().unwrap()],
        &[],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("dim must be in 0..=16"),
        "{}",
        out.stderr
    );
}

#[test]
fn colour_only_on_a_terminal_or_when_asked() {
    let env = [("RUST_LOG", "hypercube=debug"), ("HCRUN_LOG", "debug")];
    let prog = [env!("CARGO_BIN_EXE_slow_root"), "0"];
    let has_ansi = |s: &str| s.contains("\x1b[");
    // stderr is a pipe here: auto means no colour, from hcrun or the ranks.
    for flags in [&["--dim", "1"][..], &["--dim", "1", "--color=never"][..]] {
        let out = run_hcrun(flags, &prog, &env, Duration::from_secs(60));
        out.assert_ok();
        assert!(out.stderr.contains("is up"), "{flags:?}: {}", out.stderr);
        assert!(!has_ansi(&out.stderr), "{flags:?}: {:?}", out.stderr);
    }
    let out = run_hcrun(
        &["--dim", "1", "--color", "always"],
        &prog,
        &env,
        Duration::from_secs(60),
    );
    out.assert_ok();
    let rank_line = out
        .stderr
        .lines()
        .find(|l| l.contains("is up"))
        .unwrap_or("");
    assert!(has_ansi(rank_line), "{:?}", out.stderr);
    let own_line = out
        .stderr
        .lines()
        .find(|l| l.contains("the cube is wired"))
        .unwrap_or("");
    assert!(has_ansi(own_line), "{:?}", out.stderr);
}

#[test]
fn a_flood_of_strangers_is_one_line_and_a_count() {
    let out = run_hcrun(
        &["--dim", "1"],
        &[env!("CARGO_BIN_EXE_control_flood"), "200"],
        &[],
        Duration::from_secs(60),
    );
    out.assert_ok();
    assert!(out.rank_lines(0).contains(&"OK 200 connections rejected"));
    assert_eq!(
        out.stderr.matches("rejected a control connection").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("rejected 200 control connections from strangers in the last "),
        "{}",
        out.stderr
    );
}
