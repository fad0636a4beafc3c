//! The iPSC host process (`hcrun --host`): point-to-point with every node, and the host
//! variants of the utilities, for d = 0..4.

use std::time::Duration;

use hypercube_tests::run_hcrun;

fn job(d: u32, program: &str, ok_host: &str, ok_node: &str) {
    let ds = d.to_string();
    let out = run_hcrun(
        &["--dim", &ds, "--timeout-s", "60", "--host", program],
        &[program],
        &[],
        Duration::from_secs(90),
    );
    out.assert_ok();
    assert!(
        out.stdout.lines().any(|l| l == format!("[host] {ok_host}")),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
    for r in 0..(1u32 << d) {
        assert!(
            out.rank_lines(r).iter().any(|l| l.starts_with(ok_node)),
            "rank {r}:\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
}

#[test]
fn host_point_to_point_d0_to_d4() {
    for d in 0..=4 {
        let ok = format!("OK host talked to {} nodes", 1u32 << d);
        job(d, env!("CARGO_BIN_EXE_host_p2p"), &ok, "OK node");
    }
}

#[test]
fn host_utilities_d1_to_d4() {
    for d in 1..=4 {
        job(
            d,
            env!("CARGO_BIN_EXE_host_ipsc"),
            "OK host utilities",
            "OK node",
        );
    }
}

#[test]
fn failing_host_stops_the_job() {
    let out = run_hcrun(
        &["--dim", "2", "--host", "/bin/false"],
        &[env!("CARGO_BIN_EXE_host_p2p")],
        &[],
        Duration::from_secs(60),
    );
    assert!(!out.status.success());
    assert!(out.stderr.contains("the host"), "{}", out.stderr);
}
