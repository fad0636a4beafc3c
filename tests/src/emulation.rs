//! What the tests of the emulated network (`tests/tests/cubenet*.rs`) share: whether a
//! network can be built here, one such job at a time, and what the host's network looks
//! like (a job must leave it as it found it).

use std::process::Command;
use std::sync::Mutex;

/// The jobs of a test file share two cores and their timing matters: one at a time.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Can this process build namespaces (root, or an unprivileged user namespace)? If not,
/// say loudly that `test` is skipped.
pub fn emulation_possible(test: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return true;
    }
    let userns = Command::new("unshare")
        .args(["--user", "--map-root-user", "--net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !userns {
        eprintln!(
            "\n!!!!! SKIPPED `{test}`: neither root nor unprivileged user namespaces here, \
             so no emulated network can be built !!!!!\n"
        );
    }
    userns
}

/// What the host's network looks like from here: its named namespaces, its links and its
/// qdiscs. A job on the emulated network must leave all three as it found them.
pub fn host_network() -> String {
    let mut s = String::new();
    for args in [
        &["netns", "list"][..],
        &["-o", "link", "show"][..],
        &["-o", "addr", "show"][..],
    ] {
        let out = Command::new("ip").args(args).output().expect("running ip");
        s.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    let out = Command::new("tc")
        .args(["qdisc", "show"])
        .output()
        .expect("running tc");
    s.push_str(&String::from_utf8_lossy(&out.stdout));
    // Link statistics and interface indexes of others' links do not matter; their names do.
    s.lines()
        .map(|l| {
            l.split_whitespace()
                .filter(|w| !w.chars().all(|c| c.is_ascii_digit() || c == ':'))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The network namespace (`net:[inode]`) of a process, while it lives.
pub fn netns_of(pid: u32) -> Option<String> {
    std::fs::read_link(format!("/proc/{pid}/ns/net"))
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// Every process on the machine whose network namespace is `ns`.
pub fn processes_in(ns: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| netns_of(*p).as_deref() == Some(ns))
        .collect()
}
