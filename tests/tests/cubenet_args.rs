//! The emulated interconnect's arguments (`hcrun --link-rate`, `--link-burst`, the config
//! file's `link_rate`): a bad rate, a rate without a dimension and a cube too large to
//! emulate exit 2 naming the accepted forms, before any network is built (so these run
//! everywhere, without root or user namespaces).

use std::time::Duration;

use hypercube_tests::run_hcrun;

#[test]
fn bad_rates_and_a_rate_without_a_dimension_exit_2_with_the_accepted_forms() {
    for args in [
        &["--dim", "3", "--link-rate", "fast"][..],
        &["--dim", "3", "--link-rate", "0mbit"][..],
        &[
            "--dim",
            "3",
            "--link-rate",
            "100mbit",
            "--link-burst",
            "lots",
        ][..],
    ] {
        let out = run_hcrun(
            args,
            &[env!("CARGO_BIN_EXE_coll_suite")],
            &[],
            Duration::from_secs(30),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        let forms = if args.contains(&"--link-burst") {
            "96kb"
        } else {
            "100mbit, 1gbit"
        };
        assert!(out.stderr.contains(forms), "{args:?}: {}", out.stderr);
    }
    let out = run_hcrun(
        &["--link-rate", "100mbit"],
        &[env!("CARGO_BIN_EXE_coll_suite")],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("--link-rate needs --dim"),
        "{}",
        out.stderr
    );
    let out = run_hcrun(
        &["--dim", "9", "--link-rate", "100mbit"],
        &[env!("CARGO_BIN_EXE_coll_suite")],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(out.stderr.contains("up to --dim 8"), "{}", out.stderr);
}

#[test]
fn a_bad_rate_in_the_config_file_exits_2_with_the_accepted_forms() {
    let dir = hypercube_tests::TempDir::new("cubenet-bad-config");
    let config = dir.path().join("job.toml");
    std::fs::write(&config, "dim = 2\nlink_rate = \"warp 9\"\n").expect("writing");
    let out = run_hcrun(
        &["--config", config.to_str().expect("a UTF-8 path")],
        &[env!("CARGO_BIN_EXE_coll_suite")],
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(out.status.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("link_rate in the config file") && out.stderr.contains("100mbit"),
        "{}",
        out.stderr
    );
}
