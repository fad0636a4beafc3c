//! Planned many-to-many routes through real processes (`docs/routing.md`): a traced job of
//! `m2m` (crates/bench) with `--alg planned` on a 3-cube, whose trace shows every part of
//! every block taking the path the plan gave it — hop by hop through the forwarding nodes,
//! not its e-cube route — and arriving whole (m2m checks the blocks).

use std::collections::BTreeMap;
use std::time::Duration;

use hypercube::topology::plan::patterns::{bit_reversal, permutation};
use hypercube::topology::{Plan, PlanOptions};
use hypercube_tests::{cargo_bin, run_hcrun, TempDir};
use hypercube_trace::model::Trace;

#[test]
fn planned_parts_follow_their_routes_through_the_forwarding_nodes() {
    let dim = 3;
    let p = 1usize << dim;
    let bytes = 20_000;
    let sizes = permutation(dim, bytes, |n| bit_reversal(n, dim));
    let dir = TempDir::new("routing");
    let matrix = dir.path().join("sizes.txt");
    let text: String = sizes
        .chunks(p)
        .map(|r| r.iter().map(u64::to_string).collect::<Vec<_>>().join(" ") + "\n")
        .collect();
    std::fs::write(&matrix, text).unwrap();
    let json = dir.path().join("t.json");
    let m2m = cargo_bin("hypercube-bench", "m2m");
    let out = run_hcrun(
        &[
            "--dim",
            "3",
            "--timeout-s",
            "60",
            "--trace",
            json.to_str().unwrap(),
        ],
        &[
            m2m.to_str().unwrap(),
            matrix.to_str().unwrap(),
            "-i",
            "1",
            "-x",
            "0",
            "--alg",
            "planned",
        ],
        &[("HYPERCUBE_PLAN_MIN_PART", "4000")],
        Duration::from_secs(90),
    );
    out.assert_ok();
    assert!(out.stdout.contains("m2m slowest_us="), "{}", out.stdout);

    // The plan every member followed: bit reversal on a 3-cube sends 1 ↔ 4 and 3 ↔ 6
    // (two links apart), each block in two parts on the two minimal paths.
    let opts = PlanOptions {
        min_part: 4000,
        max_parts: 8,
    };
    let plan = Plan::balanced(dim, &sizes, opts).unwrap();
    let mut want: BTreeMap<(u32, u32), Vec<Vec<u32>>> = BTreeMap::new();
    for l in plan.legs() {
        want.entry((l.src, l.dst))
            .or_default()
            .push(l.route.dims().collect());
    }
    assert!(want.values().all(|r| r.len() == 2), "{want:?}");

    // The paths the trace shows for the parts (messages of 16 + part bytes).
    let t = Trace::load(&json).unwrap();
    let mut got: BTreeMap<(u32, u32), Vec<Vec<u32>>> = BTreeMap::new();
    for m in t.messages().values() {
        let (Some((src, _)), Some((dst, _))) = (m.send, m.recv) else {
            continue;
        };
        if m.bytes != 16 + bytes / 2 {
            continue;
        }
        let mut at = src;
        let mut dims = Vec::new();
        for &(node, _) in &m.hops {
            dims.push((at ^ node).trailing_zeros());
            at = node;
        }
        dims.push((at ^ dst).trailing_zeros());
        got.entry((src, dst)).or_default().push(dims);
    }
    for v in want.values_mut().chain(got.values_mut()) {
        v.sort();
    }
    assert_eq!(
        got, want,
        "the parts' paths in the trace against the plan's routes"
    );
    // And not e-cube: each pair's second part crosses the higher dimension first.
    assert!(
        got.values().all(|r| r.iter().any(|d| d[0] > d[1])),
        "{got:?}"
    );
}
