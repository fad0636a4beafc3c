//! The PMI-1 lines fed random and mutated bytes (issue 12, item 3; the other public
//! decoders are `fuzz_decoders.rs`): no panic, no line over the limit accepted, a typed
//! error, round trips of valid requests. `HYPERCUBE_FUZZ_CASES` sets the cases per
//! property.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use hypercube::wire::pmi;
use proptest::prelude::*;

// The helpers the crate's unit tests use; not all of them are needed here.
#[allow(dead_code)]
#[path = "../src/wire/fuzz.rs"]
mod fuzz;

// ---------------------------------------------------------------------------------------
// PMI-1 lines.

/// The atoms of [`pmi_piece`]: PMI words and the characters that trouble them.
const PMI_ATOMS: &[&str] = &[
    "cmd", "=", " ", "\n", "\r", "\t", "\0", "\u{a0}", "\u{3000}", "é", "rc", "0", "-1", "value",
    "x", "_", "(", ")", ",",
];

/// Pieces of PMI lines, the troublesome ones included.
fn pmi_piece() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PMI_ATOMS), 0..6).prop_map(|v| v.concat())
}

/// Parse a line: no panic, no line over the limit accepted, `rc` never panics.
fn check_parse(line: &[u8]) -> Result<(), TestCaseError> {
    let t = Instant::now();
    match pmi::parse_reply(line) {
        Ok(r) => {
            prop_assert!(line.len() <= pmi::MAX_LINE);
            let _ = r.rc();
        }
        Err(e) => prop_assert!(!e.is_empty()),
    }
    prop_assert!(t.elapsed() < Duration::from_secs(1));
    Ok(())
}

proptest! {
    #![proptest_config(fuzz::config())]

    #[test]
    fn fuzz_pmi_random_lines(b in fuzz::bytes(1100), pieces in prop::collection::vec(pmi_piece(), 0..40)) {
        check_parse(&b)?;
        check_parse(pieces.concat().as_bytes())?;
    }

    #[test]
    fn fuzz_pmi_mutated(
        key in "[a-z_]{1,12}",
        value in "[ -~]{0,40}",
        muts in fuzz::mutations(),
    ) {
        let line = format!("cmd=get_result rc=0 {key}={value}\n");
        check_parse(&fuzz::mutated(line.as_bytes(), &muts))?;
    }

    /// Whatever `request` accepts, a PMI-1 parser reads back as the same command and
    /// pairs; what it cannot carry it refuses.
    #[test]
    fn fuzz_pmi_request_roundtrip(
        cmd in pmi_piece(),
        pairs in prop::collection::vec((pmi_piece(), pmi_piece()), 0..6),
    ) {
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        match pmi::request(&cmd, &refs) {
            Ok(line) => {
                prop_assert!(line.len() < pmi::MAX_LINE && line.ends_with('\n'));
                let r = pmi::parse_reply(line.as_bytes());
                prop_assert!(r.is_ok(), "{:?} -> {:?}", line, r);
                let r = r.unwrap();
                prop_assert_eq!(&r.cmd, &cmd);
                let want: HashMap<String, String> = pairs.iter().cloned().collect();
                prop_assert_eq!(want.len(), pairs.len(), "a key twice was accepted");
                prop_assert_eq!(r.fields, want);
            }
            Err(e) => prop_assert!(!e.is_empty()),
        }
    }

    /// Valid requests (clean words) are accepted and read back.
    #[test]
    fn fuzz_pmi_clean_requests(
        cmd in "[a-z_]{1,16}",
        pairs in prop::collection::btree_map("[a-z_]{1,16}", "[!-<>-~é]{0,24}", 0..6),
    ) {
        let pairs: Vec<(String, String)> =
            pairs.into_iter().filter(|(k, _)| k != "cmd").collect();
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let line = pmi::request(&cmd, &refs).unwrap();
        let r = pmi::parse_reply(line.as_bytes()).unwrap();
        prop_assert_eq!(r.cmd, cmd);
        prop_assert_eq!(r.fields, pairs.into_iter().collect::<HashMap<_, _>>());
    }

    /// A last value with spaces (Hydra's `msg=` texts) is read whole, its gaps one space.
    #[test]
    fn fuzz_pmi_message_with_spaces(
        words in prop::collection::vec("[!-<>-~]{1,8}", 1..8),
        gaps in prop::collection::vec(" {1,3}", 8),
    ) {
        let mut line = String::from("cmd=put_result rc=1 msg=");
        for (w, gap) in words.iter().zip(&gaps) {
            line.push_str(w);
            line.push_str(gap);
        }
        let r = pmi::parse_reply(line.as_bytes()).unwrap();
        let want = words.join(" ");
        prop_assert_eq!(r.get("msg"), Some(want.as_str()));
    }

    /// Any text, sanitized, travels as a value and reads back unchanged.
    #[test]
    fn fuzz_pmi_sanitize(text in any::<String>(), soup in pmi_piece(), max in 0usize..700) {
        for t in [text, soup] {
            let s = pmi::sanitize(&t, max);
            prop_assert!(s.len() <= max);
            let line = pmi::request("abort", &[("exitcode", "1"), ("error_msg", &s)]);
            prop_assert!(line.is_ok(), "{:?}", s);
            let r = pmi::parse_reply(line.unwrap().as_bytes()).unwrap();
            prop_assert_eq!(r.get("error_msg"), Some(s.as_str()));
        }
    }

    #[test]
    fn fuzz_pmi_mapping(
        blocks in prop::collection::vec((any::<u32>(), any::<u32>(), any::<u32>()), 1..5),
        small in prop::collection::vec((0u32..100, 0u32..100, 0u32..9), 1..5),
        junk in pmi_piece(),
        spaces in any::<bool>(),
    ) {
        for blocks in [blocks, small] {
            let sep = if spaces { ", " } else { "," };
            let body: Vec<String> = blocks
                .iter()
                .map(|(s, c, p)| format!("({s}{sep}{c}{sep}{p})"))
                .collect();
            let v = format!("(vector{sep}{})", body.join(sep));
            let want = blocks
                .iter()
                .map(|(s, c, _)| s.checked_add(*c))
                .collect::<Option<Vec<u32>>>()
                .and_then(|e| e.into_iter().max());
            prop_assert_eq!(pmi::mapping_nodes(&v), want, "{}", v);
        }
        let _ = pmi::mapping_nodes(&junk);
    }
}
