//! Every collective across real processes, through the launcher, for d = 0..4: the suite
//! `hypercube_tests::suites::collectives` (the whole cube and subcubes) run by `coll_suite`.

use hypercube_tests::run_job;

fn suite(d: u32) {
    let checks = hypercube_tests::collective_checks();
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    run_job(d, env!("CARGO_BIN_EXE_coll_suite"), &[])
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
