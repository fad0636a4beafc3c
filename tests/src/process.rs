//! Processes a test started, directly or not: kill them whatever happens, find them, see
//! whether they still run; and a temporary directory that goes with the test.

use std::path::PathBuf;

/// Kills a process group (SIGKILL) when dropped — also when a test fails half-way.
pub use hypercube_procgroup::GroupGuard as Guard;

/// Kills (SIGKILL), one by one by pid, every listed process that is still alive when it is
/// dropped — also when a test fails half-way. For processes a test started indirectly (the
/// ranks of a launcher it killed, which are in process groups of their own).
#[derive(Debug, Default)]
pub struct KillList {
    pids: std::collections::BTreeSet<u32>,
}

impl KillList {
    /// Add processes to the list.
    pub fn add(&mut self, pids: impl IntoIterator<Item = u32>) {
        self.pids.extend(pids);
    }

    /// The listed processes.
    pub fn pids(&self) -> Vec<u32> {
        self.pids.iter().copied().collect()
    }

    /// The listed processes that are still running.
    pub fn alive(&self) -> Vec<u32> {
        self.pids.iter().copied().filter(|p| alive(*p)).collect()
    }
}

impl Drop for KillList {
    fn drop(&mut self) {
        for p in self.alive() {
            // SAFETY: kill(2) on one process this test started (through the launcher); no
            // memory is involved.
            unsafe {
                libc::kill(p as i32, libc::SIGKILL);
            }
        }
    }
}

/// The processes whose parent is `pid` (read from `/proc/*/stat`).
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let child: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
        // Fields after the command name (which may hold spaces): state, ppid, ...
        let ppid: u32 = stat
            .rsplit(')')
            .next()?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()?;
        (ppid == pid).then_some(child)
    })
    .collect()
}

/// A fresh, empty directory in the system's temporary directory, removed when dropped.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Create `<tmp>/hc-<what>-<pid>-<n>`.
    pub fn new(what: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "hc-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|e| panic!("creating {}: {e}", path.display()));
        TempDir { path }
    }

    /// Its path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// The names of the files in it that are numbers (the pid files `fail` writes with
    /// `HC_TEST_PID_DIR`).
    pub fn pids(&self) -> Vec<u32> {
        std::fs::read_dir(&self.path)
            .map(|d| {
                d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Is a process with this pid still running (not a zombie)?
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
