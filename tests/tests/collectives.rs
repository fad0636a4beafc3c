//! Every collective across real processes, through the launcher, for d = 0..4: once on the
//! whole cube and once on a subcube of dimension d-1.

use hypercube_tests::run_job;

const OPS: &[&str] = &[
    "bcast",
    "reduce",
    "allreduce",
    "reduce_scatter",
    "scan",
    "scatter",
    "gather",
    "gatherv",
    "allgather",
    "allgatherv",
    "alltoall",
    "alltoallv",
    "shift",
    "barrier",
];

fn suite(d: u32) {
    let out = run_job(d, env!("CARGO_BIN_EXE_coll_suite"), &[]);
    out.assert_ok();
    for r in 0..(1u32 << d) {
        let lines = out.rank_lines(r);
        for scope in ["cube", "subcube"] {
            for op in OPS {
                let want = format!("OK {op} {scope}");
                assert!(
                    lines.contains(&want.as_str()),
                    "rank {r} did not report {want}:\n{}\n{}",
                    out.stdout,
                    out.stderr
                );
            }
        }
    }
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
