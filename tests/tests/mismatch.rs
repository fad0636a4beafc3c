//! Collectives whose members disagree on a length, across real processes: every member
//! gets the right result or an `InvalidArgument`, quickly; no wrong result, no hang
//! (`hypercube_tests::suites::mismatch`).

use hypercube_tests::run_job;

fn suite(d: u32) {
    run_job(d, env!("CARGO_BIN_EXE_mismatch_suite"), &[])
        .assert_ok()
        .assert_every_rank_passed(1 << d, &hypercube_tests::suites::mismatch::CHECK_NAMES);
}

#[test]
fn mismatch_d1() {
    suite(1);
}

#[test]
fn mismatch_d3() {
    suite(3);
}
