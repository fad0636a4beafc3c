//! Every collective across real processes, through the launcher, for d = 0..4: the suite
//! `hypercube_tests::suites::collectives` (the whole cube and subcubes) run by `coll_suite`.

use std::time::Duration;

use hypercube_tests::run_hcrun;

fn suite(d: u32) {
    let checks = hypercube_tests::collective_checks();
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    let dim = d.to_string();
    run_hcrun(
        &["--dim", &dim, "--timeout-s", "120"],
        &[env!("CARGO_BIN_EXE_coll_suite")],
        // Planned all-to-all routes cut the suite's 5 KB blocks into parts, each on a
        // path of its own through the forwarding nodes.
        &[("HYPERCUBE_PLAN_MIN_PART", "1000")],
        Duration::from_secs(150),
    )
    .assert_ok()
    .assert_every_rank_passed(1 << d, &checks);
}

#[test]
fn collectives_d0() {
    suite(0);
}

#[test]
fn collectives_d1() {
    suite(1);
}

#[test]
fn collectives_d2() {
    suite(2);
}

#[test]
fn collectives_d3() {
    suite(3);
}

#[test]
fn collectives_d4() {
    suite(4);
}
