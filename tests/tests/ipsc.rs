//! The iPSC communication utilities (Moler & Scott 1986) across real processes, through the
//! launcher: one job per cube dimension d = 0..4 runs every check of `ipsc_suite` over every
//! root and subcube dimension; `normalize` (seed §10) is compared with a sequential run.

use hypercube_tests::run_job;

const CHECKS: &[&str] = &[
    "broadcast",
    "gop",
    "gcat",
    "long",
    "sparse",
    "mesh",
    "errors",
    "interference",
    "compat",
];

fn suite(d: u32) {
    let out = run_job(d, env!("CARGO_BIN_EXE_ipsc_suite"), &[]);
    out.assert_ok();
    for r in 0..(1u32 << d) {
        let lines = out.rank_lines(r);
        for c in CHECKS {
            assert!(
                lines.contains(&format!("OK {c}").as_str()),
                "rank {r} did not pass {c}:\n{}\n{}",
                out.stdout,
                out.stderr
            );
        }
    }
}

#[test]
fn ipsc_d0() {
    suite(0);
}
#[test]
fn ipsc_d1() {
    suite(1);
}
#[test]
fn ipsc_d2() {
    suite(2);
}
#[test]
fn ipsc_d3() {
    suite(3);
}
#[test]
fn ipsc_d4() {
    suite(4);
}
