//! `--example NAME`: build the workspace example with cargo and find its executable.

use std::path::PathBuf;
use std::process::Stdio;

use anyhow::{bail, Context, Result};

/// The workspace root (the launcher lives in `<root>/launcher`).
pub fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(PathBuf::from).unwrap_or(here)
}

/// Build example `name` and return the path of its executable.
pub fn build_example(name: &str, release: bool) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(workspace_root())
        .args([
            "build",
            "--workspace",
            "--example",
            name,
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if release {
        cmd.arg("--release");
    }
    let out = cmd.output().context("running cargo to build the example")?;
    if !out.status.success() {
        bail!("building example `{name}` failed (see cargo's output above); `cargo build --examples` lists what exists");
    }
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if v["reason"] != "compiler-artifact" || v["target"]["name"] != name {
            continue;
        }
        let is_example = v["target"]["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|x| x == "example"));
        if let (true, Some(exe)) = (is_example, v["executable"].as_str()) {
            return Ok(PathBuf::from(exe));
        }
    }
    bail!("cargo built no example named `{name}`")
}
