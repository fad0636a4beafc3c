//! The start-up link probe on the emulated interconnect (`hcrun --link-rate`,
//! docs/cubenet.md): it measures the rate and the token bucket's burst that the network was
//! built with. Needs root or unprivileged user namespaces; skipped with a loud line
//! otherwise.

use std::time::Duration;

use hypercube_tests::emulation::{emulated, RATE, RATE_BYTES_PER_SEC};
use hypercube_tests::run_hcrun;

/// The start-up probe (`boot/probe.rs`) measures what `--link-rate` and `--link-burst`
/// built: the rate within 25 %, and the token bucket's burst from the priming transfer
/// (two buckets, so that a fixed figure cannot pass) — the automatic choice of the
/// all-to-all rests on both.
#[test]
fn the_start_up_probe_measures_the_links_rate_and_burst() {
    let Some(_one) = emulated("the_start_up_probe_measures_the_links_rate_and_burst") else {
        return;
    };
    let osu = hypercube_tests::cargo_bin("hypercube-bench", "osu");
    for burst in [72u32 << 10, 112 << 10] {
        let b = format!("{}kb", burst >> 10);
        let out = run_hcrun(
            &["--dim", "2", "--link-rate", RATE, "--link-burst", &b],
            &[
                osu.to_str().expect("a UTF-8 path"),
                "barrier",
                "-i",
                "10",
                "-x",
                "1",
            ],
            &[("RUST_LOG", "hypercube::boot::probe=debug")],
            Duration::from_secs(120),
        );
        out.assert_ok();
        let all = format!("{}\n{}", out.stdout, out.stderr);
        let line = all
            .lines()
            .find(|l| l.contains("link probe:"))
            .unwrap_or_else(|| panic!("no probe line in\n{all}"));
        // "link probe: Some(83.2) ns per byte, burst 93611 bytes"
        let ns: f64 = line
            .split("Some(")
            .nth(1)
            .and_then(|r| r.split(')').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no rate in {line}"));
        let got: f64 = line
            .split("burst ")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no burst in {line}"));
        let want_ns = 1e9 / RATE_BYTES_PER_SEC;
        assert!(
            (ns - want_ns).abs() <= 0.25 * want_ns,
            "probe: {ns} ns per byte, the link is {want_ns}: {line}"
        );
        let want = f64::from(burst);
        assert!(
            got >= 0.7 * want && got <= want + 4096.0,
            "probe: burst {got} bytes, the bucket holds {want}: {line}"
        );
    }
}
