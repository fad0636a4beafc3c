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

/// The README's first command, `cargo run --release -p launcher -- --dim 3 --example hello`,
/// needs cargo to pick hcrun among the launcher's binaries (it has two, `hcrun` and
/// `cubenet`): `default-run` in launcher/Cargo.toml, read back as cargo reads it. (The
/// command once stopped at "could not determine which binary to run". Running it here
/// would rebuild shared targets under the other tests' feet.)
#[test]
fn the_readme_run_command_selects_hcrun() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(root).args([
        "metadata",
        "--no-deps",
        "--offline",
        "--format-version",
        "1",
    ]);
    let out = hypercube_tests::run_command(cmd, Duration::from_secs(120));
    out.assert_ok();
    let meta: serde_json::Value = serde_json::from_str(&out.stdout).expect("cargo metadata JSON");
    let launcher = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .find(|p| p["name"] == "launcher")
        .expect("the launcher package");
    assert_eq!(launcher["default_run"], "hcrun", "{launcher}");
    let bins: Vec<&str> = launcher["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .filter(|t| t["kind"][0] == "bin")
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(bins.contains(&"hcrun"), "{bins:?}");
}
