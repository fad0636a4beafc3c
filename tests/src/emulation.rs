//! What the tests of the emulated network (`tests/tests/cubenet*.rs`) share: whether a
//! network can be built here, one such job at a time, and what the host's network looks
//! like (a job must leave it as it found it); a cable put back, and what it carried; the
//! link rate they build.

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The link rate the emulated-network tests build (`hcrun --link-rate`).
pub const RATE: &str = "100mbit";

/// [`RATE`] in bytes per second.
pub const RATE_BYTES_PER_SEC: f64 = 100e6 / 8.0;

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

/// The opening of every test on the emulated network: `None` (after the loud skip of
/// [`emulation_possible`]) where no network can be built here, else the [`serial`] guard,
/// to hold for the test.
pub fn emulated(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    emulation_possible(test).then(serial)
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

/// `ip ARGS` run inside the network namespace of process `pid` (a rank).
pub fn ip_in<S: AsRef<std::ffi::OsStr>>(pid: u32, args: &[S]) -> std::process::Output {
    Command::new("nsenter")
        .arg(format!("--net=/proc/{pid}/ns/net"))
        .arg("ip")
        .args(args)
        .output()
        .expect("running nsenter")
}

/// The routes over the edge in dimension `k` (`dim<k>`) in the network namespace of
/// process `pid` (a rank): `ip route` lines. Taking the link down removes them; putting it
/// back does not restore them ([`put_back`] does).
pub fn routes_over(pid: u32, k: u32) -> Vec<String> {
    let out = ip_in(pid, &["-o", "route", "show", "dev", &format!("dim{k}")]);
    let routes: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert!(!routes.is_empty(), "no route over dim{k}");
    routes
}

/// Put node `node`'s dim-`k` cable back, in the namespace of its rank `pid`: its end up,
/// and its `routes` (as [`routes_over`] gave them) over it again.
pub fn put_back(pid: u32, node: u32, k: u32, routes: &[String]) {
    let dev = format!("dim{k}");
    let mut cmds = vec![["link", "set", &dev, "up"].map(String::from).to_vec()];
    for r in routes {
        let mut c: Vec<String> = ["route", "replace"].map(String::from).to_vec();
        c.extend(r.split_whitespace().map(String::from));
        c.extend(["dev".to_string(), dev.clone()]);
        cmds.push(c);
    }
    for c in cmds {
        let out = ip_in(pid, &c);
        assert!(
            out.status.success(),
            "node {node}: ip {c:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Bytes sent so far on the `dim<k>` interface in the namespace of process `pid` (`None`:
/// the process is gone).
pub fn tx_bytes(pid: u32, k: u32) -> Option<u64> {
    let out = ip_in(pid, &["-j", "-s", "link", "show", &format!("dim{k}")]);
    let json = String::from_utf8_lossy(&out.stdout);
    let at = json.find("\"tx\":{\"bytes\":")? + "\"tx\":{\"bytes\":".len();
    let digits: String = json[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Node program `prog` (printing `PID n` first) on the emulated `dim`-cube with links of
/// `rate`, and its ranks' pids in rank order, once all have started. The job's deadline:
/// 120 s, more by a soak's `for=SECS` argument.
pub fn start_on_cube_at(
    dim: u32,
    rate: &str,
    prog: &[&str],
) -> (crate::LiveJob, crate::KillList, Vec<u32>) {
    let soak = prog
        .iter()
        .find_map(|a| a.strip_prefix("for=")?.parse::<u64>().ok());
    let timeout = (120 + soak.unwrap_or(0)).to_string();
    let dim_s = dim.to_string();
    let mut cmd = Command::new(crate::hcrun());
    cmd.args([
        "--dim",
        &dim_s,
        "--link-rate",
        rate,
        "--timeout-s",
        &timeout,
        "--",
    ])
    .args(prog);
    let job = crate::LiveJob::start(cmd);
    let mut ranks = crate::KillList::default();
    let mut pids = vec![0u32; 1 << dim];
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids.contains(&0) && Instant::now() < deadline {
        if let Ok(l) = job.lines.recv_timeout(Duration::from_millis(200)) {
            if let Some((r, pid)) = crate::rank_pid_line(&l) {
                pids[r as usize] = pid;
                ranks.add([pid]);
            }
        }
    }
    assert!(!pids.contains(&0), "the ranks did not all start: {pids:?}");
    (job, ranks, pids)
}
