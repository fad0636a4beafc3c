//! Unit tests of the merge: cut files, clock offsets, drops, bad lines.

use super::*;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hctrace-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_file_cut_in_a_line_is_merged_up_to_it() {
    let d = dir("cut");
    let r0 = "{\"ev\":\"start\",\"rank\":0,\"dim\":1,\"pid\":1,\"t\":1000}\n\
              {\"ev\":\"send\",\"t0\":2000,\"t1\":3000,\"peer\":1,\"tag\":3,\"bytes\":8,\"id\":0}\n\
              {\"ev\":\"end\",\"t\":9000}\n";
    let r1 = "{\"ev\":\"start\",\"rank\":1,\"dim\":1,\"pid\":2,\"t\":1000}\n\
              {\"ev\":\"recv\",\"t0\":1500,\"t1\":4000,\"peer\":0,\"tag\":3,\"bytes\":8,\"id\":0}\n\
              {\"ev\":\"wait\",\"t0\":16";
    std::fs::write(d.join("p.rank-0"), r0).unwrap();
    std::fs::write(d.join("p.rank-1"), r1).unwrap();
    std::fs::write(d.join("p.rank-2"), "").unwrap();
    let m = merge(&d.join("p")).unwrap();
    assert_eq!((m.ranks, m.messages), (2, 1));
    assert!(m
        .warnings
        .iter()
        .any(|n| n.contains("rank 1") && n.contains("middle of a record")));
    assert!(m.notes.iter().any(|n| n.contains("empty")));
    let flows = m.doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "s" || e["ph"] == "f")
        .count();
    assert_eq!(flows, 2);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_record_cut_inside_a_file_is_skipped_with_a_warning() {
    let d = dir("cut-inside");
    let r0 = "{\"ev\":\"start\",\"rank\":0,\"dim\":1,\"pid\":1,\"t\":1000}\n\
              {\"ev\":\"send\",\"t0\":2000,\"t1\":3000,\"peer\":1,\"tag\":3,\"by\n\
              {\"ev\":\"send\",\"t0\":5000,\"t1\":6000,\"peer\":1,\"tag\":3,\"bytes\":8,\"id\":1}\n\
              {\"ev\":\"end\",\"t\":9000}\n";
    std::fs::write(d.join("p.rank-0"), r0).unwrap();
    let m = merge(&d.join("p")).unwrap();
    assert_eq!((m.ranks, m.messages), (1, 1));
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("rank 0") && w.contains("cut off") && w.contains("line 2")),
        "{:?}",
        m.warnings
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn clock_offsets_shift_a_rank_and_drops_are_warned() {
    let d = dir("offset");
    // Rank 1's clock is 1 ms behind: uncorrected, its receive would end before the send.
    let r0 = "{\"ev\":\"start\",\"rank\":0,\"dim\":1,\"pid\":1,\"t\":1000000}\n\
              {\"ev\":\"clock\",\"ref\":0,\"offset_ns\":0,\"rtt_ns\":0,\"samples\":0,\"same_clock\":true}\n\
              {\"ev\":\"send\",\"t0\":2000000,\"t1\":2001000,\"peer\":1,\"tag\":3,\"bytes\":8,\"id\":0}\n\
              {\"ev\":\"end\",\"t\":9000000,\"records\":2,\"dropped\":0,\"dropped_bytes\":0,\"mem_peak\":100,\"mem_bound\":4096}\n";
    let r1 = "{\"ev\":\"start\",\"rank\":1,\"dim\":1,\"pid\":2,\"t\":1000000,\"mem_bound\":4096}\n\
              {\"ev\":\"clock\",\"ref\":0,\"offset_ns\":1000000,\"rtt_ns\":50000,\"samples\":16,\"same_clock\":false}\n\
              {\"ev\":\"recv\",\"t0\":1200000,\"t1\":1400000,\"peer\":0,\"tag\":3,\"bytes\":8,\"id\":0}\n\
              {\"ev\":\"lost\",\"t\":3000000,\"records\":5,\"bytes\":500}\n";
    std::fs::write(d.join("p.rank-0"), r0).unwrap();
    std::fs::write(d.join("p.rank-1"), r1).unwrap();
    let m = merge(&d.join("p")).unwrap();
    let recv = m.doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["cat"] == "recv")
        .unwrap();
    // First event: the send at 2 ms; the receive, shifted, from 2.2 ms to 2.4 ms.
    assert_eq!(recv["ts"].as_f64(), Some(200.0));
    assert_eq!(recv["dur"].as_f64(), Some(200.0));
    assert_eq!(m.doc["otherData"]["clock_offsets_ns"]["1"], 1000000);
    assert_eq!(m.doc["otherData"]["dropped"]["1"]["records"], 5);
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("rank 1") && w.contains("dropped 5 records")),
        "{:?}",
        m.warnings
    );
    assert!(
        !m.warnings.iter().any(|w| w.contains("backwards")),
        "{:?}",
        m.warnings
    );
    // Without the offset the arrow points backwards, and the merge says so.
    let r1 = r1.replace("\"offset_ns\":1000000", "\"offset_ns\":0");
    std::fs::write(d.join("p.rank-1"), r1).unwrap();
    let m = merge(&d.join("p")).unwrap();
    assert!(
        m.warnings
            .iter()
            .any(|w| w.contains("1 of 1 message arrows point backwards")),
        "{:?}",
        m.warnings
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_bad_line_inside_a_file_is_an_error_naming_it() {
    let d = dir("bad");
    let r0 = "{\"ev\":\"start\",\"rank\":0,\"dim\":0,\"pid\":1,\"t\":1}\nnonsense\n{\"ev\":\"end\",\"t\":2}\n";
    std::fs::write(d.join("p.rank-0"), r0).unwrap();
    let e = merge(&d.join("p")).unwrap_err().to_string();
    assert!(e.contains("p.rank-0") && e.contains("line 2"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}
