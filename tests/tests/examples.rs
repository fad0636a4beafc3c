//! Every example of `crates/hypercube/examples/` runs through hcrun and checks itself
//! (`hello` is run by `launcher.rs`, `normalize` against a sequential run by `ipsc.rs`).

use std::time::Duration;

use hypercube_tests::{example, run_hcrun};

fn run(d: u32, name: &str, args: &[&str]) -> hypercube_tests::JobOutput {
    let prog = example(name);
    let prog = prog.to_str().expect("a UTF-8 path");
    let mut p = vec![prog];
    p.extend_from_slice(args);
    let out = run_hcrun(
        &["--dim", &d.to_string(), "--timeout-s", "120"],
        &p,
        &[],
        Duration::from_secs(150),
    );
    out.assert_ok();
    out
}

#[test]
fn ring_sums_the_ranks_around_the_gray_code_ring() {
    for d in [0, 1, 3, 4] {
        let out = run(d, "ring", &[]);
        assert!(!out.rank_lines(0).is_empty(), "{out:?}");
    }
}

#[test]
fn antipodal_exchanges_over_d_hops() {
    for d in [1, 3, 4] {
        let out = run(d, "antipodal", &[]);
        for r in 0..1u32 << d {
            let anti = r ^ ((1 << d) - 1);
            let want = format!("node {r} <- node {anti} ({d} hops): greetings from node {anti}");
            assert!(out.rank_lines(r).contains(&want.as_str()), "{out:?}");
        }
    }
}

#[test]
fn pingpong_prints_its_time() {
    let out = run(1, "pingpong", &["200", "64"]);
    assert!(!out.stdout.trim().is_empty(), "{out:?}");
}

#[test]
fn coll_bench_times_every_algorithm() {
    let out = run(2, "coll_bench", &[]);
    assert!(out.rank_lines(0).len() > 5, "{out:?}");
}
