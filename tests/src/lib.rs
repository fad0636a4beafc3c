//! Helpers for cross-process tests: build the real launcher (`hcrun`) once, run a node
//! program through it with a deadline, and make sure nothing is left running; and the
//! correctness suites the node programs and the in-process tests share ([`suites`]).

pub mod cluster;
pub mod suites;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

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

/// What a job printed and how it ended.
#[derive(Debug)]
pub struct JobOutput {
    /// hcrun's exit status.
    pub status: ExitStatus,
    /// Everything on stdout (lines prefixed by rank).
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
    /// Wall time of the whole job.
    pub elapsed: Duration,
}

impl JobOutput {
    /// Lines of stdout printed by `rank` (prefix stripped).
    pub fn rank_lines(&self, rank: u32) -> Vec<&str> {
        let p = format!("[{rank}] ");
        self.stdout
            .lines()
            .filter_map(|l| l.strip_prefix(p.as_str()))
            .collect()
    }

    /// Check the `integrity` program's `OK integrity <messages> <bytes>` lines: every one of
    /// `ranks` ranks printed one, and together they received `messages`; panics (with the
    /// output and `what`) otherwise. Returns the bytes received.
    pub fn assert_integrity(&self, ranks: u32, messages: u64, what: &str) -> u64 {
        let (mut n, mut bytes) = (0, 0);
        for r in 0..ranks {
            let line = self
                .rank_lines(r)
                .into_iter()
                .find(|l| l.starts_with("OK integrity"))
                .unwrap_or_else(|| panic!("{what}: rank {r} did not finish:\n{self:?}"));
            let f: Vec<u64> = line
                .split_whitespace()
                .skip(2)
                .filter_map(|x| x.parse().ok())
                .collect();
            n += f.first().copied().unwrap_or(0);
            bytes += f.get(1).copied().unwrap_or(0);
        }
        assert_eq!(n, messages, "{what}: messages received");
        bytes
    }

    /// Panic unless every one of the `ranks` printed `OK <check>` for every check.
    pub fn assert_every_rank_passed(&self, ranks: u32, checks: &[&str]) -> &Self {
        for r in 0..ranks {
            let lines = self.rank_lines(r);
            for c in checks {
                assert!(
                    lines.contains(&format!("OK {c}").as_str()),
                    "rank {r} did not pass {c}:\n{}\n{}",
                    self.stdout,
                    self.stderr
                );
            }
        }
        self
    }

    /// Panic with the whole output unless the job succeeded.
    pub fn assert_ok(&self) -> &Self {
        assert!(
            self.status.success(),
            "job failed: {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.status,
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Kills a process (and, with `group`, its process group) when dropped — also when a test
/// fails half-way.
pub struct Guard {
    pid: i32,
}

impl Guard {
    /// Guard the process group led by `pid`.
    pub fn new(pid: u32) -> Guard {
        Guard { pid: pid as i32 }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's process group; no memory is involved.
        unsafe {
            libc_kill(-self.pid, 9);
        }
    }
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

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
                libc_kill(p as i32, 9);
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

/// Run `hcrun <hcrun_args> -- <program> <args>` with extra environment; kill it after
/// `timeout`. Returns what it printed.
pub fn run_hcrun(
    hcrun_args: &[&str],
    program: &[&str],
    env: &[(&str, &str)],
    timeout: Duration,
) -> JobOutput {
    let mut cmd = Command::new(hcrun());
    cmd.args(hcrun_args);
    if !program.is_empty() {
        cmd.arg("--").args(program);
    }
    cmd.envs(env.iter().copied());
    run_command(cmd, timeout)
}

/// Run a command in its own process group with stdin closed and its output captured; the
/// whole group is killed when it ends, fails or outlives `timeout` (then this panics with
/// what it printed).
pub fn run_command(mut cmd: Command, timeout: Duration) -> JobOutput {
    use std::os::unix::process::CommandExt;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let start = Instant::now();
    let what = format!("{:?}", cmd.get_program());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    let _guard = Guard {
        pid: child.id() as i32,
    };
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = loop {
        if let Some(st) = child.try_wait().expect("waiting for the job") {
            break st;
        }
        if start.elapsed() > timeout {
            // SAFETY: kill(2) of our own child's process group.
            unsafe {
                libc_kill(-(child.id() as i32), 9);
            }
            let st = child.wait().expect("waiting for the job");
            let stdout = t_out.join().unwrap_or_default();
            let stderr = t_err.join().unwrap_or_default();
            panic!(
                "{what} did not finish within {timeout:?} ({st:?})\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let elapsed = start.elapsed();
    JobOutput {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
        elapsed,
    }
}

/// Run a node program (a path, usually `env!("CARGO_BIN_EXE_<name>")`) on a `dim`-cube.
pub fn run_job(dim: u32, program: &str, args: &[&str]) -> JobOutput {
    let d = dim.to_string();
    let mut prog = vec![program];
    prog.extend_from_slice(args);
    run_hcrun(
        &["--dim", &d, "--timeout-s", "120"],
        &prog,
        &[],
        Duration::from_secs(150),
    )
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

/// The checks every rank of `coll_suite` prints (`OK <op> <scope>`): those of
/// [`suites::collectives`].
pub fn collective_checks() -> Vec<String> {
    suites::collectives::check_names()
}

/// The checks every rank of `ipsc_suite` prints (`OK <check>`): those of [`suites::ipsc`].
pub const IPSC_CHECKS: &[&str] = &suites::ipsc::CHECK_NAMES;

/// SplitMix64: a small deterministic generator for the tests' random choices (the same on
/// every rank and every run for one seed; no dependency).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// One step from `seed`: a well-mixed 64-bit value derived from it.
    pub fn mix(seed: u64) -> u64 {
        SplitMix64(seed).next_u64()
    }
}

/// A job started in the background (`hcrun` in a process group of its own, killed with it
/// when this is dropped), its output arriving line by line: stdout lines as printed, stderr
/// lines prefixed `stderr: `. For tests that act while the job runs (kill a rank, watch for
/// a line).
pub struct LiveJob {
    /// The launcher's process.
    pub child: std::process::Child,
    /// The output lines, as they come.
    pub lines: std::sync::mpsc::Receiver<String>,
    _guard: Guard,
}

impl LiveJob {
    /// Start `cmd` (stdin closed, output piped, its own process group).
    pub fn start(mut cmd: Command) -> LiveJob {
        use std::io::{BufRead, BufReader};
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {:?}: {e}", cmd.get_program()));
        let guard = Guard::new(child.id());
        let out = child.stdout.take().expect("stdout");
        let err = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        let tx2 = tx.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                let _ = tx2.send(format!("stderr: {l}"));
            }
        });
        LiveJob {
            child,
            lines: rx,
            _guard: guard,
        }
    }

    /// Wait (bounded by `limit`) for the job to end; `None` if it is still running then.
    pub fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait().expect("waiting for the job") {
                return Some(st);
            }
            if start.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The lines that come within `quiet` of each other from now on (the rest of the
    /// output of a job that has ended).
    pub fn drain(&self, quiet: Duration) -> Vec<String> {
        let mut v = Vec::new();
        while let Ok(l) = self.lines.recv_timeout(quiet) {
            v.push(l);
        }
        v
    }
}

/// The stderr lines among a [`LiveJob`]'s `lines` (still prefixed `stderr: `), joined by
/// newlines: what the launcher said, e.g. its verdict on a failed job.
pub fn stderr_text(lines: &[String]) -> String {
    lines
        .iter()
        .filter(|l| l.starts_with("stderr:"))
        .cloned()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rank and pid of a line `[R] PID N` that a test program printed through `hcrun`.
pub fn rank_pid_line(line: &str) -> Option<(u32, u32)> {
    let (r, p) = line.strip_prefix('[')?.split_once("] PID ")?;
    Some((r.parse().ok()?, p.trim().parse().ok()?))
}
