//! The facts about a run that the README states (`run-info.txt`).

use std::fmt::Write;

/// Facts about the run that the README states.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// `key: value` lines (date, machine, command, run time, plan).
    pub lines: Vec<(String, String)>,
    /// What was skipped or failed.
    pub notes: Vec<String>,
}

impl RunInfo {
    /// Serialize (`run-info.txt`): `key: value` lines, then `note: ...` lines.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.lines {
            let _ = writeln!(s, "{k}: {v}");
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }

    /// Parse what [`RunInfo::to_text`] wrote.
    pub fn from_text(text: &str) -> RunInfo {
        let mut r = RunInfo::default();
        for l in text.lines() {
            if let Some((k, v)) = l.split_once(": ") {
                if k == "note" {
                    r.notes.push(v.to_string());
                } else {
                    r.lines.push((k.to_string(), v.to_string()));
                }
            }
        }
        r
    }
}
