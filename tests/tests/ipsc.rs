//! The iPSC communication utilities (Moler & Scott 1986) across real processes, through the
//! launcher: one job per cube dimension d = 0..4 runs every check of `ipsc_suite` over every
//! root and subcube dimension; `normalize` (seed §10) is compared with a sequential run. The
//! same suite (`hypercube_tests::suites::ipsc`) also runs on a 5-cube of threads.

use hypercube_tests::run_job;

fn suite(d: u32) {
    run_job(d, env!("CARGO_BIN_EXE_ipsc_suite"), &[])
        .assert_ok()
        .assert_every_rank_passed(1 << d, hypercube_tests::IPSC_CHECKS);
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

/// The seed's §10 example, element `i` (the formula of `examples/normalize.rs`).
fn element(i: usize, huge: bool) -> f64 {
    let scale = if huge { 1e300 } else { 1.0 };
    (((i * 37 + 5) % 23) as f64 - 11.0) * scale
}

/// Run `examples/normalize.rs` on a d-cube and compare the gathered vector with a
/// sequential, overflow-safe normalization.
fn normalize(d: u32, root: u32, m: usize, huge: bool) {
    let (ds, rs, ms) = (d.to_string(), root.to_string(), m.to_string());
    let mut args = vec!["--m", ms.as_str(), "--root", rs.as_str()];
    if huge {
        args.push("--huge");
    }
    let out = hypercube_tests::run_hcrun(
        &["--dim", &ds, "--timeout-s", "120", "--example", "normalize"],
        &args,
        &[],
        std::time::Duration::from_secs(300),
    );
    out.assert_ok();
    let n = m << d;
    let x: Vec<f64> = (0..n).map(|i| element(i, huge)).collect();
    let s = x.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let norm = s * x.iter().map(|v| (v / s) * (v / s)).sum::<f64>().sqrt();
    let lines = out.rank_lines(root);
    let value = |prefix: &str| -> f64 {
        let l = lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line from root {root}:\n{}", out.stdout));
        l.trim().parse().expect("a number")
    };
    let got_norm = value("norm ");
    assert!(
        got_norm.is_finite() && ((got_norm - norm) / norm).abs() < 1e-12,
        "d={d} root={root}: norm {got_norm:e}, sequential {norm:e}"
    );
    for (i, xi) in x.iter().enumerate() {
        let got = value(&format!("x {i} "));
        assert!(
            (got - xi / norm).abs() < 1e-12,
            "d={d} root={root}: x[{i}] = {got:e}, sequential {:e}",
            xi / norm
        );
    }
    let sum: f64 = x.iter().map(|v| v / norm).sum();
    assert!((value("checksum ") - sum).abs() < 1e-9, "checksum");
    for r in (0..1u32 << d).filter(|&r| r != root) {
        assert!(out.rank_lines(r).is_empty(), "only the root prints");
    }
}

#[test]
fn normalize_matches_sequential() {
    for d in 0..=4u32 {
        let p = 1u32 << d;
        let mut roots = vec![0, p - 1, p / 2];
        roots.dedup();
        for (k, root) in roots.into_iter().enumerate() {
            normalize(d, root, 3 + k, k == 1);
        }
    }
}

/// The same checks on a 5-cube of threads (the in-process transport): 32 nodes in one
/// process, which also exercises the per-node keying of LRECVW's kept-aside headers.
#[test]
fn ipsc_in_process_d5() {
    let results = hypercube::local::run_local(5, |node| {
        hypercube_tests::suites::ipsc::run(&node, &[])
            .map_err(|e| format!("node {}: {e:#}", node.mynode()))
    });
    for r in results {
        assert_eq!(
            r.expect("in-process check failed"),
            hypercube_tests::IPSC_CHECKS
        );
    }
}
