//! The tests of the cubenet benchmark: parsing, planning, the page.

use crate::report::RunInfo;
use crate::Bench;

use super::medians::medians;
use super::network::parse_hosts;
use super::page::{page, MODEL_PLACEHOLDER};
use super::plan::{estimate_secs, iterations, max_iters_of, nominal_bytes_per_sec, osu_iters_arg};
use super::rows::{parse_output, Row, OMPI, OURS};

#[test]
fn per_rank_lines_attach_to_their_row() {
    let ours = "# OSU-style hypercube alltoall Latency Test (np=8)\n\
                # Size         Avg Latency(us)\n\
                65536                 66780.35\n\
                # per rank: 68195.00 65540.00 71664.49 64148.00\n\
                # per rank, barrier exit after rank 0's: +0.00 +127.69 +0.31 +98.94\n\
                # loop: 70012.50\n\
                131072                1000.00\n";
    let m = parse_output(ours);
    assert_eq!(m.len(), 2);
    assert_eq!(m[0].size, 65536);
    assert_eq!(m[0].per_rank, vec![68195.0, 65540.0, 71664.49, 64148.0]);
    assert_eq!(m[0].slowest(), 71664.49);
    assert_eq!(m[0].loop_us, Some(70012.5));
    assert_eq!(m[1].loop_us, None);
    assert!(m[1].per_rank.is_empty());
    assert_eq!(m[1].slowest(), 1000.0, "no per-rank times: the figure");
    let mpi = "# OSU-style MPI barrier Latency Test (np=16)\n# Size         Avg \
               Latency(us)\n0                       455.99\n# per rank: 400.00 \
               512.50\n";
    let m = parse_output(mpi);
    assert_eq!((m[0].size, m[0].value, m[0].slowest()), (0, 455.99, 512.5));
}

#[test]
fn csv_round_trip_and_medians_of_avg_and_slowest() {
    let row = |rep, avg, max| Row {
        dim: 4,
        rate: "100mbit".into(),
        imp: OURS.into(),
        bench: "alltoall".into(),
        size: 1048576,
        rep,
        avg,
        max,
        unit: "us".into(),
        iters: 3,
        link_bps: 11.95e6,
        bound_us: Some(701_000.5),
        per_rank: vec![1.5, 2.25],
        loop_us: Some(40.5),
    };
    let r = row(1, 10.0, 30.0);
    assert_eq!(Row::from_csv(&r.to_csv()).unwrap(), r);
    let mut none = r.clone();
    none.bound_us = None;
    none.per_rank.clear();
    none.loop_us = None;
    assert_eq!(Row::from_csv(&none.to_csv()).unwrap(), none);
    // A line of a run before `loop_us` (13 fields) reads, without it.
    let old = none.to_csv();
    assert_eq!(Row::from_csv(old.strip_suffix(',').unwrap()).unwrap(), none);
    let m = medians(&[row(1, 10.0, 30.0), row(2, 12.0, 10.0), row(3, 11.0, 20.0)]);
    let f = m[&(4, "100mbit".into(), OURS.into(), "alltoall".into(), 1048576)];
    assert_eq!((f.avg, f.max), (11.0, 20.0));
}

#[test]
fn rates_iterations_and_hosts() {
    assert_eq!(nominal_bytes_per_sec("100mbit").unwrap(), 12.5e6);
    assert_eq!(nominal_bytes_per_sec("1gbit").unwrap(), 125e6);
    assert_eq!(nominal_bytes_per_sec("2.8MBps").unwrap(), 2.8e6);
    assert!(nominal_bytes_per_sec("fast").is_err());
    // A 1 MiB all-to-all on 16 ranks at 100 Mbit/s: ~1.3 s a call, the minimum.
    let est = estimate_secs(Bench::Alltoall, 4, 1 << 20, 12.5e6);
    assert!((1.3..1.4).contains(&est), "{est}");
    assert_eq!(iterations(est, 1.5, 3, 1000, 1 << 20), (3, 1));
    // 8 B: capped, with OSU-like warm-up.
    assert_eq!(iterations(1e-4, 1.5, 3, 1000, 8), (1000, 100));
    assert_eq!(iterations(0.1, 1.5, 3, 1000, 8), (15, 5));
    assert_eq!(iterations(1e-3, 1.5, 3, 1000, 65536), (1000, 10));
    let lat = estimate_secs(Bench::Latency, 4, 8, 12.5e6);
    let max = max_iters_of(Bench::Latency, 1000);
    assert_eq!(iterations(lat, 1.5, 3, max, 8), (10000, 100));
    assert_eq!(osu_iters_arg(3, 1 << 20), 30);
    assert_eq!(osu_iters_arg(3, 8192), 3);
    let hosts = "# rank namespace cube-address management-address\n\
                 1 hcbench-1 10.201.0.2 10.202.0.3\n0 hcbench-0 10.201.0.1 10.202.0.2\n";
    assert_eq!(parse_hosts(hosts), vec!["10.201.0.1", "10.201.0.2"]);
}

#[test]
fn the_page_keeps_the_reading_and_the_model_only_when_asked() {
    let rows = vec![Row {
        dim: 3,
        rate: "100mbit".into(),
        imp: OURS.into(),
        bench: "barrier".into(),
        size: 0,
        rep: 1,
        avg: 100.0,
        max: 150.0,
        unit: "us".into(),
        iters: 10,
        link_bps: 11.95e6,
        bound_us: None,
        per_rank: vec![],
        loop_us: None,
    }];
    let info = RunInfo::default();
    let first = page(&rows, &info, None, true);
    assert!(first.contains(MODEL_PLACEHOLDER));
    assert!(first.trim_end().ends_with(MODEL_PLACEHOLDER));
    let edited = first
        .replace(
            "(Not written yet: read the tables and write it here.)",
            "We lose.",
        )
        .replace(MODEL_PLACEHOLDER, "t_s = 1 ms");
    let again = page(&rows, &info, Some(&edited), true);
    assert!(again.contains("We lose.") && again.contains("t_s = 1 ms"));
    let fresh = page(&rows, &info, Some(&edited), false);
    assert!(fresh.contains("We lose.") && fresh.contains(MODEL_PLACEHOLDER));
    assert!(!fresh.contains("t_s = 1 ms"));
}

/// An iPSC utility runs ours only; its row on the page compares it with Open MPI's run of
/// the collective that does its job (GSENDW with `MPI_Bcast`), and it counts in the
/// summary.
#[test]
fn an_ipsc_utility_is_compared_with_open_mpis_collective() {
    let row = |imp: &str, bench: &str, avg: f64| Row {
        dim: 3,
        rate: "1gbit".into(),
        imp: imp.into(),
        bench: bench.into(),
        size: 65536,
        rep: 1,
        avg,
        max: avg * 2.0,
        unit: "us".into(),
        iters: 10,
        link_bps: 119e6,
        bound_us: Some(183.0),
        per_rank: vec![],
        loop_us: None,
    };
    let rows = vec![
        row(OURS, "bcast", 100.0),
        row(OMPI, "bcast", 400.0),
        row(OURS, "gsendw", 200.0),
    ];
    let text = page(&rows, &RunInfo::default(), None, false);
    let line = text
        .lines()
        .find(|l| l.starts_with("| gsendw (Open MPI: bcast) | 64 KiB |"))
        .unwrap_or_else(|| panic!("no gsendw row in\n{text}"));
    // ours 200 µs avg against Open MPI's bcast 400: 0.50×, slowest 400 against 800.
    assert!(line.contains("| 0.50× | 0.50× |"), "{line}");
    // Both the broadcast and the utility are cases of the summary.
    assert!(
        text.lines()
            .any(|l| l.starts_with("| 3 | 1gbit | 2 | 2 | 2 |")),
        "{text}"
    );
    assert_eq!(Bench::Gsendw.mpi_peer(), Some(Bench::Bcast));
    assert_eq!(Bench::Gcat.mpi_peer(), Some(Bench::Gather));
    assert_eq!(Bench::Alltoall.mpi_peer(), Some(Bench::Alltoall));
    assert_eq!(Bench::Shift.mpi_peer(), Some(Bench::Shift));
    assert_eq!(Bench::Bw.mpi_peer(), Some(Bench::Bw));
}
