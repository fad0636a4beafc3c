//! Helpers of `tests/trace.rs`: running a traced job and `hctrace`, reading a trace's
//! JSON, its events and slices, the antipodal exchange's expected flows, and a small XML
//! check for the `steps` pictures.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use hypercube_tests::{cargo_bin, example, run_command, run_hcrun, JobOutput, TempDir};
use serde_json::Value;

pub fn hctrace(args: &[&str]) -> JobOutput {
    let mut cmd = Command::new(cargo_bin("hypercube-trace", "hctrace"));
    cmd.args(args);
    run_command(cmd, Duration::from_secs(60))
}

pub fn load(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Run `program` on a `dim`-cube under `hcrun --trace DIR/NAME` (extra environment `env`,
/// hcrun's own timeout `limit_s`, the test's 1.5 times that): the job's output and the
/// trace's path.
pub fn traced(
    dir: &TempDir,
    name: &str,
    dim: u32,
    limit_s: u64,
    program: &[&str],
    env: &[(&str, &str)],
) -> (JobOutput, std::path::PathBuf) {
    let json = dir.path().join(name);
    let out = run_hcrun(
        &[
            "--dim",
            &dim.to_string(),
            "--timeout-s",
            &limit_s.to_string(),
            "--trace",
            json.to_str().expect("UTF-8"),
        ],
        program,
        env,
        Duration::from_secs(limit_s * 3 / 2),
    );
    (out, json)
}

pub fn events<'a>(doc: &'a Value, ph: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    doc["traceEvents"]
        .as_array()
        .expect("traceEvents")
        .iter()
        .filter(move |e| e["ph"] == ph)
}

pub fn slices<'a>(doc: &'a Value, cat: &'a str) -> Vec<&'a Value> {
    events(doc, "X").filter(|e| e["cat"] == cat).collect()
}

/// Run the antipodal example on a 3-cube with `--trace`; the merged document.
pub fn antipodal_trace(dir: &TempDir) -> (Value, std::path::PathBuf) {
    let prog = example("antipodal");
    let (out, out_json) = traced(dir, "t.json", 3, 60, &[prog.to_str().expect("UTF-8")], &[]);
    out.assert_ok();
    assert!(
        out.stderr.contains("trace written to"),
        "hcrun does not say where the trace is:\n{}",
        out.stderr
    );
    (load(&out_json), out_json)
}

/// Every node sends one message to its antipode: 8 messages, each forwarded by the two
/// intermediate nodes of its e-cube route (16 hops), each a chain of 3 flow legs.
pub fn check_antipodal(doc: &Value) {
    let names: BTreeMap<u64, String> = events(doc, "M")
        .filter(|e| e["name"] == "process_name")
        .map(|e| {
            (
                e["pid"].as_u64().unwrap(),
                e["args"]["name"].as_str().unwrap().into(),
            )
        })
        .collect();
    let want: BTreeMap<u64, String> = (0..8).map(|r| (r, format!("rank {r}"))).collect();
    assert_eq!(names, want);

    let sends = slices(doc, "send");
    let recvs = slices(doc, "recv");
    let fwds = slices(doc, "forward");
    assert_eq!(sends.len(), 8, "sends: {sends:#?}");
    assert_eq!(recvs.len(), 8, "receives: {recvs:#?}");
    assert_eq!(fwds.len(), 16, "forwarded frames: {fwds:#?}");
    // Message number -> (sender, receiver, hops).
    let mut msgs: HashMap<u64, (u64, u64, BTreeSet<u64>)> = HashMap::new();
    for s in &sends {
        let (me, peer) = (
            s["pid"].as_u64().unwrap(),
            s["args"]["peer"].as_u64().unwrap(),
        );
        assert_eq!(peer, me ^ 7, "{s}");
        assert_eq!(s["args"]["tag"], 3);
        msgs.entry(s["args"]["msg"].as_u64().unwrap())
            .or_default()
            .0 = me;
    }
    for r in &recvs {
        let m = msgs
            .get_mut(&r["args"]["msg"].as_u64().unwrap())
            .unwrap_or_else(|| panic!("a receive of a message nobody sent: {r}"));
        m.1 = r["pid"].as_u64().unwrap();
    }
    for f in &fwds {
        let m = msgs
            .get_mut(&f["args"]["msg"].as_u64().unwrap())
            .unwrap_or_else(|| panic!("a forwarded frame of a message nobody sent: {f}"));
        m.2.insert(f["pid"].as_u64().unwrap());
    }
    assert_eq!(msgs.len(), 8);
    for (src, dest, hops) in msgs.values() {
        assert_eq!(*dest, src ^ 7);
        // e-cube: the lowest differing bit first.
        let want: BTreeSet<u64> = [src ^ 1, src ^ 3].into();
        assert_eq!(hops, &want, "message {src} -> {dest}");
    }
    // Flow legs: send -> hop -> hop -> receive, each an s/f pair with one numeric id.
    let starts: HashMap<u64, &Value> = events(doc, "s")
        .map(|e| (e["id"].as_u64().expect("numeric flow id"), e))
        .collect();
    let finishes: Vec<&Value> = events(doc, "f").collect();
    assert_eq!(starts.len(), 24);
    assert_eq!(finishes.len(), 24);
    let mut legs: HashMap<u64, usize> = HashMap::new();
    for f in finishes {
        assert_eq!(f["bp"], "e");
        let s = starts[&f["id"].as_u64().unwrap()];
        assert_eq!(s["args"]["msg"], f["args"]["msg"]);
        assert!(
            f["ts"].as_f64().unwrap() >= s["ts"].as_f64().unwrap(),
            "an arrow points backwards: {s} -> {f}"
        );
        *legs.entry(f["args"]["msg"].as_u64().unwrap()).or_default() += 1;
    }
    assert!(legs.values().all(|n| *n == 3), "{legs:?}");
}

/// A small well-formedness check: an XML declaration, then balanced elements (comments,
/// attributes with quoted values, self-closing tags), one root.
pub fn check_xml(text: &str) {
    let body = text
        .strip_prefix("<?xml")
        .and_then(|t| t.split_once("?>"))
        .map(|(_, rest)| rest)
        .expect("an XML declaration");
    let mut stack: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut rest = body;
    while let Some(i) = rest.find('<') {
        let text_part = &rest[..i];
        assert!(!text_part.contains('>'), "a stray '>' in {text_part:?}");
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix("<!--") {
            rest = &r[r.find("-->").expect("an unclosed comment") + 3..];
            continue;
        }
        // Find the tag's end outside quoted attribute values.
        let mut quote = None;
        let mut end = None;
        for (j, c) in rest.char_indices().skip(1) {
            match (quote, c) {
                (None, '"' | '\'') => quote = Some(c),
                (Some(q), c) if c == q => quote = None,
                (None, '<') => panic!("'<' inside a tag: {}", &rest[..j]),
                (None, '>') => {
                    end = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let end = end.expect("an unclosed tag");
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name.trim()), "mismatched </{name}>");
        } else {
            if stack.is_empty() {
                roots += 1;
            }
            if !tag.ends_with('/') {
                stack.push(tag.split_whitespace().next().expect("a tag name"));
            }
        }
    }
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    assert!(rest.trim().is_empty());
    assert_eq!(roots, 1, "one root element");
}

/// The `X` slices of rank `pid` of category `cat` whose tag is `tag`.
pub fn tagged<'a>(doc: &'a Value, cat: &'a str, pid: u64, tag: u64) -> Vec<&'a Value> {
    slices(doc, cat)
        .into_iter()
        .filter(|e| e["pid"] == pid && e["args"]["tag"] == tag)
        .collect()
}
