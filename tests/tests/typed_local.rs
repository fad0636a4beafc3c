//! The typed suite (`hypercube_tests::suites::typed`) on threads, cubes of dimension 0..=4:
//! the same checks `typed_suite` runs over TCP (`typed.rs`).

use hypercube::local::run_local;

#[test]
fn typed_forms_on_threads_d0_to_d4() {
    for d in 0..=4u32 {
        for r in run_local(d, |node| {
            hypercube_tests::suites::typed::run(&node)
                .map_err(|e| format!("node {}: {e:#}", node.mynode()))
        }) {
            assert_eq!(
                r.unwrap_or_else(|e| panic!("d = {d}: {e}")),
                hypercube_tests::suites::typed::CHECK_NAMES
            );
        }
    }
}
