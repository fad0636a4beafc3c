//! Node programs under MPICH's Hydra (`mpiexec`), unchanged: they find the PMI-1 connection
//! Hydra hands them and wire themselves into the cube — on this host, and across four
//! "hosts" made of network namespaces on a bridge, where Hydra starts its proxies through
//! `tests/cluster/netns-exec.sh` as its ssh.
//!
//! Engines missing: see `hypercube_tests::cluster::require`.

use std::time::Duration;

use hypercube_tests::cluster::{self, Hosts, TagGuard};
use hypercube_tests::{collective_checks, run_command, IPSC_CHECKS};

const COLL: &str = env!("CARGO_BIN_EXE_coll_suite");
const IPSC: &str = env!("CARGO_BIN_EXE_ipsc_suite");
const SLOW_ROOT: &str = env!("CARGO_BIN_EXE_slow_root");

fn suites(n: u32, hosts: Option<&Hosts>, tag: &str) {
    let coll = collective_checks();
    let coll: Vec<&str> = coll.iter().map(String::as_str).collect();
    for (prog, checks) in [(COLL, &coll[..]), (IPSC, IPSC_CHECKS)] {
        let out = run_command(
            cluster::mpiexec(tag, n, hosts, &[prog]),
            Duration::from_secs(180),
        );
        out.assert_ok().assert_every_rank_passed(n, checks);
    }
    assert_eq!(
        cluster::wait_gone(tag, Duration::from_secs(5)),
        Vec::<u32>::new()
    );
}

#[test]
fn hydra_one_host_8_and_16_ranks() {
    if !cluster::require("hydra_one_host_8_and_16_ranks") {
        return;
    }
    let _one = cluster::serial();
    let tag = cluster::tag();
    let _g = TagGuard(tag.clone());
    suites(8, None, &tag);
    suites(16, None, &tag);
}

#[test]
fn hydra_non_power_of_two_fails_fast_with_the_sizes() {
    if !cluster::require("hydra_non_power_of_two") {
        return;
    }
    let _one = cluster::serial();
    let tag = cluster::tag();
    let _g = TagGuard(tag.clone());
    let out = run_command(
        cluster::mpiexec(&tag, 6, None, &[COLL]),
        Duration::from_secs(60),
    );
    cluster::assert_refused_size(&out, 6, &tag);
}

#[test]
fn hydra_four_namespaces_16_ranks_and_a_killed_rank() {
    if !cluster::require("hydra_four_namespaces") {
        return;
    }
    let _one = cluster::serial();
    let tag = cluster::tag();
    let _g = TagGuard(tag.clone());
    let hosts = Hosts::new(&tag, 4);
    suites(16, Some(&hosts), &tag);

    // An example, unchanged: every node exchanges with its antipode 4 hops (and hosts) away.
    let anti = hypercube_tests::example("antipodal");
    let out = run_command(
        cluster::mpiexec(&tag, 16, Some(&hosts), &[anti.to_str().unwrap()]),
        Duration::from_secs(60),
    );
    cluster::assert_antipodal(&out, 16);

    // Addresses the other hosts cannot reach (every rank told to publish loopback): each
    // rank that dials says which neighbor at which address it cannot reach, and the job
    // ends at once through PMI abort instead of waiting for the start-up timeout.
    let mut cmd = cluster::mpiexec(&tag, 16, Some(&hosts), &[COLL]);
    cmd.env("HYPERCUBE_IFACE", "lo");
    let out = run_command(cmd, Duration::from_secs(60));
    assert!(!out.status.success(), "{out:?}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("cannot reach its neighbor node") && all.contains("HYPERCUBE_IFACE"),
        "{all}"
    );
    assert!(
        out.elapsed < Duration::from_secs(15),
        "took {:?}",
        out.elapsed
    );
    assert_eq!(
        cluster::wait_gone(&tag, Duration::from_secs(5)),
        Vec::<u32>::new()
    );

    // A rank killed mid-job: rank 0 computes for 30 s while the others wait for it; one
    // of the others, on the third host, is killed. The job must end at once, non-zero,
    // with nothing left in any namespace.
    let cmd = cluster::mpiexec(&tag, 16, Some(&hosts), &[SLOW_ROOT, "30000"]);
    let killer = {
        let tag = tag.clone();
        let ns_pids = move || cluster::netns_pids(&tag, 2);
        std::thread::spawn(move || {
            // Bounded wait for the ranks to start on host 3, then kill one of them.
            for _ in 0..200 {
                let ranks: Vec<u32> = ns_pids()
                    .into_iter()
                    .filter(|p| {
                        std::fs::read_link(format!("/proc/{p}/exe"))
                            .is_ok_and(|e| e.ends_with("slow_root"))
                    })
                    .collect();
                if ranks.len() == 4 {
                    std::thread::sleep(Duration::from_millis(500));
                    // SAFETY: kill(2) of a rank this test started (it runs in our namespace).
                    unsafe { libc::kill(ranks[1] as i32, libc::SIGKILL) };
                    return Some(ranks[1]);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            None
        })
    };
    let out = run_command(cmd, Duration::from_secs(60));
    let killed = killer.join().expect("killer thread");
    assert!(
        killed.is_some(),
        "the ranks never started on host 3: {out:?}"
    );
    assert!(!out.status.success(), "the job succeeded: {out:?}");
    assert!(
        out.elapsed < Duration::from_secs(20),
        "the job took {:?} to stop after a rank was killed (rank 0 computes 30 s)",
        out.elapsed
    );
    assert_eq!(
        cluster::wait_gone(&tag, Duration::from_secs(5)),
        Vec::<u32>::new()
    );
    for i in 0..4 {
        let left: Vec<u32> = hosts
            .pids(i)
            .into_iter()
            .filter(|p| hypercube_tests::alive(*p))
            .collect();
        assert!(left.is_empty(), "processes left on host {i}: {left:?}");
    }
}
