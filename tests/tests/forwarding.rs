//! Forwarding in both regimes (`HYPERCUBE_FORWARDING`, Grama §2.5.1): routed messages
//! arrive whole, uncorrupted and in order whether intermediate nodes pass frames on as their
//! bytes arrive (cut-through) or receive them whole first (store-and-forward); the suites
//! pass in both; a forwarding node killed while a frame passes through stops the job.

use std::process::Command;
use std::time::{Duration, Instant};

use hypercube_tests::{
    alive, hcrun, rank_pid_line, run_hcrun, stderr_text, KillList, LiveJob, SplitMix64,
};

const INTEGRITY: &str = env!("CARGO_BIN_EXE_integrity");
const RELAY: &str = env!("CARGO_BIN_EXE_relay");

/// The environment of a regime: cut-through from 4 KiB on (so that most routed frames are
/// passed on in pieces), or store-and-forward; 1 MiB data frames, so that a large message
/// is several frames, each passed on by itself.
fn regime(name: &'static str) -> [(&'static str, &'static str); 3] {
    [
        ("HYPERCUBE_FORWARDING", name),
        ("HYPERCUBE_CUT_THROUGH_MIN", "4096"),
        ("HYPERCUBE_CHUNK", "1048576"),
    ]
}

const REGIMES: [&str; 2] = ["cut-through", "store-and-forward"];

/// Many concurrent routed messages up to 4 MiB, every one to a node at least two links
/// away (so every one crosses intermediate nodes, in every direction), checked end to end
/// with checksums and sequence numbers per source and type.
#[test]
fn routed_large_messages_arrive_whole_and_in_order_in_both_regimes() {
    let seed = std::env::var("HYPERCUBE_FAULT_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| SplitMix64::mix(std::process::id() as u64));
    eprintln!("seed {seed} (replay with HYPERCUBE_FAULT_SEED={seed})");
    for name in REGIMES {
        for (d, msgs) in [(2u32, 40u32), (3, 24)] {
            let out = run_hcrun(
                &["--dim", &d.to_string(), "--timeout-s", "120"],
                &[
                    INTEGRITY,
                    &seed.to_string(),
                    &msgs.to_string(),
                    "0",
                    "4194304",
                    "far",
                ],
                &regime(name),
                Duration::from_secs(150),
            );
            out.assert_ok();
            let n = u64::from(msgs) << d;
            out.assert_integrity(1 << d, n, &format!("{name} d={d}"));
            eprintln!(
                "{name} d={d}: {n} routed messages in {:.2} s",
                out.elapsed.as_secs_f64()
            );
        }
    }
}

/// The collectives suite on a 3-cube, and the point-to-point suite, in the regime the
/// default (cut-through from 64 KiB) does not exercise: store-and-forward, and cut-through
/// of every routed frame that does not arrive in one read.
#[test]
fn suites_pass_in_both_regimes() {
    let checks = hypercube_tests::collective_checks();
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    for (name, min) in [("store-and-forward", "65536"), ("cut-through", "1")] {
        let env = [
            ("HYPERCUBE_FORWARDING", name),
            ("HYPERCUBE_CUT_THROUGH_MIN", min),
        ];
        run_hcrun(
            &["--dim", "3", "--timeout-s", "120"],
            &[env!("CARGO_BIN_EXE_coll_suite")],
            &env,
            Duration::from_secs(150),
        )
        .assert_ok()
        .assert_every_rank_passed(8, &checks);
        run_hcrun(
            &["--dim", "3", "--timeout-s", "120"],
            &[env!("CARGO_BIN_EXE_p2p")],
            &env,
            Duration::from_secs(150),
        )
        .assert_ok();
    }
}

/// A bad regime name stops the job at start-up with the variable, the value and the
/// accepted names.
#[test]
fn a_bad_regime_name_is_refused() {
    let out = run_hcrun(
        &["--dim", "1", "--timeout-s", "30"],
        &[RELAY],
        &[("HYPERCUBE_FORWARDING", "wormhole")],
        Duration::from_secs(60),
    );
    assert!(!out.status.success(), "{out:?}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("HYPERCUBE_FORWARDING") && all.contains("store-and-forward"),
        "{all}"
    );
}

/// Rank 1 forwards a stream of 32 MiB messages from rank 0 to rank 3; it is killed (SIGKILL)
/// after the second message arrived, so with high probability in the middle of a frame
/// passing through it, in both regimes. The job must stop within seconds, non-zero, name
/// rank 1, and leave no process behind — never hang (rank 3 sees its link to rank 1 end
/// inside a frame).
#[test]
fn a_forwarding_rank_killed_mid_frame_stops_the_job() {
    for name in REGIMES {
        let mut cmd = Command::new(hcrun());
        cmd.args(["--dim", "2", "--timeout-s", "60", "--", RELAY])
            .envs(regime(name));
        let mut job = LiveJob::start(cmd);
        let start = Instant::now();
        let mut lines = Vec::new();
        let mut pids = std::collections::HashMap::new();
        let mut kills = KillList::default();
        let mut flowing = false;
        while !(flowing && pids.len() == 4) && start.elapsed() < Duration::from_secs(60) {
            if let Ok(l) = job.lines.recv_timeout(Duration::from_millis(100)) {
                if let Some((rank, pid)) = rank_pid_line(&l) {
                    pids.insert(rank, pid);
                    kills.add([pid]);
                }
                flowing |= l.starts_with("[3] got 2");
                lines.push(l);
            }
        }
        assert!(
            flowing && pids.len() == 4,
            "{name}: the stream did not start: {lines:?}"
        );
        let killed_at = Instant::now();
        // SAFETY: kill(2) of a rank this test started.
        unsafe { libc::kill(pids[&1] as i32, 9) };
        let status = job
            .wait_for_exit(Duration::from_secs(15))
            .unwrap_or_else(|| {
                panic!(
                    "{name}: the job did not stop within 15 s after the forwarding rank was killed"
                )
            });
        let stop = killed_at.elapsed();
        lines.extend(job.drain(Duration::from_millis(200)));
        assert!(!status.success(), "{name}: the job succeeded: {lines:?}");
        let verdict = stderr_text(&lines);
        assert!(
            verdict.contains("rank 1"),
            "{name}: the verdict does not name rank 1:\n{verdict}"
        );
        std::thread::sleep(Duration::from_millis(100));
        for (rank, p) in &pids {
            assert!(!alive(*p), "{name}: rank {rank} (pid {p}) was left behind");
        }
        eprintln!("{name}: the job stopped {stop:?} after the forwarding rank was killed");
    }
}
