//! Message traces (`docs/tracing.md`) through the real launcher: `hcrun --trace`, the
//! per-rank files under `HYPERCUBE_TRACE` and `hctrace merge`, `hctrace stats` and
//! `timeline`, a job whose rank dies, and `hctrace` on files that are not traces.

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use hypercube_tests::{example, run_hcrun, TempDir};

#[path = "support/trace.rs"]
mod support;
use support::*;

#[test]
fn an_antipodal_exchange_gives_eight_flows_through_sixteen_hops() {
    let dir = TempDir::new("trace-antipodal");
    let (doc, json) = antipodal_trace(&dir);
    check_antipodal(&doc);

    // stats: every rank sent 1, received 1, forwarded 2 frames.
    let out = hctrace(&["stats", json.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 8, "{}", out.stdout);
    for r in rows {
        assert_eq!((r[1], r[4], r[7]), ("1", "1", "2"), "{}", out.stdout);
    }

    // timeline: well-formed XML with one line per message; a window keeps a valid picture.
    let svg = dir.path().join("t.svg");
    let out = hctrace(&[
        "timeline",
        json.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&svg).unwrap();
    check_xml(&text);
    assert_eq!(text.matches("<polyline class=\"msg\"").count(), 8);
    assert_eq!(text.matches("<circle class=\"hop\"").count(), 16);
    let out = hctrace(&[
        "timeline",
        json.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
        "--window",
        "0:10s",
    ]);
    assert!(out.status.success(), "{out:?}");
    check_xml(&std::fs::read_to_string(&svg).unwrap());
    let out = hctrace(&[
        "timeline",
        json.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
        "--window",
        "5ms:1ms",
    ]);
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("ends before it starts"),
        "{}",
        out.stderr
    );
}

#[test]
fn per_rank_files_under_hypercube_trace_merge_with_hctrace() {
    let dir = TempDir::new("trace-env");
    let prefix = dir.path().join("job");
    let prog = example("antipodal");
    let out = run_hcrun(
        &["--dim", "3", "--timeout-s", "60"],
        &[prog.to_str().unwrap()],
        &[("HYPERCUBE_TRACE", prefix.to_str().unwrap())],
        Duration::from_secs(90),
    );
    out.assert_ok();
    for r in 0..8 {
        let f = dir.path().join(format!("job.rank-{r}"));
        assert!(f.exists(), "{} missing", f.display());
    }
    let json = dir.path().join("m.json");
    let out = hctrace(&[
        "merge",
        prefix.to_str().unwrap(),
        "-o",
        json.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    check_antipodal(&load(&json));
}

#[test]
fn a_rank_that_dies_leaves_a_trace_of_the_others() {
    let dir = TempDir::new("trace-dies");
    let (out, json) = traced(
        &dir,
        "t.json",
        2,
        60,
        &[env!("CARGO_BIN_EXE_fail"), "1", "abort"],
        &[],
    );
    assert!(!out.status.success(), "{out:?}");
    let doc = load(&json);
    let ranks: BTreeSet<u64> = events(&doc, "M")
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, (0..4).collect(), "{}", out.stderr);
    assert!(
        out.stderr.contains("rank 1: did not reach finalize"),
        "{}",
        out.stderr
    );
    let out = hctrace(&["stats", json.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn hctrace_names_the_file_and_the_problem_on_bad_input() {
    let dir = TempDir::new("trace-bad");
    let p = |n: &str| dir.path().join(n);
    std::fs::write(p("empty.json"), "").unwrap();
    std::fs::write(p("cut.json"), r#"{"traceEvents":[{"ph":"M","pid":0,"#).unwrap();
    std::fs::write(p("foreign.json"), r#"{"traceEvents":[],"otherData":{}}"#).unwrap();
    std::fs::write(p("list.json"), "[1, 2, 3]").unwrap();
    std::fs::write(p("garbage.json"), "\u{1}\u{2}not json").unwrap();
    std::fs::write(
        p("job.rank-2"),
        "{\"ev\":\"start\",\"rank\":2,\"dim\":2,\"pid\":9,\"t\":5}\n{\"ev\":\"end\",\"t\":6}\n",
    )
    .unwrap();
    let cases = [
        ("empty.json", "is empty"),
        ("cut.json", "is cut off"),
        ("foreign.json", "is not a hypercube trace"),
        ("list.json", "is not a hypercube trace"),
        ("garbage.json", "is not valid JSON"),
        ("job.rank-2", "is a per-rank trace file"),
        ("missing.json", "cannot read"),
    ];
    for (name, what) in cases {
        let f = p(name);
        for cmd in [
            vec!["stats", f.to_str().unwrap()],
            vec!["timeline", f.to_str().unwrap(), "-o", "/dev/null"],
        ] {
            let out = hctrace(&cmd);
            assert_eq!(out.status.code(), Some(1), "{cmd:?}: {out:?}");
            assert!(
                out.stderr.contains(f.to_str().unwrap()) && out.stderr.contains(what),
                "{cmd:?}: wanted the file and {what:?}:\n{}",
                out.stderr
            );
            assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        }
    }
    // merge: no files for the prefix; a per-rank file that is not one.
    let out = hctrace(&["merge", p("nothing").to_str().unwrap(), "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("no per-rank trace files"),
        "{}",
        out.stderr
    );
    // A per-rank file cut in its last record (a rank killed while writing): merged up to
    // it, with a warning.
    std::fs::write(
        p("cut.rank-0"),
        "{\"ev\":\"start\",\"rank\":0,\"dim\":0,\"pid\":1,\"t\":5}\n\
         {\"ev\":\"wait\",\"t0\":6,\"t1\":9,\"what\":\"x\"}\n{\"ev\":\"send\",\"t0\":1",
    )
    .unwrap();
    let out = hctrace(&[
        "merge",
        p("cut").to_str().unwrap(),
        "-o",
        p("cut-m.json").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stderr
            .contains("warning: rank 0: its file ends in the middle of a record"),
        "{}",
        out.stderr
    );
    assert_eq!(slices(&load(&p("cut-m.json")), "wait").len(), 1);
    std::fs::write(p("x.rank-0"), "{\"hello\":1}\n").unwrap();
    let out = hctrace(&["merge", p("x").to_str().unwrap(), "-o", "/dev/null"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        out.stderr.contains("x.rank-0") && out.stderr.contains("not a hypercube per-rank trace"),
        "{}",
        out.stderr
    );
}

#[test]
fn steps_draws_gops_tree_on_the_3_cube() {
    let dir = TempDir::new("trace-steps");
    let prog = example("normalize");
    let (out, json) = traced(&dir, "n.json", 3, 60, &[prog.to_str().unwrap()], &[]);
    out.assert_ok();
    // Call 0 is GOP's first reduction: 7 messages up the tree in 3 steps.
    let svg = dir.path().join("s.svg");
    let out = hctrace(&[
        "steps",
        json.to_str().unwrap(),
        "--call",
        "0",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = std::fs::read_to_string(&svg).unwrap();
    check_xml(&text);
    assert!(text.contains("GOP on a 3-cube"), "{text}");
    assert_eq!(text.matches("<path class=\"msg\"").count(), 7);
    assert_eq!(text.matches("<g class=\"step\"").count(), 3);
    // Past the last call: how many there are.
    let out = hctrace(&[
        "steps",
        json.to_str().unwrap(),
        "--call",
        "99",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stderr.contains("there are 5 calls"), "{}", out.stderr);
}

#[test]
fn a_sigkilled_rank_leaves_what_it_recorded_before_the_kill() {
    let dir = TempDir::new("trace-sigkill");
    let (out, json) = traced(
        &dir,
        "t.json",
        2,
        60,
        &[env!("CARGO_BIN_EXE_trace_job"), "kill", "1"],
        &[],
    );
    assert!(!out.status.success(), "{out:?}");
    assert!(
        out.stdout.contains("sleeping, then SIGKILL"),
        "rank 1 did not get to its kill:\n{}\n{}",
        out.stdout,
        out.stderr
    );
    let doc = load(&json);
    let ranks: BTreeSet<u64> = events(&doc, "M")
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["pid"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, (0..4).collect(), "{}", out.stderr);
    // Every rank's exchange along dimension 0 (type 5), the killed rank's too.
    for r in 0..4u64 {
        assert_eq!(tagged(&doc, "send", r, 5).len(), 1, "rank {r}'s send");
        assert_eq!(tagged(&doc, "recv", r, 5).len(), 1, "rank {r}'s receive");
    }
    // The killed rank's three sends that no wait followed: only the writer thread put
    // them on disk, 600 ms before the kill.
    assert_eq!(
        tagged(&doc, "send", 1, 7).len(),
        3,
        "the killed rank's last sends are missing:\n{}",
        out.stderr
    );
    assert_eq!(tagged(&doc, "recv", 0, 7).len(), 3);
    assert!(
        out.stderr.contains("rank 1: did not reach finalize"),
        "{}",
        out.stderr
    );
    let out = hctrace(&["stats", json.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_6_cube_job_stays_within_its_trace_memory_bound_and_counts_what_it_dropped() {
    let dir = TempDir::new("trace-bound");
    let bound = 4096u64;
    let (out, json) = traced(
        &dir,
        "t.json",
        6,
        120,
        &[env!("CARGO_BIN_EXE_trace_job"), "burst", "300"],
        &[("HYPERCUBE_TRACE_BUFFER", &bound.to_string())],
    );
    out.assert_ok();
    let doc = load(&json);
    let other = &doc["otherData"];
    assert_eq!(other["ranks"], 64, "{}", out.stderr);
    let memory = other["memory"].as_object().expect("otherData.memory");
    assert_eq!(memory.len(), 64, "{memory:?}");
    for (r, m) in memory {
        assert_eq!(m["bound"].as_u64(), Some(bound), "rank {r}: {m}");
        let peak = m["peak"]
            .as_u64()
            .unwrap_or_else(|| panic!("rank {r}: {m}"));
        assert!(
            peak > 0 && peak <= bound,
            "rank {r}: peak {peak} > bound {bound}"
        );
    }
    // 300 eager sends a rank in a burst: ~30 KiB of records, where 2 KiB fill a buffer
    // within microseconds, faster than the writer thread gets a core on this 2-core
    // machine shared by 64 ranks; what did not fit was dropped and counted.
    let dropped: u64 = other["dropped"]
        .as_object()
        .unwrap()
        .values()
        .map(|d| d["records"].as_u64().unwrap())
        .sum();
    assert!(dropped > 0, "nothing dropped: {other}");
    assert!(
        out.stderr.contains("trace: warning:")
            && out.stderr.contains("because their trace buffers were full"),
        "{}",
        out.stderr
    );
    let out = hctrace(&["stats", json.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout.contains(&format!("dropped: {dropped} records")),
        "{}",
        out.stdout
    );
}

#[test]
fn a_skewed_clock_is_estimated_at_start_up_and_corrected_in_the_merge() {
    let dir = TempDir::new("trace-skew");
    let skew: i64 = 250_000_000; // rank 2's clock runs 250 ms ahead
    let prog = example("antipodal");
    let (out, json) = traced(
        &dir,
        "t.json",
        2,
        60,
        &[prog.to_str().unwrap()],
        &[("HYPERCUBE_TRACE_CLOCK_SKEW_NS", &format!("2={skew}"))],
    );
    out.assert_ok();
    let doc = load(&json);
    let offsets = &doc["otherData"]["clock_offsets_ns"];
    for r in ["0", "1", "3"] {
        assert_eq!(offsets[r], 0, "rank {r} shares rank 0's clock: {offsets}");
    }
    let est = offsets["2"].as_i64().expect("rank 2's offset");
    assert!(
        (est + skew).abs() < 5_000_000,
        "rank 2's offset {est} ns, the injected skew {skew} ns"
    );
    assert!(!out.stderr.contains("backwards"), "{}", out.stderr);
    // Every message received after it was sent, and after every hop.
    let mut send: HashMap<u64, f64> = HashMap::new();
    for s in slices(&doc, "send") {
        send.insert(
            s["args"]["msg"].as_u64().unwrap(),
            s["ts"].as_f64().unwrap(),
        );
    }
    let recvs = slices(&doc, "recv");
    assert_eq!(recvs.len(), 4);
    for r in recvs {
        let m = r["args"]["msg"].as_u64().unwrap();
        let end = r["ts"].as_f64().unwrap() + r["dur"].as_f64().unwrap();
        assert!(
            send[&m] <= end,
            "message {m} received before it was sent: {r}"
        );
    }
    for f in slices(&doc, "forward") {
        let m = f["args"]["msg"].as_u64().unwrap();
        assert!(
            send[&m] <= f["ts"].as_f64().unwrap(),
            "message {m} forwarded before it was sent: {f}"
        );
    }
}

#[test]
fn steps_labels_an_allreduce_with_the_contributions_each_message_carries() {
    let dir = TempDir::new("trace-labels");
    let prog = example("grama");
    let (out, json) = traced(&dir, "g.json", 3, 60, &[prog.to_str().unwrap()], &[]);
    out.assert_ok();
    let svg = dir.path().join("s.svg");
    let draw = |call: &str| {
        let out = hctrace(&[
            "steps",
            json.to_str().unwrap(),
            "--call",
            call,
            "-o",
            svg.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
        let text = std::fs::read_to_string(&svg).unwrap();
        check_xml(&text);
        text
    };
    let label = |text: &str, l: &str| text.matches(&format!("\">{l}</text>")).count();
    // Call 1, the all-reduce: pairs, then fours, and at the end everyone has all eight.
    let text = draw("1");
    assert!(text.contains("allreduce (Hypercube) on a 3-cube"), "{text}");
    for n in 0..8 {
        assert_eq!(
            label(&text, &format!("1 [{n}]")),
            1,
            "step 1 from {n}\n{text}"
        );
    }
    for pair in ["[0+1]", "[2+3]", "[4+5]", "[6+7]"] {
        assert_eq!(label(&text, &format!("2 {pair}")), 2, "{pair}\n{text}");
    }
    assert_eq!(label(&text, "3 [0..3]"), 4, "{text}");
    assert_eq!(label(&text, "3 [4..7]"), 4, "{text}");
    assert!(
        text.contains("after step 3: every node has [0..7]"),
        "{text}"
    );
    // Call 0, the broadcast from node 0: every arrow carries the root's data.
    let text = draw("0");
    assert_eq!(text.matches("<path class=\"msg\"").count(), 7);
    assert_eq!(text.matches(" [0]</text>").count(), 7, "{text}");
    // Call 2, the all-to-all of one block per pair: four blocks cross each link per step.
    let text = draw("2");
    assert_eq!(text.matches(" 4 blocks</text>").count(), 24, "{text}");
}
