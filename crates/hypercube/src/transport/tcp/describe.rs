//! What a wait waits for, in the words a rank reports to the launcher when it is blocked
//! ("a message of type 5 from node 3", "its large send to node 1 to be received (…)"),
//! which the launcher reads back to name a deadlock or a cycle of large sends
//! (`wire/control.rs`). Used by the waits of `wait.rs` and the polls of `protocol.rs` and
//! `mod.rs`.

use super::engine::State;
use crate::base::ids::HOST;
use crate::base::message::{Select, TypeSel, MAX_USER_TYPE};
use crate::base::tags;

/// What `wait_send` calls its wait: reported with the large sends that wait for their
/// receivers ([`describe_sends`]).
pub(super) const SEND_WAIT: &str = "a send to complete";

/// "its large send to node 1 to be received (8388608 bytes, ...)" for every send still
/// waiting for its receiver's clear-to-send (`State::pending`), in the words the launcher
/// reads back (`control::large_send_dests`) to name a cycle of such sends.
pub(super) fn describe_sends(st: &State) -> String {
    let mut sends: Vec<(u32, u64)> = st
        .pending
        .values()
        .map(|p| (p.dest, p.data.len() as u64))
        .collect();
    if sends.is_empty() {
        return SEND_WAIT.to_string();
    }
    sends.sort_unstable();
    let texts: Vec<String> = sends
        .iter()
        .take(8)
        .map(|&(dest, len)| match dest {
            HOST => format!("its large send to the host to be received ({len} bytes)"),
            d => crate::wire::control::large_send_text(d, len),
        })
        .collect();
    let mut out = texts.join(" and ");
    if sends.len() > 8 {
        out.push_str(&format!(" and {} more large sends", sends.len() - 8));
    }
    out
}

/// "a message of type 5" — what a receive waits for, without its source.
pub(super) fn describe_type(sel: &Select) -> String {
    match sel.ty {
        TypeSel::Any => "a message of any type".to_string(),
        TypeSel::Is(tags::FINALIZE) => "the other ranks to finish (finalize)".to_string(),
        TypeSel::Is(t) if t > MAX_USER_TYPE => "a message of a utility or collective".to_string(),
        TypeSel::Is(t) => format!("a message of type {t}"),
    }
}

/// "a message of type 5 from node 3" — for reports to the launcher.
pub(super) fn describe_select(sel: &Select) -> String {
    let what = describe_type(sel);
    match sel.source {
        _ if sel.ty == TypeSel::Is(tags::FINALIZE) => what,
        Some(s) if s == HOST => format!("{what} from the host"),
        Some(s) => format!("{what} from node {s}"),
        None => format!("{what} from any node"),
    }
}
