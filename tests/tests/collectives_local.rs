//! Every collective on threads (the in-process transport), for d = 0..6: the suite
//! `hypercube_tests::suites::collectives` that `coll_suite` runs over TCP, on cubes larger
//! than the process tests start (up to 64 nodes in one process).

use hypercube::local::run_local;

fn suite(d: u32) {
    // Planned all-to-all routes cut the suite's 5 KB blocks into parts (the same value in
    // every test of this process).
    std::env::set_var("HYPERCUBE_PLAN_MIN_PART", "1000");
    let results = run_local(d, |node| {
        hypercube_tests::suites::collectives::run(&node)
            .map_err(|e| format!("node {}: {e:#}", node.mynode()))
    });
    for r in results {
        assert_eq!(
            r.unwrap_or_else(|e| panic!("d = {d}: {e}")),
            hypercube_tests::collective_checks()
        );
    }
}

#[test]
fn collectives_local_d0_to_d3() {
    for d in 0..=3 {
        suite(d);
    }
}

#[test]
fn collectives_local_d4() {
    suite(4);
}

#[test]
fn collectives_local_d5() {
    suite(5);
}

#[test]
fn collectives_local_d6() {
    suite(6);
}
