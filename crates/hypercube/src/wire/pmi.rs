//! The PMI-1 "simple" wire protocol, as spoken by MPICH's Hydra (`mpiexec`) and by Slurm's
//! `--mpi=pmi2` plugin to the processes they start: one request line, one reply line, each
//! `cmd=NAME key=value key=value ...\n`, keys in any order, lines shorter than 1024 bytes.
//!
//! ```text
//! -> cmd=init pmi_version=1 pmi_subversion=1      <- cmd=response_to_init rc=0 pmi_version=1 pmi_subversion=1
//! -> cmd=get_maxes                                <- cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024
//! -> cmd=get_my_kvsname                           <- cmd=my_kvsname kvsname=kvs_42_0
//! -> cmd=put kvsname=K key=KEY value=V            <- cmd=put_result rc=0 msg=success
//! -> cmd=barrier_in                               <- cmd=barrier_out
//! -> cmd=get kvsname=K key=KEY                    <- cmd=get_result rc=0 value=V   (rc != 0: no such key)
//! -> cmd=abort exitcode=1 error_msg=...           (the process manager kills the job)
//! -> cmd=finalize                                 <- cmd=finalize_ack
//! ```
//!
//! This module only formats and parses lines; `crate::boot::pmi` holds the conversation.

use std::collections::HashMap;

/// Longest line either side may send, newline included (MPICH's `PMIU_MAXLINE`).
pub const MAX_LINE: usize = 1024;

/// A parsed reply: its `cmd` and the other `key=value` pairs, in any order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The value of `cmd=`.
    pub cmd: String,
    /// Every other pair.
    pub fields: HashMap<String, String>,
}

impl Reply {
    /// The value of a field, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }

    /// The `rc` field as a number (absent counts as success, as MPICH reads it).
    pub fn rc(&self) -> Result<i64, String> {
        match self.get("rc") {
            None => Ok(0),
            Some(v) => v
                .trim()
                .parse()
                .map_err(|_| format!("rc={v:?} is not a number")),
        }
    }
}

/// Parse one reply line (without or with its newline). Values may not contain spaces,
/// except the last field of a line, which takes the rest of the line (Hydra's `msg=` and
/// `error_msg=` texts contain spaces on some versions).
pub fn parse_reply(line: &[u8]) -> Result<Reply, String> {
    if line.len() > MAX_LINE {
        return Err(format!(
            "a line of {} bytes (the protocol allows {MAX_LINE})",
            line.len()
        ));
    }
    let text = std::str::from_utf8(line).map_err(|_| "a line that is not UTF-8".to_string())?;
    let text = text.trim_end_matches(['\n', '\r']).trim();
    let mut cmd = None;
    let mut fields: HashMap<String, String> = HashMap::new();
    // The key of the last pair, if not cmd: words without '=' continue its value.
    let mut last: Option<&str> = None;
    let mut rest = text;
    while !rest.is_empty() {
        let (tok, after) = match rest.find(' ') {
            Some(i) => (&rest[..i], rest[i + 1..].trim_start()),
            None => (rest, ""),
        };
        let Some((k, v)) = tok.split_once('=') else {
            // A word without '=' continues the previous value (a message with spaces).
            if fields.is_empty() && cmd.is_none() {
                return Err(format!("{:?} does not start with cmd=", clip(text)));
            }
            if let Some(value) = last.and_then(|k| fields.get_mut(k)) {
                value.push(' ');
                value.push_str(tok);
            }
            rest = after;
            continue;
        };
        if k.is_empty() {
            return Err(format!("an empty key in {:?}", clip(text)));
        }
        if k == "cmd" {
            if cmd.is_some() {
                return Err(format!("two cmd= in {:?}", clip(text)));
            }
            cmd = Some(v.to_string());
            last = None;
        } else {
            fields.insert(k.to_string(), v.to_string());
            last = Some(k);
        }
        rest = after;
    }
    let cmd = cmd.ok_or_else(|| format!("no cmd= in {:?}", clip(text)))?;
    Ok(Reply { cmd, fields })
}

/// Format one request line (newline included) from its command and pairs, refusing what
/// the protocol cannot carry: whitespace, `=` or a control character inside the command, a
/// key or a value (a parser splits on spaces, trims whitespace and stops at a NUL), an
/// empty command or key, a key `cmd` or a key given twice, or a line of [`MAX_LINE`]
/// bytes or more. What it formats, [`parse_reply`] reads back as the same pairs.
pub fn request(cmd: &str, pairs: &[(&str, &str)]) -> Result<String, String> {
    if cmd.is_empty() || !clean(cmd) {
        return Err(format!(
            "the command {cmd:?} cannot travel in a PMI-1 line (no whitespace, '=' or \
             control characters)"
        ));
    }
    let mut line = format!("cmd={cmd}");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if k.is_empty() || !clean(k) || !clean(v) {
            return Err(format!(
                "the pair {k:?}={v:?} cannot travel in a PMI-1 line (no whitespace, '=' or \
                 control characters)"
            ));
        }
        if *k == "cmd" || pairs[..i].iter().any(|(seen, _)| seen == k) {
            return Err(format!("the key {k:?} twice in a PMI-1 line"));
        }
        line.push(' ');
        line.push_str(k);
        line.push('=');
        line.push_str(v);
    }
    line.push('\n');
    if line.len() >= MAX_LINE {
        return Err(format!(
            "a PMI-1 request of {} bytes (lines must be shorter than {MAX_LINE})",
            line.len()
        ));
    }
    Ok(line)
}

/// Replace what cannot travel in a value (whitespace, `=`, control characters) by `_`,
/// and clip to `max` bytes: for free text such as an abort's message.
pub fn sanitize(text: &str, max: usize) -> String {
    let mut s: String = text
        .chars()
        .map(|c| {
            if c == '=' || c.is_whitespace() || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    while s.len() > max {
        s.pop();
    }
    s
}

fn clean(s: &str) -> bool {
    !s.chars()
        .any(|c| c == '=' || c.is_whitespace() || c.is_control())
}

fn clip(s: &str) -> &str {
    match s.char_indices().nth(120) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Count the nodes (hosts) a `PMI_process_mapping` value describes:
/// `(vector,(start,count,ranks_per_node),...)`. `None` if it cannot be read.
pub fn mapping_nodes(value: &str) -> Option<u32> {
    let v = value.trim();
    let inner = v.strip_prefix("(vector,")?.strip_suffix(')')?;
    let mut nodes = 0u32;
    let mut any = false;
    for block in inner.split("),") {
        let b = block.trim().trim_start_matches('(').trim_end_matches(')');
        let nums: Vec<u32> = b
            .split(',')
            .map(|x| x.trim().parse().ok())
            .collect::<Option<_>>()?;
        let [start, count, _ppn] = nums[..] else {
            return None;
        };
        nodes = nodes.max(start.checked_add(count)?);
        any = true;
    }
    any.then_some(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_in_any_order() {
        let r = parse_reply(b"cmd=get_result rc=0 msg=success value=10.0.0.2:4000\n").unwrap();
        assert_eq!(r.cmd, "get_result");
        assert_eq!(r.get("value"), Some("10.0.0.2:4000"));
        assert_eq!(r.rc(), Ok(0));
        let r = parse_reply(b"value=x rc=-1 cmd=get_result").unwrap();
        assert_eq!((r.cmd.as_str(), r.rc()), ("get_result", Ok(-1)));
        let r = parse_reply(b"cmd=barrier_out").unwrap();
        assert!(r.fields.is_empty());
        // A message with spaces (older Hydras) does not break the parse, and is kept whole
        // (words after cmd= are dropped).
        let r = parse_reply(b"cmd=put_result rc=1 msg=duplicate  key given\n").unwrap();
        assert_eq!(r.rc(), Ok(1));
        assert_eq!(r.get("msg"), Some("duplicate key given"));
        let r = parse_reply(b"cmd=barrier_out late words").unwrap();
        assert_eq!((r.cmd.as_str(), r.fields.len()), ("barrier_out", 0));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in [
            &b""[..],
            b"hello",
            b"=x cmd=a",
            b"cmd=a cmd=b",
            b"\xff\xfe",
            b"rc=0",
        ] {
            assert!(parse_reply(bad).is_err(), "{bad:?}");
        }
        assert!(parse_reply(&[b'a'; MAX_LINE + 1]).is_err());
        assert!(parse_reply(b"cmd=x rc=zero").unwrap().rc().is_err());
    }

    #[test]
    fn requests_refuse_what_cannot_travel() {
        assert_eq!(
            request("put", &[("kvsname", "k"), ("key", "a"), ("value", "b")]).unwrap(),
            "cmd=put kvsname=k key=a value=b\n"
        );
        assert!(request("put", &[("key", "a b")]).is_err());
        assert!(request("put", &[("key", "a=b")]).is_err());
        assert!(request("put", &[("", "x")]).is_err());
        assert!(request("put", &[("value", &"x".repeat(MAX_LINE))]).is_err());
        assert_eq!(sanitize("a b=c\nd", 5), "a_b_c");
        // Found by tests/fuzz_decoders.rs: these were formatted, and read back otherwise.
        for (cmd, k, v) in [
            (" ", "key", "a"),
            ("", "key", "a"),
            ("put", "cmd", "a"),
            ("put", "key", "\ta"),
            ("put", "key", "a\u{a0}"),
            ("put", "key", "a\0b"),
            ("put", "\u{3000}key", "a"),
        ] {
            assert!(request(cmd, &[(k, v)]).is_err(), "{cmd:?} {k:?}={v:?}");
        }
        assert!(request("put", &[("key", "a"), ("key", "b")]).is_err());
        assert_eq!(sanitize("a\u{a0}b\tc\u{3000}", 10), "a_b_c_");
    }

    #[test]
    fn mappings() {
        assert_eq!(mapping_nodes("(vector,(0,1,1))"), Some(1));
        assert_eq!(mapping_nodes("(vector,(0,4,4))"), Some(4));
        assert_eq!(mapping_nodes("(vector,(0,2,3),(2,1,1))"), Some(3));
        assert_eq!(mapping_nodes("(vector,)"), None);
        assert_eq!(mapping_nodes("garbage"), None);
        assert_eq!(mapping_nodes("(vector,(4294967295,2,1))"), None);
    }
}
