//! The typed and serde collectives and `Node::sendrecv` across real processes, through the
//! launcher (over TCP a send above the eager limit waits for its receive, so two 8 MiB
//! sends first would deadlock; sendrecv must not).

use hypercube_tests::run_job;

fn suite(d: u32) {
    run_job(d, env!("CARGO_BIN_EXE_typed_suite"), &[])
        .assert_ok()
        .assert_every_rank_passed(1 << d, &hypercube_tests::suites::typed::CHECK_NAMES);
}

#[test]
fn typed_d1() {
    suite(1);
}

#[test]
fn typed_d3() {
    suite(3);
}

#[test]
fn a_cycle_of_large_sends_is_named_in_the_verdict() {
    // Ranks 0 and 1 both send 8 MiB (above the eager limit) to each other before receiving.
    let out = hypercube_tests::run_hcrun(
        &["--dim", "1"],
        &[env!("CARGO_BIN_EXE_typed_suite"), "send-send"],
        &[],
        std::time::Duration::from_secs(60),
    );
    assert!(!out.status.success(), "a deadlocked job must fail");
    assert!(
        out.stderr.contains(
            "ranks 0 and 1 each wait in a large send to the other (a cycle of rendezvous \
             sends): use sendrecv or isend"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("rank 0 waits for its large send to node 1 to be received (8388608 bytes"),
        "{}",
        out.stderr
    );
}
