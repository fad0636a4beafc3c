//! Helpers for the tests that run node programs under real cluster engines: MPICH's Hydra
//! (`mpiexec`), on this host and across network namespaces, and a one-node Slurm.
//!
//! The engines come from Debian's packages (`mpich`, `slurm-wlm`, `munge`, `iproute2`).
//! When one is missing and the tests run as root, [`require`] installs them; otherwise the
//! test fails naming the packages — unless `HYPERCUBE_SKIP_CLUSTER_TESTS=1`, which skips
//! it with a loud line on stderr (CI never sets it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::JobOutput;

/// The packages the cluster tests need.
pub const PACKAGES: &[&str] = &["mpich", "slurm-wlm", "munge", "iproute2"];

/// Hydra's `mpiexec` (Debian installs MPICH's under this name, beside the alternatives).
pub const MPIEXEC: &str = "mpiexec.hydra";

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd} >/dev/null 2>&1")])
        .status()
        .is_ok_and(|s| s.success())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Make sure the engines are here (installing them as root). Returns `false` when the
/// test is to be skipped (`HYPERCUBE_SKIP_CLUSTER_TESTS=1` and something is missing or
/// we are not root); panics with the package names otherwise.
pub fn require(test: &str) -> bool {
    static READY: OnceLock<Result<(), String>> = OnceLock::new();
    let ready = READY.get_or_init(|| {
        let tools = [MPIEXEC, "srun", "slurmctld", "slurmd", "munged", "ip"];
        let missing = || tools.iter().any(|t| !have(t));
        if !is_root() {
            return Err("these tests need root (network namespaces, daemons)".into());
        }
        if missing() {
            eprintln!(
                "cluster tests: installing {} (missing, and we are root)",
                PACKAGES.join(" ")
            );
            let sh = format!(
                "export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && \
                 apt-get install -y -qq {} >/dev/null",
                PACKAGES.join(" ")
            );
            let ok = Command::new("sh")
                .args(["-c", &sh])
                .status()
                .is_ok_and(|s| s.success());
            if !ok || missing() {
                return Err(format!(
                    "installing {} with apt-get failed",
                    PACKAGES.join(" ")
                ));
            }
        }
        Ok(())
    });
    match ready {
        Ok(()) => true,
        Err(why) => {
            if std::env::var("HYPERCUBE_SKIP_CLUSTER_TESTS").is_ok_and(|v| v == "1") {
                eprintln!(
                    "\n!!!!! SKIPPED cluster test `{test}`: {why} \
                     (HYPERCUBE_SKIP_CLUSTER_TESTS=1) !!!!!\n"
                );
                false
            } else {
                panic!(
                    "cluster test `{test}`: {why}. Install the Debian packages {} (as root: \
                     apt-get install {}), or set HYPERCUBE_SKIP_CLUSTER_TESTS=1 to skip these \
                     tests",
                    PACKAGES.join(", "),
                    PACKAGES.join(" ")
                );
            }
        }
    }
}

/// The scripts of `tests/cluster/`.
pub fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cluster")
        .join(name)
}

/// One cluster test at a time: they share the two cores and run 16 processes each, and
/// Slurm's daemons are per machine.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A unique tag for this test's processes and namespaces: this process and a counter
/// (short: interface names built from it have at most 15 characters).
pub fn tag() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}{n}", std::process::id() % 100_000)
}

/// The processes whose environment carries `HC_TEST_TAG=<tag>` (everything a test started
/// through an engine inherits it).
pub fn tagged_pids(tag: &str) -> Vec<u32> {
    let needle = format!("HC_TEST_TAG={tag}\0");
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() || !crate::alive(pid) {
            continue;
        }
        if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
            if env.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                out.push(pid);
            }
        }
    }
    out
}

/// Kills (SIGKILL) every process tagged `tag` when dropped — also when a test fails.
pub struct TagGuard(pub String);

impl Drop for TagGuard {
    fn drop(&mut self) {
        for pid in tagged_pids(&self.0) {
            // SAFETY: kill(2) of a process this test started (it carries our tag).
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}

/// Wait (bounded) until no process tagged `tag` is left; returns those still alive.
pub fn wait_gone(tag: &str, within: Duration) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let left = tagged_pids(tag);
        if left.is_empty() || start.elapsed() > within {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `count` hosts made of network namespaces on a bridge (`tests/cluster/netns-up.sh`),
/// removed when dropped.
pub struct Hosts {
    tag: String,
    count: usize,
    /// The bridge (in this namespace), whose address the hosts reach us at.
    pub bridge: String,
    /// Each host's address.
    pub addrs: Vec<String>,
}

impl Hosts {
    /// Make the hosts.
    pub fn new(tag: &str, count: usize) -> Hosts {
        let out = Command::new(script("netns-up.sh"))
            .args([tag, &count.to_string()])
            .output()
            .expect("running netns-up.sh");
        let mut hosts = Hosts {
            tag: tag.into(),
            count,
            bridge: String::new(),
            addrs: Vec::new(),
        };
        assert!(
            out.status.success(),
            "netns-up.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        let mut lines = text.lines();
        hosts.bridge = lines.next().unwrap_or_default().to_string();
        hosts.addrs = lines.map(str::to_string).collect();
        assert_eq!(hosts.addrs.len(), count, "netns-up.sh printed {text:?}");
        hosts
    }

    /// The processes running in host `i`'s namespace.
    pub fn pids(&self, i: usize) -> Vec<u32> {
        netns_pids(&self.tag, i)
    }
}

/// The processes running in host `i`'s namespace of the hosts tagged `tag`.
pub fn netns_pids(tag: &str, i: usize) -> Vec<u32> {
    let out = Command::new("ip")
        .args(["netns", "pids", &format!("hc-{tag}-{}", i + 1)])
        .output();
    out.map(|o| {
        String::from_utf8_lossy(&o.stdout)
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect()
    })
    .unwrap_or_default()
}

impl Drop for Hosts {
    fn drop(&mut self) {
        let _ = Command::new(script("netns-down.sh"))
            .args([&self.tag, &self.count.to_string()])
            .status();
    }
}

/// A `mpiexec` command for `n` ranks of `program`, output prefixed `[rank] ` (as hcrun's),
/// tagged with `tag`.
pub fn mpiexec(tag: &str, n: u32, hosts: Option<&Hosts>, program: &[&str]) -> Command {
    let mut cmd = Command::new(MPIEXEC);
    if let Some(h) = hosts {
        cmd.args(["-launcher", "ssh", "-launcher-exec"])
            .arg(script("netns-exec.sh"))
            .args(["-iface", &h.bridge, "-hosts", &h.addrs.join(",")]);
    }
    cmd.args(["-prepend-rank", "-n", &n.to_string()])
        .args(program)
        .env("HC_TEST_TAG", tag);
    cmd
}

/// Hydra prefixes lines `[rank] `, as hcrun does; Slurm's `--label` writes `rank: `.
/// Rewrite the latter to the former so that [`JobOutput::rank_lines`] reads both.
pub fn normalize_labels(mut out: JobOutput) -> JobOutput {
    let fix = |s: &str| -> String {
        s.lines()
            .map(|l| match l.split_once(": ") {
                Some((r, rest)) if r.trim().parse::<u32>().is_ok() => {
                    format!("[{}] {rest}", r.trim())
                }
                _ => l.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    out.stdout = fix(&out.stdout);
    out.stderr = fix(&out.stderr);
    out
}

/// Panic unless a job of `n` (not a power of two) failed fast, saying so with the powers of
/// two around `n`, and left no process tagged `tag`.
pub fn assert_refused_size(out: &JobOutput, n: u32, tag: &str) {
    assert!(!out.status.success(), "{out:?}");
    let all = format!("{}{}", out.stdout, out.stderr);
    let hi = n.next_power_of_two();
    let lo = hi / 2;
    assert!(
        all.contains(&format!("{n} processes"))
            && all.contains("power of two")
            && all.contains(&format!("{lo} or {hi}")),
        "{all}"
    );
    assert!(
        out.elapsed < Duration::from_secs(15),
        "took {:?}",
        out.elapsed
    );
    assert_eq!(wait_gone(tag, Duration::from_secs(5)), Vec::<u32>::new());
}

/// Panic unless every one of the `n` ranks of the `antipodal` example printed its exchange.
pub fn assert_antipodal(out: &JobOutput, n: u32) {
    out.assert_ok();
    let d = n.trailing_zeros();
    for r in 0..n {
        let a = r ^ (n - 1);
        let want = format!("node {r} <- node {a} ({d} hops): greetings from node {a}");
        assert!(out.rank_lines(r).contains(&want.as_str()), "{out:?}");
    }
}
