//! The public API of the `hypercube` crate, listed from its source and diffed against the
//! checked-in `api.txt`, so that no public item changes without a version bump and a
//! `CHANGELOG.md` entry.
//!
//! The listing is every `pub` item signature (`pub fn`, `pub struct`, `pub enum`,
//! `pub trait`, `pub type`, `pub const`, `pub static`, `pub mod`, `pub use` and `pub`
//! fields), one per line with its file, whitespace normalized, sorted. (`pub(crate)` and
//! narrower items are left out; items in private modules are listed too — a superset of
//! the public API, which errs on the side of asking for a changelog entry.)
//!
//! When this test fails because the API changed on purpose:
//! 1. bump `version` in the workspace `Cargo.toml` (`[workspace.package]`),
//! 2. add a section for that version to `CHANGELOG.md` saying what changed,
//! 3. rewrite the listing: `UPDATE_API=1 cargo test -p hypercube --test public_api`
//!    (refused while the version is the one `api.txt` was written for; to add to a version
//!    that is not released yet, say so: `UPDATE_API=unreleased`, and extend its
//!    CHANGELOG section).

use std::path::{Path, PathBuf};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, sorted.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `pub` item signatures of one file's text (`file` names it in each line).
fn items(file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_test = false;
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        // Test modules (`#[cfg(test)] mod tests { ... }` to the end of the file, the
        // crate's convention) hold no public API; a test module in a file of its own
        // (`#[cfg(test)] mod name;`) ends nothing here.
        if t.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|l| l.contains("mod ") && !l.trim_end().ends_with(';'))
        {
            in_test = true;
        }
        if in_test || !t.starts_with("pub ") {
            continue;
        }
        // The signature: up to the body (`{`) or the end (`;`); a field is one line (`,`).
        let mut sig = t.to_string();
        let field = sig.trim_end().ends_with(',');
        while !field && !sig.contains('{') && !sig.trim_end().ends_with(';') {
            match lines.next() {
                Some(l) => {
                    sig.push(' ');
                    sig.push_str(l.trim());
                }
                None => break,
            }
        }
        let sig = sig.split('{').next().unwrap_or_default();
        let sig = sig.split_whitespace().collect::<Vec<_>>().join(" ");
        let sig = sig
            .replace("( ", "(")
            .replace(" )", ")")
            .replace(",)", ")")
            .replace("< ", "<")
            .replace(" >", ">");
        let sig = sig.trim_end_matches([';', ',', ' ']);
        out.push(format!("{file}: {sig}"));
    }
    out
}

/// The listing of the crate's source as it is now.
fn listing() -> String {
    let src = crate_dir().join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut all = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let name = f
            .strip_prefix(&src)
            .expect("under src")
            .display()
            .to_string();
        all.extend(items(&name.replace('\\', "/"), &text));
    }
    all.sort();
    all.join("\n") + "\n"
}

/// `api.txt`: a header line naming the version, then the listing.
fn read_api() -> (String, String) {
    let path = crate_dir().join("api.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let (head, body) = text.split_once('\n').unwrap_or(("", ""));
    let version = head.trim_start_matches("# hypercube ").trim().to_string();
    (version, body.to_string())
}

#[test]
fn public_api_matches_api_txt_and_the_version() {
    let now = listing();
    let (version, listed) = read_api();
    if let Some(how) = std::env::var_os("UPDATE_API") {
        assert!(
            now == listed || version != VERSION || how == "unreleased",
            "the public API changed but the version is still {VERSION}, the one api.txt was \
             written for: bump `version` in the workspace Cargo.toml and add a CHANGELOG.md \
             section for it, then rerun with UPDATE_API=1 (or, adding to a version not released \
             yet, UPDATE_API=unreleased)"
        );
        std::fs::write(
            crate_dir().join("api.txt"),
            format!("# hypercube {VERSION}\n{now}"),
        )
        .expect("writing api.txt");
        return;
    }
    if now != listed {
        let old: std::collections::BTreeSet<&str> = listed.lines().collect();
        let new: std::collections::BTreeSet<&str> = now.lines().collect();
        let gone: Vec<&&str> = old.difference(&new).collect();
        let added: Vec<&&str> = new.difference(&old).collect();
        panic!(
            "the public API of hypercube changed (api.txt lists it):\n  removed: {gone:#?}\n  \
             added: {added:#?}\nIf on purpose: bump `version` in the workspace Cargo.toml, add \
             a CHANGELOG.md section for it, and rewrite api.txt with \
             `UPDATE_API=1 cargo test -p hypercube --test public_api`."
        );
    }
    assert_eq!(
        version, VERSION,
        "api.txt was written for version {version} but the crate is {VERSION}: rewrite it \
         with `UPDATE_API=1 cargo test -p hypercube --test public_api`"
    );
}

#[test]
fn changelog_has_a_section_for_this_version() {
    let path = crate_dir().join("../../CHANGELOG.md");
    let text = std::fs::read_to_string(&path).expect("CHANGELOG.md at the repository root");
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("## [{VERSION}]"))),
        "CHANGELOG.md has no `## [{VERSION}]` section: say what changed in this version"
    );
}

/// The lister itself: multi-line signatures are joined, private and test items left out.
#[test]
fn lister_reads_signatures() {
    let text = "#[cfg(test)]\nmod elsewhere;\npub fn a(\n    x: u32,\n) -> u32 {\n}\npub(crate) fn b() {}\n    pub field: u8,\n\
                #[cfg(test)]\nmod tests {\n    pub fn hidden() {}\n}\n";
    assert_eq!(
        items("f.rs", text),
        ["f.rs: pub fn a(x: u32) -> u32", "f.rs: pub field: u8"]
    );
}
