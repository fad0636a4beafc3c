//! A node program whose PMI-1 process manager misbehaves — answers garbage, hangs up, stays
//! silent, sends an endless line — or whose environment is wrong, fails at once with a
//! clear error naming the cause: never a hang, never a panic. The "manager" here is the
//! other end of a socketpair this test holds; the real engines are in `cluster_*.rs`.

use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

use hypercube_tests::{run_command, JobOutput};

const PROG: &str = env!("CARGO_BIN_EXE_slow_root");

/// Start the node program as rank 0 of `size` with `PMI_FD` on a socketpair; `manager`
/// plays the process manager on the other end.
fn with_manager(size: u32, manager: impl FnOnce(UnixStream) + Send + 'static) -> JobOutput {
    with_manager_computing(size, 0, manager)
}

/// As [`with_manager`], rank 0 then computing for `ms` milliseconds (`slow_root MS`).
fn with_manager_computing(
    size: u32,
    ms: u64,
    manager: impl FnOnce(UnixStream) + Send + 'static,
) -> JobOutput {
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(PROG);
    cmd.arg(ms.to_string())
        .env("PMI_FD", fd.to_string())
        .env("PMI_RANK", "0")
        .env("PMI_SIZE", size.to_string())
        .env("HYPERCUBE_BOOT_TIMEOUT_MS", "1500");
    // SAFETY: between fork and exec only fcntl(2) runs, on a descriptor we own.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let server = std::thread::spawn(move || manager(ours));
    let out = run_command(cmd, Duration::from_secs(20));
    drop(theirs);
    let _ = server.join();
    out
}

fn assert_fails(out: &JobOutput, words: &[&str]) {
    assert!(!out.status.success(), "the program succeeded: {out:?}");
    assert!(
        !out.stderr.contains("panicked"),
        "the program panicked: {}",
        out.stderr
    );
    for w in words {
        assert!(
            out.stderr.contains(w),
            "stderr does not say {w:?}:\n{}",
            out.stderr
        );
    }
    assert!(
        out.elapsed < Duration::from_secs(10),
        "took {:?}",
        out.elapsed
    );
}

fn read_line(r: &mut BufReader<&UnixStream>) -> String {
    let mut l = String::new();
    let _ = r.read_line(&mut l);
    l
}

#[test]
fn a_manager_that_answers_garbage() {
    let out = with_manager(2, |s| {
        let mut r = BufReader::new(&s);
        read_line(&mut r);
        let _ = (&s).write_all(b"hello there, who are you?\n");
        std::thread::sleep(Duration::from_secs(2));
    });
    assert_fails(&out, &["process manager", "garbage"]);
}

#[test]
fn a_manager_that_answers_the_wrong_command() {
    let out = with_manager(2, |s| {
        let mut r = BufReader::new(&s);
        read_line(&mut r);
        let _ = (&s).write_all(b"cmd=barrier_out\n");
        std::thread::sleep(Duration::from_secs(2));
    });
    assert_fails(&out, &["process manager", "cmd=response_to_init"]);
}

#[test]
fn a_manager_that_hangs_up() {
    let out = with_manager(2, |s| {
        let mut r = BufReader::new(&s);
        read_line(&mut r);
        drop(r);
        drop(s);
    });
    assert_fails(&out, &["process manager", "closed the connection"]);
}

#[test]
fn a_silent_manager_is_a_timeout() {
    let out = with_manager(2, |s| {
        std::thread::sleep(Duration::from_secs(4));
        drop(s);
    });
    assert_fails(&out, &["timed out", "process manager"]);
}

#[test]
fn an_endless_line_is_refused() {
    let out = with_manager(2, |s| {
        let mut r = BufReader::new(&s);
        read_line(&mut r);
        let _ = (&s).write_all(&[b'x'; 4096]);
        std::thread::sleep(Duration::from_secs(2));
    });
    assert_fails(&out, &["longer than 1024 bytes"]);
}

#[test]
fn a_non_power_of_two_size_aborts_through_pmi() {
    let (tx, rx) = std::sync::mpsc::channel();
    let out = with_manager(6, move |s| {
        // Answer like Hydra until the program gives up; record what it sent.
        let mut r = BufReader::new(&s);
        let mut seen = Vec::new();
        for _ in 0..10 {
            let l = read_line(&mut r);
            if l.is_empty() {
                break;
            }
            let reply: &[u8] = if l.starts_with("cmd=init ") {
                b"cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
            } else if l.starts_with("cmd=get_maxes") {
                b"cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"
            } else if l.starts_with("cmd=get_my_kvsname") {
                b"cmd=my_kvsname kvsname=kvs_1\n"
            } else {
                b""
            };
            seen.push(l);
            let _ = (&s).write_all(reply);
        }
        let _ = tx.send(seen);
    });
    assert_fails(&out, &["6 processes", "power of two", "4 or 8"]);
    let seen = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the manager's log");
    assert!(
        seen.iter().any(|l| l.starts_with("cmd=abort exitcode=1")),
        "no PMI abort was sent: {seen:?}"
    );
}

#[test]
fn a_pmi_fd_that_is_not_a_socket() {
    let mut cmd = Command::new(PROG);
    cmd.env("PMI_FD", "97")
        .env("PMI_RANK", "0")
        .env("PMI_SIZE", "2");
    let out = run_command(cmd, Duration::from_secs(20));
    assert_fails(&out, &["PMI_FD=97 is not an open socket"]);
}

#[test]
fn srun_without_mpi_pmi2_says_so() {
    let mut cmd = Command::new(PROG);
    cmd.env("SLURM_PROCID", "0")
        .env("SLURM_STEP_ID", "0")
        .env("SLURM_STEP_NUM_TASKS", "4")
        .env_remove("PMI_FD")
        .env_remove("PMI_PORT");
    let out = run_command(cmd, Duration::from_secs(20));
    assert_fails(&out, &["srun", "--mpi=pmi2"]);
}

#[test]
fn a_manager_that_goes_away_during_the_job_ends_the_rank() {
    // A well-behaved manager for a job of one rank (a key-value store, two barriers), which
    // then disappears while the rank computes for 20 s: the rank must stop at once.
    let out = with_manager_computing(1, 20_000, |s| {
        let mut r = BufReader::new(&s);
        let mut kvs = std::collections::HashMap::new();
        let mut barriers = 0;
        while barriers < 2 {
            let l = read_line(&mut r);
            if l.is_empty() {
                return;
            }
            let f: std::collections::HashMap<&str, &str> = l
                .split_whitespace()
                .filter_map(|w| w.split_once('='))
                .collect();
            let reply = match f.get("cmd").copied() {
                Some("init") => "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0".into(),
                Some("get_maxes") => {
                    "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024".into()
                }
                Some("get_my_kvsname") => "cmd=my_kvsname kvsname=kvs_1".into(),
                Some("put") => {
                    kvs.insert(f["key"].to_string(), f["value"].to_string());
                    "cmd=put_result rc=0".into()
                }
                Some("get") => match (f["key"], kvs.get(f["key"])) {
                    ("PMI_process_mapping", _) => {
                        "cmd=get_result rc=0 value=(vector,(0,1,1))".into()
                    }
                    (_, Some(v)) => format!("cmd=get_result rc=0 value={v}"),
                    (_, None) => "cmd=get_result rc=-1".into(),
                },
                Some("barrier_in") => {
                    barriers += 1;
                    "cmd=barrier_out".into()
                }
                _ => return,
            };
            let _ = (&s).write_all(format!("{reply}\n").as_bytes());
        }
        // The job is up; the manager goes away.
        std::thread::sleep(Duration::from_millis(300));
    });
    assert_fails(&out, &["lost the process manager"]);
}
