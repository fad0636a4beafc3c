//! The workspace's programs the tests run, built by cargo on first use in the tests'
//! profile.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The binaries of a workspace package, built by cargo on first use in the tests' profile
/// (binaries of another package are not named by `CARGO_BIN_EXE_*`).
pub fn cargo_bin(package: &str, name: &str) -> PathBuf {
    cargo_built(package, "--bins", name)
}

/// An example of the `hypercube` crate (`crates/hypercube/examples/NAME.rs`), built by
/// cargo on first use in the tests' profile.
pub fn example(name: &str) -> PathBuf {
    cargo_built("hypercube", "--examples", name)
}

/// The executable `name` among the targets of `package` that `kind` (`--bins`,
/// `--examples`) selects, all built by one cargo call on first use.
fn cargo_built(package: &str, kind: &str, name: &str) -> PathBuf {
    use std::collections::HashMap;
    use std::sync::Mutex;
    /// Executables built, by (package, kind).
    type Built = HashMap<(String, String), Vec<PathBuf>>;
    static BUILT: OnceLock<Mutex<Built>> = OnceLock::new();
    let mut built = BUILT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    let key = (package.to_string(), kind.to_string());
    let bins = built.entry(key).or_insert_with(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut cmd = Command::new(cargo);
        cmd.current_dir(&root).args([
            "build",
            "-p",
            package,
            kind,
            "--message-format=json-render-diagnostics",
        ]);
        if !cfg!(debug_assertions) {
            cmd.arg("--release");
        }
        let out = cmd
            .stderr(Stdio::inherit())
            .output()
            .unwrap_or_else(|e| panic!("running cargo to build {package} {kind}: {e}"));
        assert!(out.status.success(), "building {package} {kind} failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let i = l.find("\"executable\":\"")? + 14;
                let j = l[i..].find('"')? + i;
                Some(PathBuf::from(&l[i..j]))
            })
            .collect()
    });
    bins.iter()
        .find(|p| p.file_name().is_some_and(|f| f == name))
        .unwrap_or_else(|| panic!("cargo built no {name} in {package} {kind}: {bins:?}"))
        .clone()
}

/// The `hcrun` binary of the `launcher` package.
pub fn hcrun() -> PathBuf {
    cargo_bin("launcher", "hcrun")
}
