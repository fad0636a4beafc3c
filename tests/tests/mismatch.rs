//! Collectives whose members disagree on a length, across real processes: every member
//! gets the right result or an `InvalidArgument`, quickly; no wrong result, no hang
//! (`hypercube_tests::suites::mismatch`).

use std::time::Duration;

use hypercube_tests::suites::mismatch::CHECK_NAMES;
use hypercube_tests::{run_hcrun, run_job};

fn suite(d: u32) {
    run_job(d, env!("CARGO_BIN_EXE_mismatch_suite"), &[])
        .assert_ok()
        .assert_every_rank_passed(1 << d, &CHECK_NAMES);
}

#[test]
fn mismatch_d1() {
    suite(1);
}

#[test]
fn mismatch_d3() {
    suite(3);
}

/// Blocks of 20 000 elements (80 000 bytes of `u32`, 160 000 of `f64`): the messages go by
/// rendezvous (the eager limit pinned at its default, 64 KiB). A member whose receive took
/// the failure notice must still let its partner's large send of the failed call complete;
/// before the failed call's messages were dropped (`Node::discard_call`), two partners of
/// the first exchange step that both took the notice each waited forever in their send to
/// the other (issue 25: hcrun reported a cycle of rendezvous sends).
#[test]
fn mismatch_d3_above_the_eager_limit() {
    run_hcrun(
        &["--dim", "3", "--timeout-s", "120"],
        &[env!("CARGO_BIN_EXE_mismatch_suite"), "20000"],
        &[("HYPERCUBE_EAGER_LIMIT", "65536")],
        Duration::from_secs(150),
    )
    .assert_ok()
    .assert_every_rank_passed(8, &CHECK_NAMES);
}

/// Blocks of 40 000 elements (160 000 bytes of `u32`): the typed allgather receives them
/// into its result in place (`node/landing.rs`, from 128 KiB per block); a message of
/// another length is not written there and is named, as on the other paths.
#[test]
fn mismatch_d2_received_in_place() {
    run_hcrun(
        &["--dim", "2", "--timeout-s", "120"],
        &[env!("CARGO_BIN_EXE_mismatch_suite"), "40000"],
        &[("HYPERCUBE_EAGER_LIMIT", "65536")],
        Duration::from_secs(150),
    )
    .assert_ok()
    .assert_every_rank_passed(4, &CHECK_NAMES);
}

/// The automatic choices as on links that are wires (`HYPERCUBE_MODEL_LINK_TW_NS` in place
/// of the start-up probe, which on a loaded machine sometimes measures loopback that slow):
/// then node 2's half length and the others' full length fall on either side of the
/// reduce-scatter's threshold, and node 2 runs the recursive halving while the others run
/// the all-port algorithm. Their first step's receives from node 2 must take its failure
/// notice (the message they wait for never comes); when they took only data, nodes 0 and 6
/// waited forever (with 12 ns per byte, blocks of 20 000 elements; with 40, the default
/// sizes). With 100 ns per byte, node 2's gather goes up the binomial tree while the
/// others send straight to the root by e-cube: node 2's block reaches node 3, whose part
/// had ended, and the root waited for node 2 forever (hcrun reported a deadlock) until a
/// member whose part has ended tells the others of such a message (`Transport::close`).
#[test]
fn mismatch_d3_choosing_as_on_wires() {
    for (tw, size) in [("12", "20000"), ("40", "1000"), ("100", "1000")] {
        run_hcrun(
            &["--dim", "3", "--timeout-s", "120"],
            &[env!("CARGO_BIN_EXE_mismatch_suite"), "4", size],
            &[
                ("HYPERCUBE_EAGER_LIMIT", "65536"),
                ("HYPERCUBE_MODEL_LINK_TW_NS", tw),
            ],
            Duration::from_secs(150),
        )
        .assert_ok()
        .assert_every_rank_passed(8, &CHECK_NAMES);
    }
}
