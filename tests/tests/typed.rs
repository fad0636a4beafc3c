//! The typed and serde collectives and `Node::sendrecv` across real processes, through the
//! launcher (over TCP a send above the eager limit waits for its receive, so two 8 MiB
//! sends first would deadlock; sendrecv must not).

use hypercube_tests::run_job;

fn suite(d: u32) {
    let checks = [
        "sendrecv",
        "exchange",
        "allgather_slice",
        "bcast_value",
        "serde",
        "reductions",
    ];
    run_job(d, env!("CARGO_BIN_EXE_typed_suite"), &[])
        .assert_ok()
        .assert_every_rank_passed(1 << d, &checks);
}

#[test]
fn typed_d1() {
    suite(1);
}

#[test]
fn typed_d3() {
    suite(3);
}
