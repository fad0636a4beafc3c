//! The mismatch suite (`hypercube_tests::suites::mismatch`) on threads, cubes of dimension
//! 1..=4: collectives whose members disagree on a length give every member the right result
//! or an `InvalidArgument` — no wrong result, and no member left waiting (which the
//! in-process transport reports as a peer gone).

use hypercube::local::run_local;

#[test]
fn mismatched_lengths_on_threads_d1_to_d4() {
    for d in 1..=4u32 {
        for r in run_local(d, |node| {
            hypercube_tests::suites::mismatch::run(&node)
                .map_err(|e| format!("node {}: {e:#}", node.mynode()))
        }) {
            assert_eq!(
                r.unwrap_or_else(|e| panic!("d = {d}: {e}")),
                hypercube_tests::suites::mismatch::CHECK_NAMES
            );
        }
    }
}
