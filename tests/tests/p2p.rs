//! Point-to-point across real processes, through the launcher, for d = 0..4.

use hypercube_tests::run_job;

const CHECKS: &[&str] = &[
    "identity",
    "all_pairs_forwarding",
    "type_selection_and_any",
    "order_per_source_and_type",
    "nonblocking_and_probe",
    "truncation_keeps_message",
    "serde_values",
    "bad_arguments",
    "self_send",
    "forwarding_while_busy",
    "multi_part_messages",
];

fn suite(d: u32) {
    run_job(d, env!("CARGO_BIN_EXE_p2p"), &[])
        .assert_ok()
        .assert_every_rank_passed(1 << d, CHECKS);
}

#[test]
fn p2p_d0() {
    suite(0);
}
#[test]
fn p2p_d1() {
    suite(1);
}
#[test]
fn p2p_d2() {
    suite(2);
}
#[test]
fn p2p_d3() {
    suite(3);
}
#[test]
fn p2p_d4() {
    suite(4);
}

#[test]
fn message_of_64_mib_over_d_hops() {
    let out = run_job(3, env!("CARGO_BIN_EXE_big"), &[]);
    out.assert_ok();
    assert!(
        out.rank_lines(0).contains(&"OK big 67108864"),
        "{}",
        out.stdout
    );
}

#[test]
fn sender_outpacing_receiver_stays_bounded() {
    // 2000 x 256 KiB = 500 MiB sent while the receiver sleeps; its memory must stay far
    // below that (eager credit + announced envelopes only).
    let out = hypercube_tests::run_hcrun(
        &["--dim", "1"],
        &[env!("CARGO_BIN_EXE_flow"), "2000", "262144"],
        &[("HYPERCUBE_MAX_PENDING", "8388608")],
        std::time::Duration::from_secs(120),
    );
    out.assert_ok();
    let rss: u64 = out
        .rank_lines(1)
        .iter()
        .find_map(|l| l.strip_prefix("RSS_KIB ")?.parse().ok())
        .expect("receiver printed no RSS");
    assert!(
        rss < 100 * 1024,
        "receiver RSS {rss} KiB while the sender outpaced it"
    );
    assert!(out.rank_lines(1).contains(&"RECEIVED 2000"));
}

/// `HYPERCUBE_LINK_STATS=1`: at finalize every rank prints a line per link — its frames by
/// kind, written and read — and the p2p suite's traffic shows in them (each link carried
/// eager messages and the finalize's `Fin` and `Close`). Another value is refused by name.
#[test]
fn link_stats_print_every_links_frames_at_finalize() {
    use std::time::Duration;
    let prog = env!("CARGO_BIN_EXE_p2p");
    let out = hypercube_tests::run_hcrun(
        &["--dim", "2"],
        &[prog],
        &[("HYPERCUBE_LINK_STATS", "1")],
        Duration::from_secs(120),
    );
    out.assert_ok();
    for r in 0..4u32 {
        let rank = format!("[{r}] ");
        let lines: Vec<&str> = out
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix(rank.as_str()))
            .filter(|l| l.starts_with("link stats: "))
            .collect();
        assert_eq!(lines.len(), 2, "rank {r}: a line per link\n{}", out.stderr);
        for l in &lines {
            assert!(
                l.starts_with(&format!("link stats: node {r}, link to node "))
                    && l.contains("(Eager ")
                    && l.contains("Fin ")
                    && l.contains("Close 1"),
                "{l}"
            );
        }
    }
    let out = hypercube_tests::run_hcrun(
        &["--dim", "1"],
        &[prog],
        &[("HYPERCUBE_LINK_STATS", "yes")],
        Duration::from_secs(60),
    );
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("HYPERCUBE_LINK_STATS=\"yes\": use 1"),
        "{}",
        out.stderr
    );
}
