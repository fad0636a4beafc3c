//! Benchmarks are not tests: this only checks that every benchmark of `hypercube-bench`
//! runs once at a tiny size and prints the OSU format of the MPI peer
//! `crates/bench/c/osu_mpi.c` (title line, `# Size` header, one row per size; only rank 0
//! prints), the C peers included when their compilers are installed. It never looks at
//! timings.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use hypercube_tests::run_hcrun;

/// The bench binaries (`osu`, `floor`).
fn bench_bin(name: &str) -> PathBuf {
    hypercube_tests::cargo_bin("hypercube-bench", name)
}

/// `printf("%-10s%20s\n", "# Size", col)`.
fn header(col: &str) -> String {
    format!("{:<10}{:>20}", "# Size", col)
}

/// Check one OSU-format table: title, header, and exactly the rows of `sizes`, each
/// `%-10zu%20.2f` with a finite, non-negative value.
fn check_table(lines: &[&str], title_start: &str, col: &str, sizes: &[u64]) {
    assert!(
        lines.len() == 2 + sizes.len(),
        "expected a title, a header and {} rows, got {lines:#?}",
        sizes.len()
    );
    assert!(
        lines[0].starts_with(&format!("# {title_start}")),
        "title {:?} should start with {title_start:?}",
        lines[0]
    );
    assert_eq!(lines[1], header(col));
    for (line, &size) in lines[2..].iter().zip(sizes) {
        assert_eq!(line.len(), 30, "row {line:?} is not 10 + 20 columns wide");
        let (s, v) = line.split_at(10);
        assert_eq!(s.trim_end().parse::<u64>().ok(), Some(size), "row {line:?}");
        let v: f64 = v.trim().parse().unwrap_or_else(|_| panic!("row {line:?}"));
        assert!(v.is_finite() && v >= 0.0, "row {line:?}");
        assert!(
            line.trim_end()
                .rsplit('.')
                .next()
                .is_some_and(|d| d.len() == 2),
            "row {line:?} should have two decimals"
        );
    }
}

fn run_osu(dim: u32, args: &[&str]) -> Vec<String> {
    let osu = bench_bin("osu");
    let osu = osu.to_str().expect("utf-8 path");
    let d = dim.to_string();
    let mut prog = vec![osu];
    prog.extend_from_slice(args);
    let out = run_hcrun(
        &["--dim", &d, "--timeout-s", "60"],
        &prog,
        &[],
        Duration::from_secs(90),
    );
    out.assert_ok();
    for r in 1..(1u32 << dim) {
        assert!(
            out.rank_lines(r).is_empty(),
            "only rank 0 prints, but rank {r} printed {:?}",
            out.rank_lines(r)
        );
    }
    out.rank_lines(0).into_iter().map(str::to_string).collect()
}

#[test]
fn point_to_point_benches_print_the_osu_format() {
    let l = run_osu(1, &["latency", "-m", "8:16", "-i", "2", "-x", "0"]);
    let l: Vec<&str> = l.iter().map(String::as_str).collect();
    check_table(
        &l,
        "OSU-style hypercube Latency Test",
        "Latency (us)",
        &[8, 16],
    );
    let l = run_osu(1, &["bw", "-m", "8:8", "-i", "2", "-x", "0"]);
    let l: Vec<&str> = l.iter().map(String::as_str).collect();
    check_table(
        &l,
        "OSU-style hypercube Bandwidth Test",
        "Bandwidth (MB/s)",
        &[8],
    );
}

/// `--peer`: rank 0's partner two links away (its messages forwarded by another rank);
/// a partner outside the cube is refused with the range.
#[test]
fn point_to_point_benches_take_a_distant_peer() {
    for bench in ["latency", "bw"] {
        let l = run_osu(
            2,
            &[bench, "--peer", "3", "-m", "8:8", "-i", "2", "-x", "0"],
        );
        assert!(
            l.iter().any(|r| r.starts_with("8 ")),
            "{bench} --peer 3 printed no row: {l:?}"
        );
    }
    let osu = bench_bin("osu");
    let out = run_hcrun(
        &["--dim", "2", "--timeout-s", "60"],
        &[osu.to_str().expect("utf-8 path"), "latency", "--peer", "4"],
        &[],
        Duration::from_secs(90),
    );
    assert!(!out.status.success(), "{out:?}");
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(
        all.contains("--peer 4") && all.contains("from 1 to 3"),
        "{all}"
    );
}

#[test]
fn collectives_and_ipsc_utilities_print_the_osu_format() {
    for bench in [
        "bcast",
        "reduce",
        "allreduce",
        "allgather",
        "reduce_scatter",
        "alltoall",
        "scatter",
        "gather",
        "scan",
        "barrier",
        "shift",
        "gsendw",
        "gop",
        "gcat",
        "spgsnw",
    ] {
        let l = run_osu(2, &[bench, "-m", "8:8", "-i", "2", "-x", "0"]);
        let l: Vec<&str> = l.iter().map(String::as_str).collect();
        let size = if bench == "barrier" { 0 } else { 8 };
        check_table(
            &l,
            &format!("OSU-style hypercube {bench} Latency Test (np=4)"),
            "Avg Latency(us)",
            &[size],
        );
    }
}

#[test]
fn a_forced_algorithm_is_used_and_named() {
    let l = run_osu(
        2,
        &["allreduce", "-m", "8:8", "-i", "2", "-x", "0", "-a", "ring"],
    );
    let l: Vec<&str> = l.iter().map(String::as_str).collect();
    check_table(
        &l,
        "OSU-style hypercube allreduce Latency Test (np=4) [alg=ring]",
        "Avg Latency(us)",
        &[8],
    );
}

#[test]
fn the_floor_prints_both_formats() {
    let floor = bench_bin("floor");
    for mode in ["spin", "pingpong", "stream"] {
        let out = Command::new(&floor)
            .args([mode, "-m", "8:16", "-i", "20", "-x", "1"])
            .output()
            .expect("running floor");
        assert!(out.status.success(), "floor {mode}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let l: Vec<&str> = text.lines().collect();
        let col = if mode == "stream" {
            "Bandwidth (MB/s)"
        } else {
            "Latency (us)"
        };
        check_table(&l, "Raw loopback TCP floor", col, &[8, 16]);
        // The C floor's one-line form: `MODE SIZE VALUE UNIT`.
        let out = Command::new(&floor)
            .args([mode, "8", "20"])
            .output()
            .expect("running floor");
        assert!(out.status.success(), "floor {mode} 8 20: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let f: Vec<&str> = text.split_whitespace().collect();
        let unit = if mode == "stream" { "MB/s" } else { "us" };
        assert_eq!(f.len(), 4, "{text:?}");
        assert_eq!((f[0], f[1], f[3]), (mode, "8", unit), "{text:?}");
        assert!(f[2].parse::<f64>().is_ok(), "{text:?}");
    }
}

#[test]
fn the_relay_floor_prints_the_osu_format() {
    let relay = bench_bin("relay_floor");
    for (hops, how) in [("1", "copy"), ("3", "copy"), ("2", "splice")] {
        let out = Command::new(&relay)
            .args(["--hops", hops, "--relay", how, "-m", "8:16", "-i", "20"])
            .output()
            .expect("running relay_floor");
        assert!(
            out.status.success(),
            "relay_floor --hops {hops} --relay {how}: {out:?}"
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let l: Vec<&str> = text.lines().collect();
        check_table(&l, "Loopback TCP relay floor", "Latency (us)", &[8, 16]);
        assert!(l[0].contains(&format!("over {hops} hop(s)")), "{:?}", l[0]);
    }
    // Out of range: a clear refusal, not a ring of no processes.
    let out = Command::new(&relay)
        .args(["--hops", "0"])
        .output()
        .expect("running relay_floor");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--hops"), "{err}");
}

/// The numbers of a `# vs` line: `# vs B: X us; A / B = r; slowest rank a / b us = s`.
fn vs_numbers(line: &str) -> Option<[f64; 5]> {
    let (_, rest) = line.split_once(": ")?;
    let (x, rest) = rest.split_once(" us; ")?;
    let (_, rest) = rest.split_once(" = ")?;
    let (r, rest) = rest.split_once("; slowest rank ")?;
    let (a, rest) = rest.split_once(" / ")?;
    let (b, s) = rest.split_once(" us = ")?;
    let v: Vec<f64> = [x, r, a, b, s]
        .iter()
        .filter_map(|t| t.parse().ok())
        .collect();
    v.try_into().ok()
}

#[test]
fn a_second_form_in_the_same_job_is_compared_by_the_average_and_the_slowest_rank() {
    let l = run_osu(
        2,
        &[
            "allgather",
            "-m",
            "8:8",
            "-i",
            "20",
            "-x",
            "2",
            "--form",
            "slice",
            "--vs",
            "bytes",
        ],
    );
    let row = l.iter().find(|s| s.starts_with('8')).expect("the 8 B row");
    let avg: f64 = row
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("a time");
    let vs = l
        .iter()
        .find(|s| s.starts_with("# vs Bytes: "))
        .expect("a `# vs` line");
    let [other, ratio, slow_a, slow_b, slow_ratio] =
        vs_numbers(vs).unwrap_or_else(|| panic!("cannot read {vs:?}"));
    assert!(vs.contains("Slice / Bytes = "), "{vs}");
    let near = |x: f64, y: f64| (x - y).abs() <= 0.02 * y.abs() + 0.01;
    assert!(
        near(ratio, avg / other),
        "{vs}: {avg} / {other} is not {ratio}"
    );
    assert!(near(slow_ratio, slow_a / slow_b), "{vs}");
    // The slowest rank's mean is at least the mean over the ranks.
    assert!(
        slow_a + 0.01 >= avg && slow_b + 0.01 >= other,
        "{row} / {vs}"
    );
}

#[test]
fn per_rank_times_and_the_loop_follow_each_row() {
    let l = run_osu(
        2,
        &["bcast", "-m", "8:16", "-i", "2", "-x", "0", "--per-rank"],
    );
    let rows: Vec<&str> = l
        .iter()
        .map(String::as_str)
        .filter(|s| !s.starts_with("# per rank") && !s.starts_with("# loop:"))
        .collect();
    check_table(
        &rows,
        "OSU-style hypercube bcast Latency Test (np=4)",
        "Avg Latency(us)",
        &[8, 16],
    );
    let per: Vec<&String> = l.iter().filter(|s| s.starts_with("# per rank:")).collect();
    assert_eq!(per.len(), 2, "one per-rank line per size: {l:#?}");
    for line in per {
        let v: Vec<f64> = line["# per rank:".len()..]
            .split_whitespace()
            .map(|x| x.parse().unwrap_or_else(|_| panic!("{line:?}")))
            .collect();
        assert_eq!(v.len(), 4, "one figure per rank: {line:?}");
        assert!(v.iter().all(|x| x.is_finite() && *x >= 0.0), "{line:?}");
    }
    let skew: Vec<&String> = l
        .iter()
        .filter(|s| s.starts_with("# per rank, barrier exit after rank 0's:"))
        .collect();
    assert_eq!(skew.len(), 2, "one barrier-exit line per size: {l:#?}");
    for line in skew {
        let v: Vec<f64> = line
            .rsplit(':')
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .map(|x| x.parse().unwrap_or_else(|_| panic!("{line:?}")))
            .collect();
        assert_eq!(v.len(), 4, "one figure per rank: {line:?}");
        assert_eq!(v[0], 0.0, "rank 0 against itself: {line:?}");
        assert!(v.iter().all(|x| x.is_finite()), "{line:?}");
    }
    // Rank 0's time per call and barrier, one line per size, after the per-rank lines.
    let loops: Vec<f64> = l
        .iter()
        .filter_map(|s| s.strip_prefix("# loop:"))
        .map(|x| x.trim().parse().unwrap_or_else(|_| panic!("{x:?}")))
        .collect();
    assert_eq!(loops.len(), 2, "one loop line per size: {l:#?}");
    assert!(loops.iter().all(|x| x.is_finite() && *x > 0.0), "{loops:?}");
}

#[test]
fn the_floor_takes_a_congestion_control_and_refuses_an_unknown_one() {
    let floor = bench_bin("floor");
    for cc in ["system", "reno", "no-such-algorithm,reno"] {
        let out = Command::new(&floor)
            .args(["spin", "8", "20", "--congestion", cc])
            .output()
            .expect("running floor");
        assert!(out.status.success(), "floor --congestion {cc}: {out:?}");
    }
    let out = Command::new(&floor)
        .args(["spin", "8", "20", "--congestion", "no-such-algorithm"])
        .output()
        .expect("running floor");
    assert!(
        !out.status.success(),
        "an unknown algorithm must fail: {out:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("took none of the congestion controls"),
        "{err}"
    );
}

/// `true` if an executable called `name` is on `PATH`.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| {
        std::env::split_paths(&p).any(|d| {
            use std::os::unix::fs::PermissionsExt;
            d.join(name)
                .metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// `hypercube-bench ARGS`, which builds the C peers on first use; its stdout.
fn hypercube_bench(args: &[&str]) -> String {
    let out = Command::new(bench_bin("hypercube-bench"))
        .args(args)
        .output()
        .expect("running hypercube-bench");
    assert!(out.status.success(), "hypercube-bench {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_mpi_peer_prints_the_same_format_when_open_mpi_is_installed() {
    if !on_path("mpicc.openmpi") || !on_path("mpirun.openmpi") {
        eprintln!("skipped: Open MPI is not installed (scripts/install-bench-deps.sh)");
        return;
    }
    let text = hypercube_bench(&[
        "mpi", "2", "tcp", "latency", "-m", "8:16", "-i", "2", "-x", "0",
    ]);
    let l: Vec<&str> = text.lines().collect();
    check_table(&l, "OSU-style MPI Latency Test", "Latency (us)", &[8, 16]);
    let text = hypercube_bench(&[
        "mpi",
        "4",
        "shm",
        "allreduce",
        "-m",
        "8:8",
        "-i",
        "2",
        "-x",
        "0",
    ]);
    let l: Vec<&str> = text.lines().collect();
    check_table(
        &l,
        "OSU-style MPI allreduce Latency Test (np=4)",
        "Avg Latency(us)",
        &[8],
    );
    // The shift (MPI_Sendrecv by one) that the comparison puts beside ours.
    let text = hypercube_bench(&[
        "mpi", "4", "tcp", "shift", "-m", "8:8", "-i", "2", "-x", "0",
    ]);
    let l: Vec<&str> = text.lines().collect();
    check_table(
        &l,
        "OSU-style MPI shift Latency Test (np=4)",
        "Avg Latency(us)",
        &[8],
    );
}

#[test]
fn the_c_floor_prints_one_figure() {
    if !on_path("cc") {
        eprintln!("skipped: no C compiler (cc)");
        return;
    }
    for (mode, unit) in [("spin", "us"), ("pingpong", "us"), ("stream", "MB/s")] {
        let text = hypercube_bench(&["c-floor", mode, "8", "20"]);
        let f: Vec<&str> = text.split_whitespace().collect();
        assert_eq!(f.len(), 4, "{text:?}");
        assert_eq!((f[0], f[1], f[3]), (mode, "8", unit), "{text:?}");
        assert!(f[2].parse::<f64>().is_ok_and(|v| v >= 0.0), "{text:?}");
    }
}
