//! Reading a merged trace back ([`Trace::load`]): the slices of each rank and the
//! messages they name, checked enough that a foreign or cut-off file is a clear error.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::Error;

/// One `X` slice of the merged trace.
#[derive(Debug, Clone)]
pub struct Slice {
    /// The rank (process id).
    pub pid: u32,
    /// 1 program, 2 forwarding, 3 blocked.
    pub tid: u32,
    /// `call`, `send`, `recv`, `forward` or `wait`.
    pub cat: String,
    /// The slice's name.
    pub name: String,
    /// Start, µs from the first event.
    pub ts: f64,
    /// Duration, µs.
    pub dur: f64,
    /// The slice's arguments.
    pub args: Value,
}

impl Slice {
    /// An unsigned argument (0 if absent).
    pub fn arg(&self, k: &str) -> u64 {
        self.args.get(k).and_then(Value::as_u64).unwrap_or(0)
    }
    /// The end, µs.
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// One message: where it was sent, forwarded and received.
#[derive(Debug, Clone, Default)]
pub struct Msg {
    /// The send slice (sender's rank, start).
    pub send: Option<(u32, f64)>,
    /// Each hop's envelope frame (rank, time), in time order.
    pub hops: Vec<(u32, f64)>,
    /// The receive slice (receiver's rank, end).
    pub recv: Option<(u32, f64)>,
    /// Payload bytes.
    pub bytes: u64,
}

/// A merged trace.
#[derive(Debug)]
pub struct Trace {
    /// Rank (pid) → its name, in order.
    pub ranks: BTreeMap<u32, String>,
    /// Every `X` slice.
    pub slices: Vec<Slice>,
    /// Cube dimension.
    pub dim: u32,
    /// The merge's `otherData` (clock offsets, dropped records, recorder memory, warnings).
    pub other: Value,
}

impl Trace {
    /// Read a merged trace (`hcrun --trace` / `hctrace merge` output).
    pub fn load(path: &Path) -> Result<Trace, Error> {
        let text =
            std::fs::read(path).map_err(|e| Error::new(path, format!("cannot read: {e}")))?;
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(Error::new(path, "is empty (not a trace)"));
        }
        let doc: Value = serde_json::from_slice(&text).map_err(|e| {
            let first = text.split(|b| *b == b'\n').next().unwrap_or(&[]);
            let per_rank = serde_json::from_slice::<Value>(first)
                .is_ok_and(|v| v.get("ev").and_then(Value::as_str) == Some("start"));
            if per_rank {
                Error::new(
                    path,
                    "is a per-rank trace file (one event a line), not a merged trace: merge \
                     the job's files first (hctrace merge PREFIX -o t.json), then use t.json",
                )
            } else if e.is_eof() {
                Error::new(path, format!("is cut off: the JSON ends early ({e})"))
            } else {
                Error::new(path, format!("is not valid JSON ({e})"))
            }
        })?;
        Trace::from_doc(&doc).map_err(|what| Error::new(path, what))
    }

    /// Read a merged trace document.
    pub fn from_doc(doc: &Value) -> Result<Trace, String> {
        let ours = doc
            .get("otherData")
            .and_then(|o| o.get("hypercube_trace"))
            .is_some();
        let events = doc.get("traceEvents").and_then(Value::as_array);
        let (true, Some(events)) = (ours, events) else {
            return Err(
                "is not a hypercube trace (no traceEvents with otherData.hypercube_trace; \
                        make one with hcrun --trace or hctrace merge)"
                    .into(),
            );
        };
        let dim = doc["otherData"]
            .get("dim")
            .and_then(Value::as_u64)
            .unwrap_or(0) as u32;
        let mut ranks = BTreeMap::new();
        let mut slices = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let ph = e.get("ph").and_then(Value::as_str).unwrap_or("");
            let pid = e.get("pid").and_then(Value::as_u64);
            match ph {
                "M" if e.get("name").and_then(Value::as_str) == Some("process_name") => {
                    let name = e["args"]["name"].as_str().unwrap_or("?").to_string();
                    ranks.insert(pid.unwrap_or(0) as u32, name);
                }
                "X" => {
                    let num = |k: &str| e.get(k).and_then(Value::as_f64);
                    let (Some(pid), Some(ts), Some(dur)) = (pid, num("ts"), num("dur")) else {
                        return Err(format!("event {i}: an X slice without pid, ts or dur"));
                    };
                    slices.push(Slice {
                        pid: pid as u32,
                        tid: e.get("tid").and_then(Value::as_u64).unwrap_or(0) as u32,
                        cat: e.get("cat").and_then(Value::as_str).unwrap_or("").into(),
                        name: e.get("name").and_then(Value::as_str).unwrap_or("").into(),
                        ts,
                        dur,
                        args: e.get("args").cloned().unwrap_or(Value::Null),
                    });
                }
                _ => {}
            }
        }
        Ok(Trace {
            ranks,
            slices,
            dim,
            other: doc["otherData"].clone(),
        })
    }

    /// The messages, by their number in the trace.
    pub fn messages(&self) -> BTreeMap<u64, Msg> {
        let mut msgs: BTreeMap<u64, Msg> = BTreeMap::new();
        for s in &self.slices {
            let Some(m) = s.args.get("msg").and_then(Value::as_u64) else {
                continue;
            };
            let e = msgs.entry(m).or_default();
            match s.cat.as_str() {
                "send" => {
                    e.send = Some((s.pid, s.ts));
                    e.bytes = s.arg("bytes");
                }
                "recv" => {
                    e.recv = Some((s.pid, s.end()));
                    e.bytes = s.arg("bytes");
                }
                "forward" if s.args.get("kind").and_then(Value::as_str) != Some("data") => {
                    e.hops.push((s.pid, s.ts))
                }
                _ => {}
            }
        }
        for m in msgs.values_mut() {
            m.hops.sort_by(|a, b| a.1.total_cmp(&b.1));
        }
        msgs
    }

    /// Records each rank dropped because its trace buffer was full (ranks that dropped
    /// none left out).
    pub fn dropped(&self) -> BTreeMap<u32, u64> {
        let Some(d) = self.other.get("dropped").and_then(Value::as_object) else {
            return BTreeMap::new();
        };
        d.iter()
            .filter_map(|(r, v)| Some((r.parse().ok()?, v.get("records")?.as_u64()?)))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// The time span of all slices, µs.
    pub fn span(&self) -> (f64, f64) {
        let lo = self
            .slices
            .iter()
            .map(|s| s.ts)
            .fold(f64::INFINITY, f64::min);
        let hi = self.slices.iter().map(Slice::end).fold(0.0, f64::max);
        if lo.is_finite() {
            (lo, hi)
        } else {
            (0.0, 0.0)
        }
    }
}
