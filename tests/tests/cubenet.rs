//! The emulated interconnect (`hcrun --link-rate`, docs/cubenet.md): jobs on a 3-cube of
//! network namespaces whose links are shaped to 100 Mbit/s. Both correctness suites pass
//! there (and the typed suite on a 2-cube at 1 Gbit/s); the shaping is real (a 1 MiB
//! message takes at least 80% of size/rate) and cut-through forwarding makes 3 hops cost what one does; nothing of a job is left in the
//! host afterwards, also when `hcrun` is killed with SIGKILL. (Bad rates are refused:
//! `cubenet_args.rs`; dead links: `cubenet_links.rs`.)
//!
//! Needs root or unprivileged user namespaces; where neither is possible the tests are
//! skipped with a loud line.

use std::process::Command;
use std::time::{Duration, Instant};

use hypercube_tests::emulation::{
    emulated, emulation_possible, host_network, netns_of, processes_in, serial, RATE,
    RATE_BYTES_PER_SEC,
};
use hypercube_tests::{
    alive, collective_checks, hcrun, rank_pid_line, run_command, run_hcrun, KillList, LiveJob,
    IPSC_CHECKS,
};

#[test]
fn both_suites_pass_on_the_emulated_3_cube() {
    let Some(_one) = emulated("both_suites_pass_on_the_emulated_3_cube") else {
        return;
    };
    let before = host_network();
    let coll = collective_checks();
    let coll: Vec<&str> = coll.iter().map(String::as_str).collect();
    for (prog, checks) in [
        (env!("CARGO_BIN_EXE_coll_suite"), &coll[..]),
        (env!("CARGO_BIN_EXE_ipsc_suite"), IPSC_CHECKS),
    ] {
        let out = run_hcrun(
            &["--dim", "3", "--link-rate", RATE, "--timeout-s", "120"],
            &[prog],
            &[],
            Duration::from_secs(150),
        );
        out.assert_ok().assert_every_rank_passed(8, checks);
    }
    assert_eq!(
        host_network(),
        before,
        "the jobs left something in the host"
    );
}

/// The typed suite on the emulated 2-cube at 1 Gbit/s: its large messages come over shaped
/// links in many pieces and are read into the callers' memory as they arrive
/// (`node/landing.rs`: allgather, all-to-all, broadcast and `recv_slice_into` in place).
#[test]
fn the_typed_suite_passes_on_the_emulated_2_cube() {
    let Some(_one) = emulated("the_typed_suite_passes_on_the_emulated_2_cube") else {
        return;
    };
    run_hcrun(
        &["--dim", "2", "--link-rate", "1gbit", "--timeout-s", "120"],
        &[env!("CARGO_BIN_EXE_typed_suite")],
        &[],
        Duration::from_secs(150),
    )
    .assert_ok()
    .assert_every_rank_passed(4, &hypercube_tests::suites::typed::CHECK_NAMES);
}

/// One-way time of a 1 MiB message from rank 0 to `peer` (µs), as `osu latency` reports it.
fn one_mib_latency(peer: u32, env: &[(&str, &str)]) -> f64 {
    let p = peer.to_string();
    let osu = hypercube_tests::cargo_bin("hypercube-bench", "osu");
    let out = run_hcrun(
        &["--dim", "3", "--link-rate", RATE, "--timeout-s", "120"],
        &[
            osu.to_str().expect("a UTF-8 path"),
            "latency",
            "-m",
            "1048576:1048576",
            "-i",
            "10",
            "-x",
            "2",
            "--peer",
            &p,
        ],
        env,
        Duration::from_secs(150),
    );
    out.assert_ok();
    out.rank_lines(0)
        .iter()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == "1048576").then(|| w.next()?.parse::<f64>().ok())?
        })
        .unwrap_or_else(|| panic!("no 1 MiB line in\n{}", out.stdout))
}

#[test]
fn shaping_is_real_and_cut_through_crosses_three_hops_at_the_cost_of_one() {
    let Some(_one) =
        emulated("shaping_is_real_and_cut_through_crosses_three_hops_at_the_cost_of_one")
    else {
        return;
    };
    let floor_us = 1048576.0 / RATE_BYTES_PER_SEC * 1e6;
    let one_hop = one_mib_latency(1, &[]);
    let three_hops = one_mib_latency(7, &[]);
    assert!(
        one_hop >= 0.8 * floor_us,
        "1 MiB over one 100 Mbit/s link took {one_hop:.0} us, less than 80% of size/rate \
         ({floor_us:.0} us): the links are not shaped"
    );
    assert!(
        three_hops <= 1.1 * one_hop,
        "1 MiB over 3 hops took {three_hops:.0} us against {one_hop:.0} us over one: \
         cut-through should pipeline the hops"
    );
    // Store-and-forward pays each hop in full: three hops take about three times one.
    let sf = one_mib_latency(7, &[("HYPERCUBE_FORWARDING", "store-and-forward")]);
    assert!(
        sf >= 2.0 * one_hop,
        "store-and-forward over 3 hops took {sf:.0} us against {one_hop:.0} us for one hop"
    );
}

#[test]
fn nothing_is_left_after_hcrun_is_killed_and_the_next_job_runs() {
    let Some(_one) = emulated("nothing_is_left_after_hcrun_is_killed_and_the_next_job_runs") else {
        return;
    };
    let before = host_network();
    // Rank 0 computes for two minutes; the others wait for it.
    let mut cmd = Command::new(hcrun());
    cmd.args(["--dim", "2", "--link-rate", RATE, "--"]).args([
        env!("CARGO_BIN_EXE_fail"),
        "0",
        "hang",
    ]);
    let mut job = LiveJob::start(cmd);
    let mut ranks = KillList::default();
    let mut pids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids.len() < 4 && Instant::now() < deadline {
        if let Ok(l) = job.lines.recv_timeout(Duration::from_millis(200)) {
            if let Some((_, pid)) = rank_pid_line(&l) {
                pids.push(pid);
                ranks.add([pid]);
            }
        }
    }
    assert_eq!(pids.len(), 4, "the ranks did not all start");
    // Each rank is in a namespace of its own, none of them the host's.
    let host_ns = netns_of(std::process::id()).expect("our own namespace");
    let namespaces: Vec<String> = pids.iter().filter_map(|p| netns_of(*p)).collect();
    assert_eq!(namespaces.len(), 4);
    for (i, ns) in namespaces.iter().enumerate() {
        assert_ne!(ns, &host_ns, "rank {i} runs in the host's namespace");
        assert!(!namespaces[..i].contains(ns), "two ranks share a namespace");
    }
    let hub = netns_of(job.child.id()).expect("hcrun's namespace");
    assert_ne!(
        hub, host_ns,
        "hcrun should run in the job's own hub namespace"
    );

    job.child.kill().expect("SIGKILL to hcrun");
    let _ = job.child.wait();
    // The ranks die with their launcher, and with the last of them every namespace of
    // the job: nothing holds them any more.
    let gone = Instant::now() + Duration::from_secs(10);
    while !ranks.alive().is_empty() && Instant::now() < gone {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ranks.alive(), Vec::<u32>::new(), "ranks outlived hcrun");
    for ns in namespaces.iter().chain([&hub]) {
        assert_eq!(
            processes_in(ns),
            Vec::<u32>::new(),
            "processes are left in the job's namespace {ns}"
        );
    }
    assert_eq!(
        host_network(),
        before,
        "hcrun's SIGKILL left something in the host"
    );

    // The next job builds its network afresh and runs.
    let out = run_hcrun(
        &["--dim", "2", "--link-rate", RATE],
        &[env!("CARGO_BIN_EXE_coll_suite")],
        &[],
        Duration::from_secs(120),
    );
    out.assert_ok();
    assert_eq!(host_network(), before);
    for p in ranks.pids() {
        assert!(!alive(p));
    }
}

#[test]
fn a_failing_rank_is_reported_as_without_emulation() {
    let Some(_one) = emulated("a_failing_rank_is_reported_as_without_emulation") else {
        return;
    };
    let out = run_hcrun(
        &["--dim", "2", "--link-rate", RATE],
        &[env!("CARGO_BIN_EXE_fail"), "9", "never"],
        &[],
        Duration::from_secs(60),
    );
    assert!(!out.status.success());
    assert!(
        out.stderr
            .contains("rank 3 waits for a message of type 1 from any node"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("deadlock"), "{}", out.stderr);
}

#[test]
fn without_root_a_user_namespace_builds_the_network() {
    if !emulation_possible("without_root_a_user_namespace_builds_the_network") {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        // Not root: every other test of this file already ran that way.
        return;
    }
    // As root, run the job as `nobody`, if this kernel lets that user make namespaces.
    let ok = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["unshare", "--user", "--map-root-user", "--net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "\n!!!!! SKIPPED `without_root_a_user_namespace_builds_the_network`: this kernel \
             refuses unprivileged user namespaces (hcrun then says so and stops) !!!!!\n"
        );
        return;
    }
    let _one = serial();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(hcrun())
        .args(["--dim", "2", "--link-rate", "1gbit", "--"])
        .arg(env!("CARGO_BIN_EXE_coll_suite"));
    let out = run_command(cmd, Duration::from_secs(120));
    let coll = collective_checks();
    let coll: Vec<&str> = coll.iter().map(String::as_str).collect();
    out.assert_ok().assert_every_rank_passed(4, &coll);
}

#[test]
fn the_config_file_keys_and_a_trace_work_on_the_emulated_network() {
    let Some(_one) = emulated("the_config_file_keys_and_a_trace_work_on_the_emulated_network")
    else {
        return;
    };
    let dir = hypercube_tests::TempDir::new("cubenet-config");
    let config = dir.path().join("job.toml");
    std::fs::write(
        &config,
        "dim = 2\nlink_rate = \"1gbit\"\nlink_burst = \"128kb\"\n",
    )
    .expect("writing the config file");
    let trace = dir.path().join("t.json");
    let out = run_hcrun(
        &[
            "--config",
            config.to_str().expect("a UTF-8 path"),
            "--trace",
            trace.to_str().expect("a UTF-8 path"),
        ],
        &[env!("CARGO_BIN_EXE_coll_suite")],
        &[],
        Duration::from_secs(120),
    );
    let coll = collective_checks();
    let coll: Vec<&str> = coll.iter().map(String::as_str).collect();
    out.assert_ok().assert_every_rank_passed(4, &coll);
    assert!(
        out.stderr.contains("trace written to") && out.stderr.contains("(4 ranks"),
        "{}",
        out.stderr
    );
    let text = std::fs::read_to_string(&trace).expect("the merged trace");
    assert!(text.contains("traceEvents"), "not a trace-event file");
}

/// `cubenet exec` a connection attempt from node `from` to node `to`'s cube address
/// (port 9, where nobody listens): "refused" if a packet reached `to`, "unreachable" if
/// there is no route.
fn probe(name: &str, from: u32, to: u32) -> String {
    let cubenet = hypercube_tests::cargo_bin("launcher", "cubenet");
    let out = Command::new(cubenet)
        .args([
            "--name",
            name,
            "exec",
            &from.to_string(),
            "--",
            "bash",
            "-c",
        ])
        .arg(format!("echo > /dev/tcp/10.201.0.{}/9", to + 1))
        .output()
        .expect("running cubenet exec");
    String::from_utf8_lossy(&out.stderr).to_lowercase()
}

#[test]
fn cubenet_routes_only_neighbours_unless_asked_for_kernel_routes() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!(
            "\n!!!!! SKIPPED `cubenet_routes_only_neighbours_unless_asked_for_kernel_routes`: \
             `cubenet` makes namespaces in the host and needs root !!!!!\n"
        );
        return;
    }
    let _one = serial();
    let before = host_network();
    let cubenet = hypercube_tests::cargo_bin("launcher", "cubenet");
    // A name of our own (at most 8 characters), removed also when an assertion fails.
    let name = format!("t{}", std::process::id() % 10_000_000);
    struct Down(std::path::PathBuf, String);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = Command::new(&self.0)
                .args(["--name", &self.1, "down"])
                .status();
        }
    }
    for kernel_routes in [false, true] {
        let mut up = Command::new(&cubenet);
        up.args(["--name", &name, "up", "--dim", "2", "--link-rate", "1gbit"]);
        if kernel_routes {
            up.arg("--kernel-routes");
        }
        let out = run_command(up, Duration::from_secs(60));
        let _down = Down(cubenet.clone(), name.clone());
        out.assert_ok();
        assert_eq!(out.stdout.lines().count(), 5, "{}", out.stdout);
        // A neighbour is always reached; the antipode (2 hops) only through the kernel.
        assert!(
            probe(&name, 0, 1).contains("refused"),
            "{}",
            probe(&name, 0, 1)
        );
        let far = probe(&name, 0, 3);
        if kernel_routes {
            assert!(
                far.contains("refused"),
                "node 3 should be reached in 2 hops: {far}"
            );
        } else {
            assert!(
                far.contains("unreachable"),
                "node 3 must have no route: {far}"
            );
        }
        let again = Command::new(&cubenet)
            .args(["--name", &name, "up", "--dim", "2", "--link-rate", "1gbit"])
            .output()
            .expect("running cubenet");
        assert!(!again.status.success());
        assert!(
            String::from_utf8_lossy(&again.stderr).contains("is up already"),
            "{}",
            String::from_utf8_lossy(&again.stderr)
        );
        drop(_down);
        assert_eq!(host_network(), before, "cubenet down left something");
    }
}

#[test]
fn the_ipsc_host_runs_beside_node_0() {
    let Some(_one) = emulated("the_ipsc_host_runs_beside_node_0") else {
        return;
    };
    let program = env!("CARGO_BIN_EXE_host_ipsc");
    let out = run_hcrun(
        &[
            "--dim",
            "2",
            "--link-rate",
            RATE,
            "--timeout-s",
            "60",
            "--host",
            program,
        ],
        &[program],
        &[],
        Duration::from_secs(90),
    );
    out.assert_ok();
    assert!(
        out.stdout.contains("[host] OK host utilities"),
        "{}",
        out.stdout
    );
    for r in 0..4 {
        assert!(
            out.stdout
                .contains(&format!("[{r}] OK node {r} host utilities")),
            "{}",
            out.stdout
        );
    }
}

#[test]
fn random_traffic_arrives_whole_and_in_order_on_wires() {
    // On the emulated network the transport sends messages up to the eager window eagerly
    // and lets flow-control frames overtake queued data (links_are_wires): the integrity
    // program's random traffic (eager and rendezvous sizes, forwarded and direct, posted
    // all at once) must still arrive complete, unduplicated and in order per source and
    // type.
    let Some(_one) = emulated("random_traffic_arrives_whole_and_in_order_on_wires") else {
        return;
    };
    for (seed, far, rate) in [("7", "", "1gbit"), ("8", "far", "100mbit")] {
        let mut args = vec![env!("CARGO_BIN_EXE_integrity"), seed, "40", "0", "1048576"];
        if !far.is_empty() {
            args.push(far);
        }
        let out = run_hcrun(
            &["--dim", "3", "--link-rate", rate, "--timeout-s", "120"],
            &args,
            &[],
            Duration::from_secs(150),
        );
        out.assert_ok();
        out.assert_integrity(8, 40 * 8, &format!("seed {seed} {far}"));
    }
}
