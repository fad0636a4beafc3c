//! How a job is stopped, and that it leaves no process behind: its own timeout, Ctrl-C, a
//! launcher killed while the job runs or while it is being wired, and a rank killed while
//! the launcher is stopped (the rank killed is blamed, not the neighbours that failed in
//! reaction).

use std::time::Duration;

use hypercube_tests::{alive, run_hcrun};

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
    for p in out.pids() {
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
