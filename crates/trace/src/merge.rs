//! Joining the per-rank files a traced job wrote (`PREFIX.rank-N`, one JSON event a line,
//! the format is in the runtime's `trace.rs` and `docs/tracing.md`) into one Chrome /
//! Perfetto trace-event JSON document.
//!
//! Each rank is a process (`pid` = rank, the host `2^d`) named `rank N`, with three
//! threads: 1 `program` (calls, sends, receives), 2 `forwarding` (frames passed on for
//! others) and 3 `blocked` (waits). A message is the sender's (rank, id): its send, the
//! frame of every hop that forwarded it and its receive get the same `args.msg` number, and
//! are chained by flow arrows (`ph: "s"` / `"f"`, `bp: "e"`, one numeric id per leg).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::Error;

mod clock_fit;

/// One event of a per-rank file.
#[derive(Debug, Clone)]
struct Ev {
    rank: u32,
    v: Value,
}

impl Ev {
    fn u(&self, k: &str) -> u64 {
        self.v.get(k).and_then(Value::as_u64).unwrap_or(0)
    }
    fn s(&self, k: &str) -> &str {
        self.v.get(k).and_then(Value::as_str).unwrap_or("")
    }
}

/// What one rank's file held.
#[derive(Debug)]
struct RankFile {
    rank: u32,
    name: String,
    dim: u32,
    events: Vec<Ev>,
    /// The file ended in the middle of a line (the rank died while writing).
    truncated: bool,
    /// Lines (1-based) inside the file that were cut off and skipped.
    cut_lines: Vec<usize>,
    /// The rank reached finalize.
    ended: bool,
    /// What to add to this rank's times for rank 0's clock (its `clock` line), if known.
    offset: Option<i64>,
    /// How far that offset may be wrong (half its sample's round trip), for a rank whose
    /// clock is not rank 0's; refined within it by the messages (`clock_fit.rs`).
    clock_error: Option<i64>,
    /// Records the rank dropped (buffer full), and their bytes.
    dropped: (u64, u64),
    /// The recorder's memory: peak and bound (the `end` line; the bound also `start`'s).
    mem_peak: Option<u64>,
    mem_bound: Option<u64>,
}

/// The result of a merge.
#[derive(Debug)]
pub struct Merged {
    /// The Chrome trace-event document.
    pub doc: Value,
    /// Ranks merged.
    pub ranks: usize,
    /// Messages found (sent or received).
    pub messages: usize,
    /// Notes for the user: ranks that never finished, empty files.
    pub notes: Vec<String>,
    /// Warnings: files cut in a record, records the ranks dropped, arrows that point
    /// backwards in time (the merge went on; the trace is incomplete or skewed there).
    pub warnings: Vec<String>,
}

/// A node number in a per-rank file: a number, or `"host"` (then `2^dim`).
fn node(v: Option<&Value>, dim: u32) -> Option<u32> {
    match v? {
        Value::Number(n) => n.as_u64().map(|x| x as u32),
        Value::String(s) if s == "host" => Some(1u32 << dim),
        _ => None,
    }
}

/// The per-rank files of `prefix`: every `PREFIX.rank-*` next to it.
pub fn rank_files(prefix: &Path) -> Result<Vec<PathBuf>, Error> {
    let dir = match prefix.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let base = prefix
        .file_name()
        .ok_or_else(|| Error::new(prefix, "is not a file prefix"))?
        .to_string_lossy()
        .into_owned();
    let want = format!("{base}.rank-");
    let rd = std::fs::read_dir(&dir).map_err(|e| Error::new(&dir, format!("cannot list: {e}")))?;
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(&want))
        .map(|e| e.path())
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(Error::new(
            prefix,
            format!(
                "no per-rank trace files {want}* in {} (was HYPERCUBE_TRACE set to this prefix?)",
                dir.display()
            ),
        ));
    }
    Ok(files)
}

fn read_rank(path: &Path) -> Result<Option<RankFile>, Error> {
    let text = std::fs::read(path).map_err(|e| Error::new(path, format!("cannot read: {e}")))?;
    let text = String::from_utf8_lossy(&text);
    if text.trim().is_empty() {
        return Ok(None);
    }
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let mut events = Vec::new();
    let mut header: Option<(u32, String, u32)> = None;
    let mut mem_bound = None;
    let mut truncated = false;
    let mut cut_lines = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let last = i + 1 == lines.len();
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) if last && !complete => {
                truncated = true;
                break;
            }
            // A record cut short with more after it (a writer killed mid-write, then
            // another write): skip it, say so.
            Err(e) if e.is_eof() && i > 0 => {
                cut_lines.push(i + 1);
                continue;
            }
            Err(e) => {
                return Err(Error::new(
                    path,
                    format!("line {}: not a trace event ({e})", i + 1),
                ))
            }
        };
        if i == 0 {
            if v.get("ev").and_then(Value::as_str) != Some("start") {
                return Err(Error::new(
                    path,
                    "is not a hypercube per-rank trace (its first line is not a start event)",
                ));
            }
            let dim = v.get("dim").and_then(Value::as_u64).unwrap_or(0) as u32;
            let rank = node(v.get("rank"), dim)
                .ok_or_else(|| Error::new(path, "line 1: the start event names no rank"))?;
            let name = if rank == 1 << dim {
                "host".to_string()
            } else {
                format!("rank {rank}")
            };
            header = Some((rank, name, dim));
            mem_bound = v.get("mem_bound").and_then(Value::as_u64);
            continue;
        }
        let rank = header.as_ref().map_or(0, |h| h.0);
        events.push(Ev { rank, v });
    }
    let Some((rank, name, dim)) = header else {
        // Only a cut-off first line.
        return Ok(None);
    };
    let find = |ev: &str| events.iter().find(|e| e.s("ev") == ev).map(|e| &e.v);
    let ended = find("end").is_some();
    let offset = find("clock").and_then(|c| c.get("offset_ns")?.as_i64());
    let clock_error = find("clock")
        .filter(|c| c.get("same_clock").and_then(Value::as_bool) == Some(false))
        .and_then(|c| c.get("rtt_ns")?.as_u64())
        .map(|rtt| i64::try_from(rtt / 2).unwrap_or(i64::MAX));
    let end_u = |k: &str| find("end").and_then(|e| e.get(k)?.as_u64());
    // Drops: the end line's totals, or (a rank that died) the sum of its `lost` lines.
    let dropped = match (end_u("dropped"), end_u("dropped_bytes")) {
        (Some(n), Some(b)) => (n, b),
        _ => events
            .iter()
            .filter(|e| e.s("ev") == "lost")
            .fold((0, 0), |(n, b), e| (n + e.u("records"), b + e.u("bytes"))),
    };
    let mem_peak = end_u("mem_peak");
    let mem_bound = end_u("mem_bound").or(mem_bound);
    if let Some(off) = offset.filter(|o| *o != 0) {
        shift_times(&mut events, off);
    }
    Ok(Some(RankFile {
        rank,
        name,
        dim,
        events,
        truncated,
        cut_lines,
        ended,
        offset,
        clock_error,
        dropped,
        mem_peak,
        mem_bound,
    }))
}

/// Add `off` ns to every time of `events`.
fn shift_times(events: &mut [Ev], off: i64) {
    for e in events {
        for k in ["t", "t0", "t1"] {
            if let Some(t) = e.v.get(k).and_then(Value::as_u64) {
                e.v[k] = Value::from(t.saturating_add_signed(off));
            }
        }
    }
}

/// Merge the per-rank files of `prefix` into one Chrome / Perfetto document.
pub fn merge(prefix: &Path) -> Result<Merged, Error> {
    let mut ranks = Vec::new();
    let mut notes = Vec::new();
    for f in rank_files(prefix)? {
        match read_rank(&f)? {
            Some(r) => ranks.push(r),
            None => notes.push(format!("{}: empty, skipped", f.display())),
        }
    }
    if ranks.is_empty() {
        return Err(Error::new(prefix, "every per-rank trace file is empty"));
    }
    notes.extend(clock_fit::refine(&mut ranks));
    let mut warnings = Vec::new();
    // Drops: one warning per rank, or one for all when many ranks dropped.
    let droppers = ranks.iter().filter(|r| r.dropped.0 > 0).count();
    if droppers > 3 {
        let (n, b) = ranks
            .iter()
            .fold((0, 0), |(n, b), r| (n + r.dropped.0, b + r.dropped.1));
        let bounds: std::collections::BTreeSet<u64> =
            ranks.iter().filter_map(|r| r.mem_bound).collect();
        warnings.push(format!(
            "{droppers} ranks dropped {n} records ({b} bytes) in all because their trace buffers \
             were full{}; raise HYPERCUBE_TRACE_BUFFER to keep them (per rank: otherData.dropped)",
            match bounds.len() {
                1 => format!(" (bound {} bytes)", bounds.iter().next().unwrap_or(&0)),
                _ => String::new(),
            }
        ));
    }
    for r in &ranks {
        if r.truncated {
            warnings.push(format!(
                "{}: its file ends in the middle of a record (the rank was killed while writing?); \
                 merged up to the last whole record",
                r.name
            ));
        }
        if !r.cut_lines.is_empty() {
            warnings.push(format!(
                "{}: {} record(s) cut off inside the file (line {}); skipped",
                r.name,
                r.cut_lines.len(),
                r.cut_lines
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !r.ended {
            notes.push(format!("{}: did not reach finalize", r.name));
        }
        if r.dropped.0 > 0 && droppers <= 3 {
            warnings.push(format!(
                "{}: dropped {} records ({} bytes) because its trace buffer was full{}; \
                 raise HYPERCUBE_TRACE_BUFFER to keep them",
                r.name,
                r.dropped.0,
                r.dropped.1,
                r.mem_bound
                    .map(|b| format!(" (bound {b} bytes)"))
                    .unwrap_or_default()
            ));
        }
    }
    let dim = ranks.iter().map(|r| r.dim).max().unwrap_or(0);
    let t_min = ranks
        .iter()
        .flat_map(|r| r.events.iter())
        .flat_map(|e| [e.v.get("t0"), e.v.get("t")])
        .flatten()
        .filter_map(Value::as_u64)
        .min()
        .unwrap_or(0);
    let us = |t: u64| (t.saturating_sub(t_min)) as f64 / 1000.0;
    let mut out: Vec<Value> = Vec::new();

    // Messages: (source rank, id) -> number.
    let mut msgs: BTreeMap<(u32, u64), usize> = BTreeMap::new();
    let msg_no = |key: (u32, u64), msgs: &mut BTreeMap<(u32, u64), usize>| {
        let n = msgs.len();
        *msgs.entry(key).or_insert(n)
    };
    // Flow points of each message: (time ns, rank, tid, order) — send, hops, receive.
    let mut points: HashMap<usize, Vec<(u64, u32, u32, u8)>> = HashMap::new();

    for r in &ranks {
        let pid = r.rank;
        out.push(json!({"ph":"M","pid":pid,"name":"process_name","args":{"name":r.name}}));
        out.push(json!({"ph":"M","pid":pid,"name":"process_sort_index","args":{"sort_index":pid}}));
        for (tid, n) in [(1, "program"), (2, "forwarding"), (3, "blocked")] {
            out.push(json!({"ph":"M","pid":pid,"tid":tid,"name":"thread_name","args":{"name":n}}));
        }
        // Forwarded frames are instants; give each slice up to 1 µs, never overlapping.
        let fwd_times: Vec<u64> = r
            .events
            .iter()
            .filter(|e| e.s("ev") == "fwd")
            .map(|e| e.u("t"))
            .collect();
        let mut fwd_i = 0;
        for e in &r.events {
            let ev = e.s("ev");
            match ev {
                "send" | "recv" => {
                    let Some(peer) = node(e.v.get("peer"), dim) else {
                        continue;
                    };
                    let src = if ev == "send" { e.rank } else { peer };
                    let m = msg_no((src, e.u("id")), &mut msgs);
                    let (t0, t1) = (e.u("t0"), e.u("t1").max(e.u("t0")));
                    let peer_name = if peer == 1 << dim {
                        "host".to_string()
                    } else {
                        peer.to_string()
                    };
                    let name = if ev == "send" {
                        format!("send to {peer_name}")
                    } else {
                        format!("recv from {peer_name}")
                    };
                    out.push(json!({"ph":"X","cat":ev,"name":name,"pid":pid,"tid":1,
                        "ts":us(t0),"dur":us(t1)-us(t0),
                        "args":{"peer":peer,"tag":e.u("tag"),"bytes":e.u("bytes"),"msg":m,"id":e.u("id")}}));
                    let p = if ev == "send" {
                        (t0, pid, 1, 0)
                    } else {
                        (t1, pid, 1, 2)
                    };
                    points.entry(m).or_default().push(p);
                }
                "fwd" => {
                    let t = e.u("t");
                    let next = fwd_times.get(fwd_i + 1).copied().unwrap_or(u64::MAX);
                    fwd_i += 1;
                    let dur_ns = next.saturating_sub(t).clamp(1, 1000);
                    let (Some(src), Some(dest)) =
                        (node(e.v.get("src"), dim), node(e.v.get("dest"), dim))
                    else {
                        continue;
                    };
                    let m = msg_no((src, e.u("id")), &mut msgs);
                    let kind = e.s("kind");
                    out.push(json!({"ph":"X","cat":"forward","name":format!("forward {src}→{dest} ({kind})"),
                        "pid":pid,"tid":2,"ts":us(t),"dur":dur_ns as f64/1000.0,
                        "args":{"src":src,"dest":dest,"kind":kind,"bytes":e.u("bytes"),"link":e.u("link"),"msg":m}}));
                    if kind != "data" {
                        points.entry(m).or_default().push((t, pid, 2, 1));
                    }
                }
                "wait" => {
                    let (t0, t1) = (e.u("t0"), e.u("t1").max(e.u("t0")));
                    out.push(
                        json!({"ph":"X","cat":"wait","name":"blocked","pid":pid,"tid":3,
                        "ts":us(t0),"dur":us(t1)-us(t0),"args":{"what":e.s("what")}}),
                    );
                }
                "call" => {
                    let (t0, t1) = (e.u("t0"), e.u("t1").max(e.u("t0")));
                    let alg = e.s("alg");
                    let name = if alg.is_empty() {
                        e.s("name").to_string()
                    } else {
                        format!("{} ({alg})", e.s("name"))
                    };
                    out.push(json!({"ph":"X","cat":"call","name":name,"pid":pid,"tid":1,
                        "ts":us(t0),"dur":us(t1)-us(t0),
                        "args":{"op":e.s("name"),"alg":alg,"k":e.u("k"),"base":e.v.get("base"),
                                "root":e.v.get("root"),"bytes":e.u("bytes")}}));
                }
                _ => {}
            }
        }
    }

    // Flow arrows: one leg per pair of consecutive points of a message.
    let mut flow_id = 1u64;
    let mut backwards = 0usize;
    let mut ms: Vec<_> = points.into_iter().collect();
    ms.sort_by_key(|(m, _)| *m);
    for (m, mut pts) in ms {
        pts.sort_by_key(|p| (p.3, p.0));
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.0 < a.0 {
                backwards += 1;
            }
            // The end binds to the enclosing slice: just inside a receive's end.
            let b_ts = if b.3 == 2 {
                us(b.0.saturating_sub(1).max(a.0))
            } else {
                us(b.0.max(a.0))
            };
            out.push(json!({"ph":"s","id":flow_id,"cat":"msg","name":"message","pid":a.1,"tid":a.2,"ts":us(a.0),"args":{"msg":m}}));
            out.push(json!({"ph":"f","bp":"e","id":flow_id,"cat":"msg","name":"message","pid":b.1,"tid":b.2,"ts":b_ts,"args":{"msg":m}}));
            flow_id += 1;
        }
    }
    if backwards > 0 {
        warnings.push(format!(
            "{backwards} of {} message arrows point backwards in time (ranks on hosts whose \
             clocks differ, and no offset or a poor one?); they are drawn as instantaneous",
            flow_id - 1
        ));
    }
    let per_rank = |f: &dyn Fn(&RankFile) -> Option<Value>| -> serde_json::Map<String, Value> {
        ranks
            .iter()
            .filter_map(|r| Some((r.rank.to_string(), f(r)?)))
            .collect()
    };
    let offsets = per_rank(&|r| r.offset.map(Value::from));
    let dropped = per_rank(&|r| Some(json!({"records": r.dropped.0, "bytes": r.dropped.1})));
    let memory = per_rank(&|r| Some(json!({"peak": r.mem_peak, "bound": r.mem_bound})));
    let messages = msgs.len();
    let doc = json!({
        "traceEvents": out,
        "displayTimeUnit": "ns",
        "otherData": {
            "hypercube_trace": 1,
            "dim": dim,
            "ranks": ranks.len(),
            "messages": messages,
            "clock": "CLOCK_MONOTONIC of rank 0's host, other hosts' ranks shifted by their \
                      clock_offsets_ns; ts in µs from the first event",
            "clock_offsets_ns": offsets,
            "dropped": dropped,
            "memory": memory,
            "notes": notes,
            "warnings": warnings,
        }
    });
    Ok(Merged {
        doc,
        ranks: ranks.len(),
        messages,
        notes,
        warnings,
    })
}

/// Merge `prefix`'s files and write the document to `out`.
pub fn merge_to(prefix: &Path, out: &Path) -> Result<Merged, Error> {
    let m = merge(prefix)?;
    let text = serde_json::to_string(&m.doc).map_err(|e| Error::new(out, e.to_string()))?;
    std::fs::write(out, text).map_err(|e| Error::new(out, format!("cannot write: {e}")))?;
    Ok(m)
}
#[cfg(test)]
mod tests;
