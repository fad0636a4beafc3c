//! The launcher's behaviour: examples, failures, foreign connections, config files.

use std::time::Duration;

use hypercube_tests::{alive, run_hcrun, run_job};

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
    let ps = out.pids();
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
    for p in out.pids() {
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

/// Every member of a job chooses the same algorithms although its ranks count different
/// cores (a launcher that does not set `HYPERCUBE_MODEL_CORES` alike, or hosts of
/// different sizes): the even ranks count 64 (the exchange barrier for 8 ranks), the odd
/// ones 1 (the tree). Each rank takes node 0's count; with its own, the odd ranks left the
/// barrier after their first message, long before the last rank had entered it. Node 0
/// sends its count with the link probe's result, also when the probe is skipped
/// (`HYPERCUBE_LINK_PROBE=0`).
#[test]
fn ranks_that_count_different_cores_still_choose_alike() {
    let prog = env!("CARGO_BIN_EXE_barrier_wait");
    let script = format!(
        "if [ $((HYPERCUBE_RANK % 2)) -eq 0 ]; then c=64; else c=1; fi; \
         HYPERCUBE_MODEL_CORES=$c exec {prog} 400"
    );
    for env in [&[][..], &[("HYPERCUBE_LINK_PROBE", "0")][..]] {
        run_hcrun(
            &["--dim", "3", "--timeout-s", "60"],
            &["sh", "-c", &script],
            env,
            Duration::from_secs(90),
        )
        .assert_ok()
        .assert_every_rank_passed(8, &["barrier"]);
    }
}
