//! `hypercube-bench cubenet` stopped half-way (SIGTERM, as `kill` or a CI timeout sends it):
//! what it measured is kept in `OUT/cubenet-stopped/`, the last complete run's page and
//! results in `OUT/` stay as they were, and nothing of the runs is left in the host.
//! Needs root (the comparison builds network namespaces in this host); skipped with a loud
//! line otherwise.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hypercube_tests::emulation::{emulated, host_network};
use hypercube_tests::{alive, Guard, TempDir};

#[test]
fn a_stopped_comparison_keeps_what_it_measured_beside_the_last_complete_page() {
    let Some(_one) = emulated("a_stopped_comparison_keeps_what_it_measured") else {
        return;
    };
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED a_stopped_comparison_keeps_what_it_measured: the comparison needs root");
        return;
    }
    let before = host_network();
    let out = TempDir::new("cubenet-stop");
    let page = "# the last complete run's page\n";
    std::fs::write(out.path().join("cubenet.md"), page).unwrap();
    std::fs::create_dir_all(out.path().join("cubenet")).unwrap();
    std::fs::write(out.path().join("cubenet/results.csv"), "kept\n").unwrap();
    let bench = hypercube_tests::cargo_bin("hypercube-bench", "hypercube-bench");
    let name = format!("st{}", std::process::id() % 100_000);
    let mut child = Command::new(&bench)
        .args(["cubenet", "--no-mpi", "--dims", "2", "--rates", "1gbit"])
        .args([
            "--benches",
            "bcast,allreduce,allgather,alltoall",
            "--sizes",
            "8,1024,65536",
        ])
        .args(["--reps", "3", "--budget-s", "0.2", "--name", &name])
        .arg("--out")
        .arg(out.path())
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _guard = Guard::new(child.id());
    // Stop it once a broadcast of ours has been measured (a line after each run), at most
    // two minutes on.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.starts_with("cubenet-bench: hypercube d=2 1gbit bcast") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let measured = rx.recv_timeout(Duration::from_secs(120)).is_ok();
    // SAFETY: kill(2) on the process this test started; no memory is involved.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let log = if status.is_some() {
        reader.join().unwrap_or_default()
    } else {
        String::new()
    };
    assert!(measured, "no run was measured within 2 minutes:\n{log}");
    let status = status.unwrap_or_else(|| panic!("still running 2 minutes after SIGTERM"));
    assert!(
        !status.success(),
        "a stopped run exits with an error:\n{log}"
    );
    assert!(!alive(child.id()));
    assert!(log.contains("stopped by a signal"), "{log}");
    assert_eq!(
        std::fs::read_to_string(out.path().join("cubenet.md")).unwrap(),
        page,
        "the last complete run's page was replaced:\n{log}"
    );
    assert_eq!(
        std::fs::read_to_string(out.path().join("cubenet/results.csv")).unwrap(),
        "kept\n",
        "the last complete run's results were replaced:\n{log}"
    );
    let stopped = out.path().join("cubenet-stopped");
    let csv = std::fs::read_to_string(stopped.join("cubenet/results.csv"))
        .unwrap_or_else(|e| panic!("no results of the stopped run ({e}):\n{log}"));
    assert!(
        csv.lines().skip(1).any(|l| l.contains("bcast")),
        "the stopped run's results lack its first measured run:\n{csv}"
    );
    let stopped_page = std::fs::read_to_string(stopped.join("cubenet.md")).unwrap();
    assert!(
        stopped_page.contains("stopped at d=2 1gbit"),
        "{stopped_page}"
    );
    assert!(
        log.contains("cubenet-stopped"),
        "the stop names where its results are:\n{log}"
    );
    assert_eq!(
        host_network(),
        before,
        "the stopped run left something in the host"
    );
}
