//! `hypercube-bench cubenet` (or `scripts/cubenet-compare.sh`): ours and Open MPI on the
//! **same emulated hypercube network** (`hcrun --link-rate`, `cubenet`: a network namespace
//! per node, a `tbf`-shaped veth pair per cube edge), beside the all-port link bound of
//! every operation ([`crate::linkbound`]).
//!
//! For every cube dimension d and link rate:
//! 1. the one-hop stream rate is measured on that network (`osu bw` between the neighbours
//!    0 and 1, ours and Open MPI's): the link bound uses the measured rate, not the nominal;
//! 2. the OSU set ([`BENCHES`]) runs once per size, ours as
//!    `hcrun --dim D --link-rate RATE -- osu BENCH --per-rank ...` (a private network per
//!    job), Open MPI's `osu_mpi` under `mpirun.openmpi` on a persistent network of the same
//!    shape built with `cubenet up --kernel-routes` (the kernel forwards between
//!    non-neighbours over the same shaped links), one rank per namespace, started through
//!    `cubenet rsh` ([`Network`]); the network is removed afterwards, also on error;
//! 3. each run reports the OSU average (per-rank mean, averaged over ranks) and the slowest
//!    rank's mean (the average hides a root that finishes last).
//!
//! Every run holds [`LOCK_PATH`] (`flock`), so that no two benchmarks of the checkout share
//! the cores. A failed run is retried (bounded; Open MPI on a rebuilt network) and every
//! retry is counted in the report. Output: `results.csv`, `run-info.txt` and one SVG per
//! benchmark in `<out>/cubenet/`, and the page `<out>/cubenet.md`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use hypercube_plot::{Axis, Figure, Legend, Panel, Series};

use crate::compare::{run_cmd, Record};
use crate::osu;
use crate::peers::{self, CPrograms};
use crate::report::{self, size_text, size_tick, RunInfo};
use crate::Bench;
use crate::{linkbound, load_average, shell_line};

/// The lock every benchmark run of the checkout holds (`flock`), ours and Open MPI's.
pub const LOCK_PATH: &str = "/tmp/hc-bench.lock";
/// The default name of the persistent network built for Open MPI (`cubenet --name`).
pub const DEFAULT_NAME: &str = "hcbench";
/// The heading of the section of `cubenet.md` that `hypercube-bench cubenet-model` fills.
pub const MODEL_HEADING: &str = "## Grama's model, fitted";
/// The placeholder line of that section.
pub const MODEL_PLACEHOLDER: &str = "<!-- model-fit: filled by hypercube-bench cubenet-model -->";
/// The heading of the hand-written reading, which a rewrite of the page keeps.
pub const READING_HEADING: &str = "## Reading";
/// The first line of the hand-written reading.
pub const READING_BEGIN: &str =
    "<!-- reading: written by hand; hypercube-bench cubenet keeps it when it rewrites this page -->";
/// The line after the hand-written reading.
pub const READING_END: &str = "<!-- /reading -->";

/// The `impl` column: ours (`osu` through `hcrun --link-rate`).
pub const OURS: &str = "hypercube";
/// The `impl` column: Open MPI (`osu_mpi` under `mpirun.openmpi` on `cubenet`).
pub const OMPI: &str = "ompi";

/// The interface that holds a node's cube address in the network `cubenet` builds
/// (launcher/src/cubenet): Open MPI's BTL is bound to it.
pub const CUBE_IF: &str = "cube";
/// The management network of `cubenet` (launcher/src/cubenet): Open MPI's out-of-band
/// channel (mpirun ↔ its daemons) runs over it, never over the shaped links.
pub const MGMT_NET: &str = "10.202.0.0/16";

/// The OSU set run on the emulated network, in the order of the report.
pub const BENCHES: [Bench; 11] = [
    Bench::Latency,
    Bench::Bcast,
    Bench::Reduce,
    Bench::Allreduce,
    Bench::Allgather,
    Bench::ReduceScatter,
    Bench::Alltoall,
    Bench::Scatter,
    Bench::Gather,
    Bench::Scan,
    Bench::Barrier,
];

/// The size of the one-hop stream measurement (`osu bw`: 64 such messages in flight).
pub const STREAM_SIZE: u64 = 65536;

/// The options of `hypercube-bench cubenet`.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Cube dimensions
    #[arg(long, value_delimiter = ',', default_value = "3,4")]
    pub dims: Vec<u32>,
    /// Link rates, each direction, as tc reads them
    #[arg(long, value_delimiter = ',', default_value = "100mbit,1gbit")]
    pub rates: Vec<String>,
    /// Benchmarks: `all` (the OSU set: latency bcast reduce allreduce allgather
    /// reduce_scatter alltoall scatter gather scan barrier) or a list
    #[arg(long, default_value = "all")]
    pub benches: String,
    /// Message sizes in bytes (each one run on its own; barrier runs at 0 only)
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "8,1024,65536,262144,1048576"
    )]
    pub sizes: Vec<u64>,
    /// Repetitions of every run (the report shows medians)
    #[arg(long, default_value_t = 1)]
    pub reps: u32,
    /// Seconds of measured calls one run aims at: the iterations are this over an estimate
    /// of one call (start-up plus the bytes of a simple algorithm over the measured rate)
    #[arg(long, default_value_t = 1.5)]
    pub budget_s: f64,
    /// The fewest measured calls of a run (at 100 Mbit/s a 1 MiB all-to-all on 16 ranks
    /// takes about a second per call)
    #[arg(long, default_value_t = 3)]
    pub min_iters: u64,
    /// The most measured calls of a run (latency: ten times this)
    #[arg(long, default_value_t = 1000)]
    pub max_iters: u64,
    /// The token bucket's depth, as tc reads sizes (default: hcrun's and cubenet's, one
    /// millisecond of traffic, at least 96 KiB)
    #[arg(long)]
    pub link_burst: Option<String>,
    /// Attempts after a failed run (Open MPI's on a rebuilt network); each is counted
    #[arg(long, default_value_t = 3)]
    pub retries: u32,
    /// Deadline of one run in seconds
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
    /// Do not run Open MPI
    #[arg(long)]
    pub no_mpi: bool,
    /// A smoke run of about two minutes: d = 3 at both rates; latency, bcast, allreduce,
    /// alltoall, barrier at 8 B and 64 KiB; a budget of 0.3 s per run (overrides those
    /// options)
    #[arg(long)]
    pub quick: bool,
    /// Name of the persistent network built for Open MPI (at most 8 lowercase letters and
    /// digits); a leftover network of this name is removed first
    #[arg(long, default_value = DEFAULT_NAME)]
    pub name: String,
    /// Output folder: writes OUT/cubenet.md and OUT/cubenet/ (results.csv, run-info.txt, SVG)
    #[arg(long, default_value_os_t = default_out())]
    pub out: PathBuf,
    /// Measure nothing: re-render OUT/cubenet.md and the plots from OUT/cubenet/results.csv
    #[arg(long)]
    pub report: bool,
}

/// The repository's docs/perf (this crate is crates/bench).
pub fn default_out() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/perf")
}

/// One measured figure: a row of `results.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Cube dimension.
    pub dim: u32,
    /// Link rate as given (`100mbit`).
    pub rate: String,
    /// [`OURS`] or [`OMPI`].
    pub imp: String,
    /// Benchmark name ([`Bench::name`]).
    pub bench: String,
    /// Message size in bytes (OSU's SIZE).
    pub size: u64,
    /// Repetition, from 1.
    pub rep: u32,
    /// The OSU figure: per-rank mean time of one call averaged over ranks (µs); for
    /// latency half the round trip (µs); for bw, MB/s.
    pub avg: f64,
    /// The slowest rank's mean time of one call (µs); = `avg` where there are no per-rank
    /// times (latency, bw).
    pub max: f64,
    /// `us` or `MB/s`.
    pub unit: String,
    /// Measured calls (warm-up excluded).
    pub iters: u64,
    /// The measured one-hop stream rate of this network, bytes/s (the bound's rate).
    pub link_bps: f64,
    /// The link bound at `link_bps` (µs), where the benchmark has one.
    pub bound_us: Option<f64>,
    /// Every rank's mean time (µs), in rank order (empty when not printed).
    pub per_rank: Vec<f64>,
}

/// The CSV header of `results.csv`.
pub const CSV_HEADER: &str =
    "dim,rate,impl,bench,size,rep,avg,max,unit,iters,link_bytes_per_s,bound_us,per_rank";

impl Row {
    /// One CSV line (no newline); `per_rank` is `;`-separated, `bound_us` empty if none.
    pub fn to_csv(&self) -> String {
        let per: Vec<String> = self.per_rank.iter().map(|v| format!("{v:.2}")).collect();
        format!(
            "{},{},{},{},{},{},{:.3},{:.3},{},{},{:.0},{},{}",
            self.dim,
            self.rate,
            self.imp,
            self.bench,
            self.size,
            self.rep,
            self.avg,
            self.max,
            self.unit,
            self.iters,
            self.link_bps,
            self.bound_us.map_or(String::new(), |b| format!("{b:.3}")),
            per.join(";")
        )
    }

    /// Parse a line written by [`Row::to_csv`].
    pub fn from_csv(line: &str) -> Result<Row> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 13 {
            bail!("expected 13 fields in {line:?}");
        }
        Ok(Row {
            dim: f[0].parse()?,
            rate: f[1].to_string(),
            imp: f[2].to_string(),
            bench: f[3].to_string(),
            size: f[4].parse()?,
            rep: f[5].parse()?,
            avg: f[6].parse()?,
            max: f[7].parse()?,
            unit: f[8].to_string(),
            iters: f[9].parse()?,
            link_bps: f[10].parse()?,
            bound_us: if f[11].is_empty() {
                None
            } else {
                Some(f[11].parse()?)
            },
            per_rank: f[12]
                .split(';')
                .filter(|x| !x.is_empty())
                .map(str::parse)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// Read `results.csv`.
pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(Row::from_csv)
        .collect()
}

/// Write `results.csv`.
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&r.to_csv());
        s.push('\n');
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

/// One row of an OSU-format output with the per-rank line that follows it, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// SIZE.
    pub size: u64,
    /// The printed figure.
    pub value: f64,
    /// The `# per rank:` line after it (ours: `osu --per-rank`; `osu_mpi --per-rank`).
    pub per_rank: Vec<f64>,
}

impl Measured {
    /// The slowest rank's time: the largest per-rank mean, or the figure without them.
    pub fn slowest(&self) -> f64 {
        self.per_rank
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            .unwrap_or(self.value)
    }
}

/// Parse a run's output: the rows [`osu::parse_table`] recognises, each with the
/// `# per rank: T0 T1 ...` line printed after it (other `#` lines, such as ours'
/// `# per rank, barrier exit ...`, and launcher chatter are ignored).
pub fn parse_output(text: &str) -> Vec<Measured> {
    let mut out: Vec<Measured> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("# per rank:") {
            if let Some(last) = out.last_mut() {
                last.per_rank = rest
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
            }
            continue;
        }
        for (size, value) in osu::parse_table(line).rows {
            out.push(Measured {
                size,
                value,
                per_rank: Vec::new(),
            });
        }
    }
    out
}

/// A rate as tc reads it (`100mbit`, `1gbit`, `500kbit`, `2.8MBps`, `1000000bit`), in
/// bytes per second (tc's `k`, `m`, `g`, `t` are powers of 1000 for rates).
pub fn nominal_bytes_per_sec(rate: &str) -> Result<f64> {
    let s = rate.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .with_context(|| format!("rate {rate:?}: no number"))?;
    let (scale, bits) = match unit {
        "" | "bit" => (1.0, true),
        "kbit" => (1e3, true),
        "mbit" => (1e6, true),
        "gbit" => (1e9, true),
        "tbit" => (1e12, true),
        "bps" => (1.0, false),
        "kbps" => (1e3, false),
        "mbps" => (1e6, false),
        "gbps" => (1e9, false),
        "tbps" => (1e12, false),
        _ => bail!("rate {rate:?}: unknown unit {unit:?} (use bit, kbit, mbit, gbit, or bps, kbps, mbps, gbps)"),
    };
    let bps = v * scale / if bits { 8.0 } else { 1.0 };
    anyhow::ensure!(bps > 0.0, "rate {rate:?} is not positive");
    Ok(bps)
}

/// A rough estimate of one call's time (s) on a d-cube of `bps` links, to choose a run's
/// iterations: a start-up per step plus the bytes a simple algorithm moves over one link in
/// sequence (binomial tree d·m, recursive doubling or a linear root (p−1)·m, all-to-all
/// p·m — about twice its link bound).
pub fn estimate_secs(bench: Bench, dim: u32, m: u64, bps: f64) -> f64 {
    let d = f64::from(dim.max(1));
    let p = f64::from(1u32 << dim);
    let m = m as f64;
    let bytes = match bench {
        Bench::Latency => m,
        Bench::Bcast | Bench::Reduce | Bench::Scan | Bench::Allreduce => d * m,
        Bench::Alltoall => p * m,
        Bench::Barrier => 0.0,
        _ => (p - 1.0) * m,
    };
    let startup = if bench == Bench::Latency {
        20e-6
    } else {
        150e-6 * d
    };
    startup + bytes / bps
}

/// Measured calls and warm-up calls of a run: `budget_s` over [`estimate_secs`], within
/// `[min, max]`; warm-up a tenth of that, at least 1, at most OSU's defaults (100 up to
/// 8 KiB, 10 above), and at least 5 up to 8 KiB, where calls are cheap and the first ones
/// pay for connection set-up.
pub fn iterations(est_s: f64, budget_s: f64, min: u64, max: u64, size: u64) -> (u64, u64) {
    let n = (budget_s / est_s.max(1e-9)).round();
    let n = (n.min(max as f64) as u64).clamp(min.max(1), max.max(min).max(1));
    let w = if size <= 8192 {
        (n / 10).clamp(5.min(n).max(1), 100)
    } else {
        (n / 10).clamp(1, 10)
    };
    (n, w)
}

/// The most measured calls of a run of `bench`: `max`, ten times that for the ping-pong
/// (OSU's own default is 10 000 up to 8 KiB: 1 000 round trips of 8 B are 10 ms, which
/// one preemption on the shared cores distorts).
pub fn max_iters_of(bench: Bench, max: u64) -> u64 {
    if bench.is_p2p() {
        max.saturating_mul(10)
    } else {
        max
    }
}

/// The `-i` that makes `osu` and `osu_mpi` run `n` measured calls at `size` (both use a
/// tenth of `-i` above 8 KiB).
pub fn osu_iters_arg(n: u64, size: u64) -> u64 {
    if size > 8192 {
        n * 10
    } else {
        n
    }
}

// ---------------------------------------------------------------------------------------
// Running.

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Catch SIGINT, SIGTERM and SIGHUP: the run in progress ends (runs are in process groups
/// of their own), then the network is removed and the program stops.
fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only stores to an atomic (async-signal-safe).
        unsafe {
            libc::signal(
                sig,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

fn check_stop() -> Result<()> {
    if STOP.load(Ordering::SeqCst) {
        bail!("stopped by a signal");
    }
    Ok(())
}

/// [`LOCK_PATH`], held (`flock(LOCK_EX)`) while the value lives (closing the file
/// releases it).
pub struct BenchLock {
    _file: std::fs::File,
}

impl BenchLock {
    /// Wait for the lock and take it.
    pub fn take() -> Result<BenchLock> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(LOCK_PATH)
            .with_context(|| format!("opening {LOCK_PATH}"))?;
        loop {
            // SAFETY: flock(2) on a file we hold open.
            if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(BenchLock { _file: f });
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e).with_context(|| format!("locking {LOCK_PATH}"));
            }
            check_stop()?;
        }
    }
}

/// The persistent network Open MPI runs on (`cubenet up --kernel-routes`), with the rsh
/// agent and hostfile for `mpirun`. Removed (`cubenet down`) when dropped.
pub struct Network {
    cubenet: PathBuf,
    name: String,
    up_args: Vec<String>,
    /// mpirun's `plm_rsh_agent`: a script that runs `cubenet rsh` with a TMPDIR per node.
    pub agent: PathBuf,
    /// One cube address per line, `slots=1`, in rank order.
    pub hostfile: PathBuf,
    /// Nodes.
    pub nodes: u32,
}

impl Network {
    /// Build the network `name` (removing a leftover of that name first) and write the
    /// agent and hostfile into `dir`.
    pub fn up(
        cubenet: &Path,
        name: &str,
        dim: u32,
        rate: &str,
        burst: Option<&str>,
        dir: &Path,
    ) -> Result<Network> {
        let mut up_args = vec![
            "up".to_string(),
            "--dim".into(),
            dim.to_string(),
            "--link-rate".into(),
            rate.into(),
            "--kernel-routes".into(),
        ];
        if let Some(b) = burst {
            up_args.extend(["--link-burst".into(), b.into()]);
        }
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let net = Network {
            cubenet: cubenet.to_path_buf(),
            name: name.to_string(),
            up_args,
            agent: dir.join(format!("agent-{name}.sh")),
            hostfile: dir.join(format!("hosts-{name}")),
            nodes: 1 << dim,
        };
        net.down()?;
        net.build()?;
        std::fs::write(&net.agent, agent_script(cubenet, name))
            .with_context(|| format!("writing {}", net.agent.display()))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&net.agent, std::fs::Permissions::from_mode(0o755))?;
        }
        let hosts = net.hosts()?;
        anyhow::ensure!(
            hosts.len() == net.nodes as usize,
            "cubenet hosts listed {} nodes of {name}, expected {}",
            hosts.len(),
            net.nodes
        );
        let text: String = hosts.iter().map(|h| format!("{h} slots=1\n")).collect();
        std::fs::write(&net.hostfile, text)
            .with_context(|| format!("writing {}", net.hostfile.display()))?;
        Ok(net)
    }

    fn cubenet(&self, args: &[String]) -> Result<std::process::Output> {
        let out = Command::new(&self.cubenet)
            .args(["--name", &self.name])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .with_context(|| format!("running {}", self.cubenet.display()))?;
        if !out.status.success() {
            bail!(
                "cubenet --name {} {} failed: {}",
                self.name,
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(out)
    }

    fn build(&self) -> Result<()> {
        self.cubenet(&self.up_args).map(drop)
    }

    /// The nodes' cube addresses in rank order (`cubenet hosts`).
    fn hosts(&self) -> Result<Vec<String>> {
        let out = self.cubenet(&["hosts".into()])?;
        Ok(parse_hosts(&String::from_utf8_lossy(&out.stdout)))
    }

    /// Remove the network (and what runs in it) and the nodes' TMPDIRs.
    pub fn down(&self) -> Result<()> {
        self.cubenet(&["down".into()])?;
        let prefix = format!("ompi-{}-", self.name);
        for e in std::fs::read_dir("/tmp").into_iter().flatten().flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        Ok(())
    }

    /// Remove and build again (after a failed run: no leftover daemons, fresh links).
    pub fn rebuild(&self) -> Result<()> {
        self.down()?;
        self.build()
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("cubenet-bench: removing the network {}: {e:#}", self.name);
        }
    }
}

/// The cube addresses of `cubenet hosts`' output (`rank namespace cube mgmt`), by rank.
pub fn parse_hosts(text: &str) -> Vec<String> {
    let mut v: Vec<(u32, String)> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4).then(|| Some((f[0].parse().ok()?, f[2].to_string())))?
        })
        .collect();
    v.sort();
    v.into_iter().map(|x| x.1).collect()
}

/// mpirun's rsh agent: `cubenet --name NAME rsh HOST CMD` with `TMPDIR=/tmp/ompi-NAME-HOST`
/// (Open MPI's session directories of different nodes otherwise collide in the shared /tmp:
/// "mkdir ... File exists").
fn agent_script(cubenet: &Path, name: &str) -> String {
    format!(
        "#!/bin/sh\n\
         # mpirun's rsh agent on the emulated network {name} (written by hypercube-bench cubenet):\n\
         # runs the command in the namespace of the node HOST, with a TMPDIR of its own.\n\
         while [ $# -gt 0 ]; do\n\
         \x20 case $1 in\n\
         \x20   -o | -p | -l | -i | -F) shift 2 ;;\n\
         \x20   -*) shift ;;\n\
         \x20   *) break ;;\n\
         \x20 esac\n\
         done\n\
         host=$1\n\
         shift\n\
         dir=/tmp/ompi-{name}-$host\n\
         exec '{}' --name {name} rsh \"$host\" \"mkdir -p $dir && TMPDIR=$dir && export TMPDIR && $*\"\n",
        cubenet.display()
    )
}

/// The programs of a run.
#[derive(Clone, Debug)]
struct Tools {
    hcrun: PathBuf,
    osu: PathBuf,
    cubenet: PathBuf,
    /// `target/`: the agent and hostfiles go to `target/cubenet-bench/`.
    target: PathBuf,
}

impl Tools {
    /// The programs beside this one, copied into `target/cubenet-bench/bin/` (and used from
    /// there): a build in the shared target folder during the run then cannot swap them.
    fn beside_me() -> Result<Tools> {
        let me = std::env::current_exe().context("finding this program")?;
        let dir = me.parent().context("this program has no folder")?;
        let target = dir.parent().unwrap_or(dir).to_path_buf();
        let bin = target.join("cubenet-bench/bin");
        std::fs::create_dir_all(&bin).with_context(|| format!("creating {}", bin.display()))?;
        let copy = |name: &str| -> Result<PathBuf> {
            let from = dir.join(name);
            if !from.is_file() {
                bail!(
                    "{} is missing; build first: cargo build --release -p launcher -p \
                     hypercube-bench",
                    from.display()
                );
            }
            let to = bin.join(name);
            let tmp = bin.join(format!(".{name}.{}", std::process::id()));
            std::fs::copy(&from, &tmp)
                .with_context(|| format!("copying {} to {}", from.display(), tmp.display()))?;
            std::fs::rename(&tmp, &to).with_context(|| format!("moving {}", to.display()))?;
            Ok(to)
        };
        Ok(Tools {
            hcrun: copy("hcrun")?,
            osu: copy("osu")?,
            cubenet: copy("cubenet")?,
            target,
        })
    }
}

/// What to run (the options after `--quick`).
#[derive(Clone, Debug)]
struct Plan {
    dims: Vec<u32>,
    rates: Vec<String>,
    benches: Vec<Bench>,
    sizes: Vec<u64>,
    reps: u32,
    budget_s: f64,
    min_iters: u64,
    max_iters: u64,
}

impl Plan {
    fn of(a: &Args) -> Result<Plan> {
        let mut p = Plan {
            dims: a.dims.clone(),
            rates: a.rates.clone(),
            benches: parse_benches(&a.benches)?,
            sizes: a.sizes.clone(),
            reps: a.reps.max(1),
            budget_s: a.budget_s,
            min_iters: a.min_iters.max(1),
            max_iters: a.max_iters.max(1),
        };
        if a.quick {
            p.dims = vec![3];
            p.benches = vec![
                Bench::Latency,
                Bench::Bcast,
                Bench::Allreduce,
                Bench::Alltoall,
                Bench::Barrier,
            ];
            p.sizes = vec![8, 65536];
            p.reps = 1;
            p.budget_s = 0.3;
            p.min_iters = 2;
        }
        anyhow::ensure!(!p.sizes.is_empty(), "--sizes must not be empty");
        for &d in &p.dims {
            anyhow::ensure!((1..=8).contains(&d), "--dims: {d} is not in 1..=8");
        }
        for r in &p.rates {
            nominal_bytes_per_sec(r)?;
        }
        Ok(p)
    }

    fn sizes_of(&self, b: Bench) -> Vec<u64> {
        if b == Bench::Barrier {
            vec![0]
        } else {
            let mut v = self.sizes.clone();
            v.sort_unstable();
            v.dedup();
            v
        }
    }
}

fn parse_benches(s: &str) -> Result<Vec<Bench>> {
    if s.trim() == "all" {
        return Ok(BENCHES.to_vec());
    }
    let v: Vec<Bench> = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(str::parse)
        .collect::<Result<_>>()?;
    for b in &v {
        anyhow::ensure!(
            BENCHES.contains(b),
            "{b} is not in the OSU set run on the network"
        );
    }
    Ok(v)
}

/// The state of a measurement run.
struct Runner {
    tools: Tools,
    mpi_bin: Option<PathBuf>,
    retries: u32,
    timeout: Duration,
    burst: Option<String>,
    notes: Vec<String>,
    /// Retries per (d, rate, impl).
    retry_count: BTreeMap<(u32, String, String), u32>,
    runs: u32,
    /// Time spent waiting for [`LOCK_PATH`] (other benchmarks of the checkout).
    lock_wait: Duration,
}

/// One run to make.
struct Job<'a> {
    imp: &'static str,
    dim: u32,
    rate: &'a str,
    bench: Bench,
    size: u64,
    iters: u64,
    warmup: u64,
}

impl Runner {
    fn ours_cmd(&self, j: &Job<'_>) -> Command {
        let mut c = Command::new(&self.tools.hcrun);
        c.args([
            "--dim".to_string(),
            j.dim.to_string(),
            "--link-rate".into(),
            j.rate.to_string(),
        ]);
        if let Some(b) = &self.burst {
            c.args(["--link-burst", b]);
        }
        c.args([
            "--no-prefix".to_string(),
            "--timeout-s".into(),
            self.timeout.as_secs().max(1).to_string(),
            "--".into(),
        ])
        .arg(&self.tools.osu)
        .args(bench_args(j));
        c
    }

    fn mpi_cmd(&self, net: &Network, bin: &Path, j: &Job<'_>) -> Command {
        let np = if j.bench.is_p2p() { 2 } else { net.nodes };
        let mut c = Command::new(peers::MPIRUN);
        c.args(["--allow-run-as-root", "-np", &np.to_string(), "--hostfile"])
            .arg(&net.hostfile)
            .args(["--bind-to", "none"])
            .args(["--mca", "mpi_yield_when_idle", "1"])
            .args(["--mca", "pml", "ob1", "--mca", "btl", "tcp,self"])
            .args(["--mca", "btl_tcp_if_include", CUBE_IF])
            .args(["--mca", "oob_tcp_if_include", MGMT_NET])
            .args(["--mca", "rtc", "^hwloc", "--mca", "plm_rsh_agent"])
            .arg(&net.agent)
            .arg(bin)
            .args(bench_args(j))
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
        c
    }

    /// Run a job (with retries); its one measured row, or `None` after the last attempt
    /// failed (noted).
    fn run(&mut self, j: &Job<'_>, net: Option<&Network>) -> Result<Option<Measured>> {
        let label = format!(
            "{} d={} {} {} {}",
            j.imp,
            j.dim,
            j.rate,
            j.bench,
            size_text(j.size)
        );
        for attempt in 0..=self.retries {
            check_stop()?;
            let mut cmd = match (j.imp, net, &self.mpi_bin) {
                (OMPI, Some(net), Some(bin)) => self.mpi_cmd(net, bin, j),
                (OMPI, _, _) => bail!("Open MPI run without its network"),
                _ => self.ours_cmd(j),
            };
            let r = {
                let asked = Instant::now();
                let _lock = BenchLock::take()?;
                self.lock_wait += asked.elapsed();
                run_cmd(&mut cmd, self.timeout + Duration::from_secs(10))?
            };
            self.runs += 1;
            let got = if r.ok() {
                parse_output(&r.stdout)
                    .into_iter()
                    .find(|m| m.size == j.size || j.bench == Bench::Barrier)
            } else {
                None
            };
            eprintln!(
                "cubenet-bench: {label:<40} -i {:<4} {:>6.1} s  {}",
                j.iters,
                r.elapsed.as_secs_f64(),
                match &got {
                    Some(m) => format!("{:.2} (slowest {:.2})", m.value, m.slowest()),
                    None => "failed".into(),
                }
            );
            if got.is_some() {
                return Ok(got);
            }
            let why = if r.timed_out {
                format!("timed out after {:.0} s", r.elapsed.as_secs_f64())
            } else {
                failure_line(&r.stderr, &r.stdout)
            };
            if attempt < self.retries {
                *self
                    .retry_count
                    .entry((j.dim, j.rate.to_string(), j.imp.to_string()))
                    .or_default() += 1;
                self.notes.push(format!(
                    "retry: {label}, attempt {} failed: {why}",
                    attempt + 1
                ));
                eprintln!(
                    "cubenet-bench: {label}: attempt {} failed ({why}); again",
                    attempt + 1
                );
                if let Some(net) = net.filter(|_| j.imp == OMPI) {
                    net.rebuild()?;
                }
            } else {
                self.notes.push(format!(
                    "failed: {label}, all {} attempts; the last: {why}",
                    self.retries + 1
                ));
            }
        }
        Ok(None)
    }
}

/// The arguments of `osu` / `osu_mpi` for a job: one size, its iterations and warm-up,
/// per-rank times for collectives.
fn bench_args(j: &Job<'_>) -> Vec<String> {
    let mut v = vec![
        j.bench.name().to_string(),
        "-m".into(),
        format!("{0}:{0}", j.size),
        "-i".into(),
        osu_iters_arg(j.iters, j.size).to_string(),
        "-x".into(),
        j.warmup.to_string(),
    ];
    if !j.bench.is_p2p() {
        v.push("--per-rank".into());
    }
    v
}

/// The most telling line of a failed run: a rank's or Open MPI's own reason if given.
fn failure_line(stderr: &str, stdout: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .chain(stdout.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("---"))
        .collect();
    lines
        .iter()
        .find(|l| {
            let l = l.to_ascii_lowercase();
            l.contains("firewall")
                || l.contains("aborts the job")
                || l.contains("panicked")
                || l.contains("error")
                || l.contains("file exists")
        })
        .or_else(|| lines.last())
        .map_or_else(|| "no output".to_string(), |l| l.to_string())
}

/// The commit, and whether the code the programs were built from had uncommitted changes
/// (the runtime, launcher or benchmarks).
fn commit_line(repo: &Path) -> String {
    let repo = repo.to_string_lossy();
    let commit = shell_line("git", &["-C", &repo, "rev-parse", "--short", "HEAD"]);
    let dirty = Command::new("git")
        .args([
            "-C",
            &repo,
            "status",
            "--porcelain",
            "--",
            "crates",
            "launcher",
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.get(3..).map(str::to_string))
                .collect::<Vec<_>>()
        });
    match dirty {
        Some(v) if v.is_empty() => format!("{commit} (clean)"),
        Some(v) => format!(
            "{commit} with uncommitted changes in {} file(s): {}",
            v.len(),
            v.join(", ")
        ),
        None => commit,
    }
}

/// The command line, the program by its base name.
fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(k, x)| match x.rsplit_once('/') {
            Some((_, base)) if k == 0 => base.to_string(),
            _ => x,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `hypercube-bench cubenet`: measure (unless `--report`), then write the page.
/// `machine` is the machine's description for the page.
pub fn main(a: Args, machine: String) -> Result<()> {
    let dir = a.out.join("cubenet");
    if a.report {
        let rows = read_csv(&dir.join("results.csv"))?;
        let info = std::fs::read_to_string(dir.join("run-info.txt"))
            .map(|t| RunInfo::from_text(&t))
            .unwrap_or_default();
        write_report(&a.out, &rows, &info, true)?;
        eprintln!(
            "cubenet-bench: wrote {}/cubenet.md and plots",
            a.out.display()
        );
        return Ok(());
    }
    let plan = Plan::of(&a)?;
    let tools = Tools::beside_me()?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!("the emulated network needs root (network namespaces in this host for Open MPI)");
    }
    catch_signals();
    let mut notes = vec![
        "MPICH skipped: this machine's MPICH is ch4:ucx, whose ranks spin (busy-poll) while \
         they wait — on 2 cores with 8 or 16 ranks it measures the scheduler, not the network."
            .to_string(),
    ];
    let mpi_bin = if a.no_mpi {
        notes.push("Open MPI not run (--no-mpi).".into());
        None
    } else {
        match CPrograms::for_exe(&std::env::current_exe()?).mpi() {
            Ok(p) => Some(p),
            Err(e) => {
                notes.push(format!("Open MPI skipped: {e:#}."));
                None
            }
        }
    };
    let mut runner = Runner {
        tools: tools.clone(),
        mpi_bin,
        retries: a.retries,
        timeout: Duration::from_secs(a.timeout_s.max(1)),
        burst: a.link_burst.clone(),
        notes: Vec::new(),
        retry_count: BTreeMap::new(),
        runs: 0,
        lock_wait: Duration::ZERO,
    };
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut meta = Meta {
        machine,
        started: shell_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        commit: commit_line(&repo),
        load_before: load_average(),
        t0: Instant::now(),
        notes,
        link_lines: Vec::new(),
    };
    let mut rows: Vec<Row> = Vec::new();
    let agent_dir = tools.target.join("cubenet-bench");
    for &dim in &plan.dims {
        for rate in &plan.rates {
            match measure_case(
                &mut runner,
                &plan,
                dim,
                rate,
                &a.name,
                &agent_dir,
                &mut rows,
            ) {
                Ok(line) => meta.link_lines.push(line),
                Err(e) => {
                    // Keep what was measured: write it, then fail.
                    runner
                        .notes
                        .push(format!("stopped at d={dim} {rate}: {e:#}"));
                    let _ = finish(&a, &plan, &rows, &runner, &meta);
                    return Err(e);
                }
            }
        }
    }
    finish(&a, &plan, &rows, &runner, &meta)
}

/// Measure one (d, rate): the stream rates, then every benchmark and size, ours and Open
/// MPI's in turn. Returns the run-info line of the measured link rates.
fn measure_case(
    runner: &mut Runner,
    plan: &Plan,
    dim: u32,
    rate: &str,
    name: &str,
    agent_dir: &Path,
    rows: &mut Vec<Row>,
) -> Result<String> {
    let nominal = nominal_bytes_per_sec(rate)?;
    let net = match &runner.mpi_bin {
        Some(_) => Some(Network::up(
            &runner.tools.cubenet,
            name,
            dim,
            rate,
            runner.burst.as_deref(),
            agent_dir,
        )?),
        None => None,
    };
    // 1. The one-hop stream rate: 64 × 64 KiB in flight per iteration, about 3 s.
    let per_iter = osu::WINDOW as f64 * STREAM_SIZE as f64;
    let n = ((3.0 * nominal / per_iter).round() as u64).clamp(3, 200);
    let mut rates: Vec<(&str, f64)> = Vec::new();
    for imp in [OURS, OMPI] {
        if imp == OMPI && net.is_none() {
            continue;
        }
        let j = Job {
            imp,
            dim,
            rate,
            bench: Bench::Bw,
            size: STREAM_SIZE,
            iters: n,
            warmup: 2,
        };
        if let Some(m) = runner.run(&j, net.as_ref())? {
            rows.push(Row {
                dim,
                rate: rate.to_string(),
                imp: imp.to_string(),
                bench: "bw".into(),
                size: STREAM_SIZE,
                rep: 1,
                avg: m.value,
                max: m.value,
                unit: "MB/s".into(),
                iters: n,
                link_bps: m.value * 1e6,
                bound_us: None,
                per_rank: Vec::new(),
            });
            rates.push((imp, m.value * 1e6));
        }
    }
    let link_bps = rates.iter().map(|r| r.1).fold(0.0, f64::max);
    let link_bps = if link_bps > 0.0 {
        link_bps
    } else {
        runner.notes.push(format!(
            "d={dim} {rate}: no stream rate measured; the bound uses the nominal rate"
        ));
        nominal
    };
    for r in rows.iter_mut().filter(|r| r.dim == dim && r.rate == rate) {
        r.link_bps = link_bps;
    }
    let line = format!(
        "d={dim} {rate}: nominal {:.2} MB/s; osu bw 0→1 ({} × 64 in flight): {}; bound uses {:.2} MB/s",
        nominal / 1e6,
        size_text(STREAM_SIZE),
        rates
            .iter()
            .map(|(i, v)| format!("{} {:.2} MB/s", imp_label(i), v / 1e6))
            .collect::<Vec<_>>()
            .join(", "),
        link_bps / 1e6
    );
    eprintln!("cubenet-bench: {line}");

    // 2. The OSU set, repetitions outermost; ours and Open MPI's alternate.
    for rep in 1..=plan.reps {
        for &bench in &plan.benches {
            for size in plan.sizes_of(bench) {
                let est = estimate_secs(bench, dim, size, link_bps);
                let max = max_iters_of(bench, plan.max_iters);
                let (iters, warmup) = iterations(est, plan.budget_s, plan.min_iters, max, size);
                for imp in [OURS, OMPI] {
                    if imp == OMPI && net.is_none() {
                        continue;
                    }
                    let j = Job {
                        imp,
                        dim,
                        rate,
                        bench,
                        size,
                        iters,
                        warmup,
                    };
                    if let Some(m) = runner.run(&j, net.as_ref())? {
                        rows.push(Row {
                            dim,
                            rate: rate.to_string(),
                            imp: imp.to_string(),
                            bench: bench.name().into(),
                            size,
                            rep,
                            avg: m.value,
                            max: m.slowest(),
                            unit: "us".into(),
                            iters,
                            link_bps,
                            bound_us: linkbound::link_bound_secs(bench, dim, size as f64, link_bps)
                                .map(|s| s * 1e6),
                            per_rank: m.per_rank,
                        });
                    }
                }
            }
        }
    }
    drop(net);
    Ok(line)
}

/// What the page states about a measurement run besides its rows.
struct Meta {
    machine: String,
    started: String,
    commit: String,
    load_before: String,
    t0: Instant,
    notes: Vec<String>,
    link_lines: Vec<String>,
}

/// Write the CSV, run-info and the page.
fn finish(a: &Args, plan: &Plan, rows: &[Row], runner: &Runner, meta: &Meta) -> Result<()> {
    let Meta {
        machine,
        started,
        commit,
        load_before,
        t0,
        notes,
        link_lines,
    } = meta;
    let dir = a.out.join("cubenet");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    write_csv(&dir.join("results.csv"), rows)?;
    let retries: u32 = runner.retry_count.values().sum();
    let retry_text = if retries == 0 {
        "none".to_string()
    } else {
        format!(
            "{retries} in all: {}",
            runner
                .retry_count
                .iter()
                .map(|((d, r, i), n)| format!("{} d={d} {r}: {n}", imp_label(i)))
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    let sizes: Vec<String> = plan.sizes.iter().map(|s| size_text(*s)).collect();
    let mut lines = vec![
        ("date".to_string(), started.to_string()),
        ("commit".into(), commit.to_string()),
        ("machine".into(), machine.clone()),
        ("command".into(), format!("`{}`", command_line())),
        (
            "plan".into(),
            format!(
                "d {:?}, rates {}, {} repetition(s), benchmarks {}, sizes {} (barrier: 0); \
                 each size its own run of ≈{} s of measured calls (at least {}, at most {}; \
                 latency ten times that; warm-up a tenth, 5–100 up to 8 KiB, 1–10 above)",
                plan.dims,
                plan.rates.join(", "),
                plan.reps,
                Bench::names(&plan.benches),
                sizes.join(", "),
                plan.budget_s,
                plan.min_iters,
                plan.max_iters
            ),
        ),
        (
            "link burst".into(),
            a.link_burst.clone().map_or_else(
                || {
                    "hcrun's and cubenet's default: one millisecond of traffic, at least 96 KiB"
                        .into()
                },
                |b| b.to_string(),
            ),
        ),
        (
            "peers".into(),
            if runner.mpi_bin.is_some() {
                let v = shell_line(peers::MPIRUN, &["--version"]);
                format!(
                    "Open MPI {} (`{}`) running `crates/bench/c/osu_mpi.c`",
                    v.rsplit(' ').next().unwrap_or("unknown"),
                    peers::MPIRUN
                )
            } else {
                "Open MPI not run".into()
            },
        ),
    ];
    for l in link_lines.iter() {
        lines.push(("link rate".into(), l.clone()));
    }
    lines.extend([
        (
            "load average (1 min) before / after".into(),
            format!("{load_before} / {}", load_average()),
        ),
        (
            "run time".into(),
            format!(
                "{:.1} min ({} runs; {:.1} min of it waiting for {LOCK_PATH}, held by other \
                 benchmarks)",
                t0.elapsed().as_secs_f64() / 60.0,
                runner.runs,
                runner.lock_wait.as_secs_f64() / 60.0
            ),
        ),
        ("retries".into(), retry_text),
    ]);
    let info = RunInfo {
        lines,
        notes: notes.iter().chain(&runner.notes).cloned().collect(),
    };
    std::fs::write(dir.join("run-info.txt"), info.to_text())?;
    write_report(&a.out, rows, &info, false)?;
    eprintln!(
        "cubenet-bench: {} rows in {:.1} min; wrote {}/cubenet.md, cubenet/results.csv and plots",
        rows.len(),
        t0.elapsed().as_secs_f64() / 60.0,
        a.out.display()
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The report.

/// Human names of the implementations.
fn imp_label(imp: &str) -> &'static str {
    match imp {
        OURS => "hypercube",
        OMPI => "Open MPI",
        _ => "other",
    }
}

/// Medians over repetitions of one (d, rate, impl, bench, size): the average and the
/// slowest rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Median of the OSU average.
    pub avg: f64,
    /// Median of the slowest rank's time.
    pub max: f64,
}

/// Key of [`medians`]: (d, rate, impl, bench, size).
pub type Key = (u32, String, String, String, u64);

/// Medians over repetitions of every (d, rate, impl, bench, size), of the average and of
/// the slowest rank separately ([`report::medians`]).
pub fn medians(rows: &[Row]) -> BTreeMap<Key, Figures> {
    let rec = |r: &Row, what: &str, value: f64| Record {
        imp: format!("{}|{}|{}|{what}", r.dim, r.rate, r.imp),
        np: 1 << r.dim,
        bench: r.bench.clone(),
        size: r.size,
        rep: r.rep,
        value,
        unit: r.unit.clone(),
    };
    let recs: Vec<Record> = rows
        .iter()
        .flat_map(|r| [rec(r, "avg", r.avg), rec(r, "max", r.max)])
        .collect();
    let mut out: BTreeMap<Key, Figures> = BTreeMap::new();
    for ((imp, _, bench, size), v) in report::medians(&recs) {
        let f: Vec<&str> = imp.split('|').collect();
        let (Some(d), Some(rate), Some(i), Some(what)) = (f.first(), f.get(1), f.get(2), f.get(3))
        else {
            continue;
        };
        let Ok(d) = d.parse() else { continue };
        let e = out
            .entry((d, rate.to_string(), i.to_string(), bench, size))
            .or_insert(Figures {
                avg: f64::NAN,
                max: f64::NAN,
            });
        if *what == "avg" {
            e.avg = v;
        } else {
            e.max = v;
        }
    }
    out
}

/// A time in µs for a table: `0.07 µs`, `85.3 µs`, `4567 µs`, `12.3 ms`, `705 ms`,
/// `1.32 s`.
pub fn time_text(us: f64) -> String {
    if !us.is_finite() {
        "—".into()
    } else if us < 1.0 {
        format!("{us:.2} µs")
    } else if us < 100.0 {
        format!("{us:.1} µs")
    } else if us < 10_000.0 {
        format!("{us:.0} µs")
    } else if us < 100_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else if us < 1_000_000.0 {
        format!("{:.0} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

fn x(r: Option<f64>) -> String {
    match r.filter(|v| v.is_finite()) {
        None => "—".into(),
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 10.0 => format!("{r:.1}×"),
        Some(r) => format!("{r:.2}×"),
    }
}

fn div(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}

/// The (d, rate) cases of the results, in the order measured.
fn cases(rows: &[Row]) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = Vec::new();
    for r in rows {
        if !v.iter().any(|c| c.0 == r.dim && c.1 == r.rate) {
            v.push((r.dim, r.rate.clone()));
        }
    }
    v
}

struct View {
    m: BTreeMap<Key, Figures>,
    /// Bound (µs) per (d, rate, bench, size), from the rows.
    bound: BTreeMap<(u32, String, String, u64), f64>,
}

impl View {
    fn of(rows: &[Row]) -> View {
        let mut bound = BTreeMap::new();
        for r in rows {
            if let Some(b) = r.bound_us {
                bound.insert((r.dim, r.rate.clone(), r.bench.clone(), r.size), b);
            }
        }
        View {
            m: medians(rows),
            bound,
        }
    }
    fn get(&self, d: u32, rate: &str, imp: &str, bench: &str, size: u64) -> Option<Figures> {
        self.m
            .get(&(
                d,
                rate.to_string(),
                imp.to_string(),
                bench.to_string(),
                size,
            ))
            .copied()
    }
    fn bound(&self, d: u32, rate: &str, bench: &str, size: u64) -> Option<f64> {
        self.bound
            .get(&(d, rate.to_string(), bench.to_string(), size))
            .copied()
    }
    fn sizes(&self, d: u32, rate: &str, bench: &str) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .m
            .keys()
            .filter(|k| k.0 == d && k.1 == rate && k.3 == bench)
            .map(|k| k.4)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// One compared case of the tables: ours and Open MPI's figures and the bound.
struct Cmp {
    ours: Option<Figures>,
    mpi: Option<Figures>,
    bound: Option<f64>,
}

impl Cmp {
    /// The eight figures of a table row, `|`-separated: ours and Open MPI's avg and
    /// slowest, their ratios, and each one's ratio to the link bound.
    fn cells(&self) -> String {
        [
            t(self.ours, false),
            t(self.ours, true),
            t(self.mpi, false),
            t(self.mpi, true),
            x(self.ratio_avg()),
            x(self.ratio_max()),
            x(self.ours_bound()),
            x(self.mpi_bound()),
        ]
        .join(" | ")
    }

    fn of(v: &View, d: u32, rate: &str, bench: &str, size: u64) -> Cmp {
        Cmp {
            ours: v.get(d, rate, OURS, bench, size),
            mpi: v.get(d, rate, OMPI, bench, size),
            bound: v.bound(d, rate, bench, size),
        }
    }
    fn ratio_avg(&self) -> Option<f64> {
        div(self.ours.map(|f| f.avg), self.mpi.map(|f| f.avg))
    }
    fn ratio_max(&self) -> Option<f64> {
        div(self.ours.map(|f| f.max), self.mpi.map(|f| f.max))
    }
    fn ours_bound(&self) -> Option<f64> {
        div(self.ours.map(|f| f.max), self.bound)
    }
    fn mpi_bound(&self) -> Option<f64> {
        div(self.mpi.map(|f| f.max), self.bound)
    }
}

fn t(f: Option<Figures>, max: bool) -> String {
    f.map_or("—".into(), |f| time_text(if max { f.max } else { f.avg }))
}

/// Keep the body of a section of an existing page: from the line after `heading` to the
/// next `## ` heading (or the end).
fn section_body(page: &str, heading: &str) -> Option<String> {
    let start = page.find(&format!("\n{heading}\n"))? + heading.len() + 2;
    let rest = &page[start..];
    let end = rest.find("\n## ").map_or(rest.len(), |e| e + 1);
    Some(rest[..end].trim_end().to_string())
}

/// The page `cubenet.md`. `old` is the page it replaces, if any: its hand-written reading
/// is kept, and with `keep_model` its model section too (a new measurement writes the
/// placeholder instead: the fit must be made again from the new results).
pub fn page(rows: &[Row], info: &RunInfo, old: Option<&str>, keep_model: bool) -> String {
    let v = View::of(rows);
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "# Ours vs. Open MPI on the emulated hypercube network\n");
    let _ = writeln!(
        w,
        "Generated by `scripts/cubenet-compare.sh` (= `hypercube-bench cubenet`); do not edit \
         by hand, except the reading between its markers, which a rewrite keeps — rerun it, \
         or `hypercube-bench cubenet --report` to re-render from `cubenet/results.csv`. \
         Both runtimes run the same OSU-style benchmarks (`osu`, `crates/bench/c/osu_mpi.c`) \
         on the same emulated network: a network namespace per node, a veth pair per cube \
         edge, each end shaped by `tc tbf` to the link rate (launcher/src/cubenet). Ours: \
         `hcrun --dim D --link-rate RATE -- osu BENCH --per-rank` (a private network per job; \
         our ranks forward multi-hop messages themselves, cut-through). Open MPI: \
         `cubenet up --kernel-routes` (every node has e-cube routes to every other node and \
         the kernel forwards over the same shaped links), then `mpirun.openmpi` from the \
         host, one rank per namespace (`--hostfile` of the cube addresses, `slots=1`), \
         `--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include cube --mca \
         oob_tcp_if_include {MGMT_NET} --mca rtc ^hwloc --bind-to none --mca \
         mpi_yield_when_idle 1`, started through `cubenet rsh` with a TMPDIR per node \
         (agent script in `target/cubenet-bench/`). Point-to-point runs (latency, the stream \
         rate) use ranks 0 and 1, neighbours: ours in the whole cube (the others wait), Open \
         MPI with `-np 2` (its idle ranks would poll).\n"
    );
    let _ = writeln!(
        w,
        "Figures: **avg** is OSU's (each rank's mean time of one call, a barrier between \
         calls not timed, averaged over the ranks); **slowest** is the largest per-rank mean \
         (`--per-rank`): the average hides a root that finishes last. Every figure is the \
         median over repetitions. The **link bound** is the all-port bound of \
         `crates/bench/src/linkbound.rs` (the busiest link's bytes: cut or volume) at the \
         **measured** one-hop stream rate; ratios to it use the slowest rank. The machine \
         has 2 cores for 8 or 16 ranks, so at 1 Gbit/s the cores, not the links, are often \
         the limit; and each link's token bucket lets a burst (below) through at once \
         after idle time, so times at sizes near the burst can dip under the bound.\n"
    );

    let _ = writeln!(w, "## The run\n");
    for (k, val) in &info.lines {
        let _ = writeln!(w, "- {k}: {val}");
    }
    if !info.notes.is_empty() {
        let _ = writeln!(w, "\nNotes:\n");
        for n in &info.notes {
            let _ = writeln!(w, "- {n}");
        }
    }
    let _ = writeln!(w);

    // Headline: d = 4 at 100 Mbit/s, if measured (else the largest d at its first rate).
    let cs = cases(rows);
    let head = cs
        .iter()
        .find(|c| c.0 == 4 && c.1 == "100mbit")
        .or_else(|| cs.iter().max_by_key(|c| c.0))
        .cloned();
    if let Some((d, rate)) = head {
        let _ = writeln!(w, "## Headline: d = {d}, {rate}\n");
        let _ = writeln!(
            w,
            "| case | ours avg | ours slowest | Open MPI avg | Open MPI slowest | \
             ours/MPI avg | ours/MPI slowest | ours/bound | MPI/bound |"
        );
        let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|");
        let largest = |b: &str| v.sizes(d, &rate, b).last().copied();
        let mut picks: Vec<(String, u64)> = Vec::new();
        for b in ["alltoall", "allgather", "bcast", "allreduce"] {
            if let Some(sz) = largest(b) {
                picks.push((b.to_string(), sz));
            }
        }
        if v.sizes(d, &rate, "latency").contains(&8) {
            picks.push(("latency".into(), 8));
        }
        if v.sizes(d, &rate, "barrier").contains(&0) {
            picks.push(("barrier".into(), 0));
        }
        for (b, sz) in picks {
            let c = Cmp::of(&v, d, &rate, &b, sz);
            let _ = writeln!(
                w,
                "| {b} {} | {} |",
                if b == "barrier" {
                    String::new()
                } else {
                    size_text(sz)
                },
                c.cells(),
            );
        }
        let _ = writeln!(w);
    }

    // Summary, computed.
    let _ = writeln!(w, "## Summary\n");
    let _ = writeln!(
        w,
        "Per network: in how many cases ours is at most Open MPI's time (avg / slowest rank), \
         the geometric mean of ours/Open MPI (slowest), and the extremes.\n"
    );
    let _ = writeln!(
        w,
        "| d | rate | cases | ours ≤ MPI (avg) | ours ≤ MPI (slowest) | geo. mean ours/MPI \
         (slowest) | ours slowest vs. MPI | ours fastest vs. MPI |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|---|---|");
    for (d, rate) in &cs {
        let mut rs: Vec<(String, f64, f64)> = Vec::new();
        for b in BENCHES {
            for sz in v.sizes(*d, rate, b.name()) {
                let c = Cmp::of(&v, *d, rate, b.name(), sz);
                if let (Some(ra), Some(rm)) = (c.ratio_avg(), c.ratio_max()) {
                    let name = if b == Bench::Barrier {
                        "barrier".to_string()
                    } else {
                        format!("{} {}", b.name(), size_text(sz))
                    };
                    rs.push((name, ra, rm));
                }
            }
        }
        if rs.is_empty() {
            continue;
        }
        let n = rs.len();
        let le_avg = rs.iter().filter(|r| r.1 <= 1.0).count();
        let le_max = rs.iter().filter(|r| r.2 <= 1.0).count();
        let geo = (rs.iter().map(|r| r.2.ln()).sum::<f64>() / n as f64).exp();
        rs.sort_by(|a, b| b.2.total_cmp(&a.2));
        let show = |it: &mut dyn Iterator<Item = &(String, f64, f64)>| {
            it.take(3)
                .map(|r| format!("{} {:.2}×", r.0, r.2))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let worst = show(&mut rs.iter());
        let best = show(&mut rs.iter().rev());
        let _ = writeln!(
            w,
            "| {d} | {rate} | {n} | {le_avg} | {le_max} | {geo:.2}× | {worst} | {best} |"
        );
    }
    let _ = writeln!(w);

    // The hand-written reading, kept.
    let _ = writeln!(w, "{READING_HEADING}\n");
    let kept = old.and_then(|o| {
        let a = o.find(READING_BEGIN)?;
        let b = o[a..].find(READING_END)? + a;
        Some(o[a..b + READING_END.len()].to_string())
    });
    let _ = writeln!(
        w,
        "{}\n",
        kept.unwrap_or_else(|| format!(
            "{READING_BEGIN}\n\n(Not written yet: read the tables and write it here.)\n\n{READING_END}"
        ))
    );

    // Link rates.
    let _ = writeln!(w, "## Link rates measured\n");
    let _ = writeln!(
        w,
        "One-hop stream rate between the neighbours 0 and 1 (`osu bw`, {} messages, 64 in \
         flight, then an ack; MB/s = 10⁶ B/s). The bound uses the larger of the two: TCP's \
         payload rate of a link (the rest of the nominal rate is Ethernet, IP and TCP \
         headers).\n",
        size_text(STREAM_SIZE)
    );
    let _ = writeln!(
        w,
        "| d | rate | nominal | hypercube | Open MPI | used for the bound |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|---|");
    for (d, rate) in &cs {
        let bw = |imp: &str| {
            v.get(*d, rate, imp, "bw", STREAM_SIZE)
                .map_or("—".into(), |f| format!("{:.2} MB/s", f.avg))
        };
        let used = rows
            .iter()
            .find(|r| r.dim == *d && &r.rate == rate)
            .map_or("—".into(), |r| format!("{:.2} MB/s", r.link_bps / 1e6));
        let nominal =
            nominal_bytes_per_sec(rate).map_or("—".into(), |b| format!("{:.2} MB/s", b / 1e6));
        let _ = writeln!(
            w,
            "| {d} | {rate} | {nominal} | {} | {} | {used} |",
            bw(OURS),
            bw(OMPI)
        );
    }
    let _ = writeln!(w);

    // One table per (d, rate).
    for (d, rate) in &cs {
        let _ = writeln!(w, "## d = {d} ({} ranks), {rate}\n", 1u32 << d);
        let _ = writeln!(
            w,
            "| operation | size | link bound | ours avg | ours slowest | Open MPI avg | \
             Open MPI slowest | ours/MPI avg | ours/MPI slowest | ours/bound | MPI/bound |"
        );
        let _ = writeln!(w, "|---|---|---|---|---|---|---|---|---|---|---|");
        for b in BENCHES {
            for sz in v.sizes(*d, rate, b.name()) {
                let c = Cmp::of(&v, *d, rate, b.name(), sz);
                let _ = writeln!(
                    w,
                    "| {} | {} | {} | {} |",
                    b.name(),
                    if b == Bench::Barrier {
                        "—".into()
                    } else {
                        size_text(sz)
                    },
                    c.bound.map_or("—".into(), time_text),
                    c.cells(),
                );
            }
        }
        let _ = writeln!(w);
    }

    // Plots.
    let _ = writeln!(w, "## Plots\n");
    let _ = writeln!(
        w,
        "Time of one call against the message size, one panel per network; solid: avg, \
         dashed: the slowest rank; grey: the link bound.\n"
    );
    for b in BENCHES {
        if rows.iter().any(|r| r.bench == b.name()) {
            let _ = writeln!(w, "![{0}](cubenet/{0}.svg)", b.name());
        }
    }
    let _ = writeln!(w);

    // The model section, last.
    let _ = writeln!(w, "{MODEL_HEADING}\n");
    let model = old
        .filter(|_| keep_model)
        .and_then(|o| section_body(o, MODEL_HEADING))
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| MODEL_PLACEHOLDER.to_string());
    let _ = writeln!(w, "{}", model.trim());
    s
}

/// The figure of one benchmark: a panel per (d, rate), ours and Open MPI's avg (solid) and
/// slowest rank (dashed), and the link bound; barrier: time against the ranks, a panel per
/// rate.
pub fn figure(rows: &[Row], bench: Bench) -> Option<Figure> {
    let v = View::of(rows);
    let cs = cases(rows);
    if !rows.iter().any(|r| r.bench == bench.name()) {
        return None;
    }
    let styles = [
        (OURS, false, 0xd62728u32, "hypercube avg"),
        (OURS, true, 0xd62728, "hypercube slowest"),
        (OMPI, false, 0x1f77b4, "Open MPI avg"),
        (OMPI, true, 0x1f77b4, "Open MPI slowest"),
    ];
    let mk = |label: &str, color: u32, dashed: bool, points: Vec<(f64, f64)>| {
        (!points.is_empty()).then(|| Series {
            label: label.to_string(),
            color,
            dashed,
            points,
        })
    };
    if bench == Bench::Barrier {
        let mut rates: Vec<String> = Vec::new();
        for c in &cs {
            if !rates.contains(&c.1) {
                rates.push(c.1.clone());
            }
        }
        let panels = rates
            .iter()
            .map(|rate| Panel {
                title: rate.clone(),
                series: styles
                    .iter()
                    .filter_map(|&(imp, max, color, label)| {
                        let pts = cs
                            .iter()
                            .filter(|c| &c.1 == rate)
                            .filter_map(|c| {
                                let f = v.get(c.0, rate, imp, "barrier", 0)?;
                                Some((f64::from(1u32 << c.0), if max { f.max } else { f.avg }))
                            })
                            .collect();
                        mk(label, color, max, pts)
                    })
                    .collect(),
            })
            .collect::<Vec<_>>();
        return Some(Figure {
            title: "barrier on the emulated network: time against the ranks".into(),
            x: Axis::log2("ranks", hypercube_plot::number),
            y: Axis::log10("µs"),
            columns: panels.len().clamp(1, 2),
            panels,
            panel_size: (440, 300),
            legend: Legend::Top,
        });
    }
    let panels: Vec<Panel> = cs
        .iter()
        .map(|(d, rate)| {
            let sizes = v.sizes(*d, rate, bench.name());
            let mut series: Vec<Series> = styles
                .iter()
                .filter_map(|&(imp, max, color, label)| {
                    let pts = sizes
                        .iter()
                        .filter(|&&s| s > 0)
                        .filter_map(|&s| {
                            let f = v.get(*d, rate, imp, bench.name(), s)?;
                            Some((s as f64, if max { f.max } else { f.avg }))
                        })
                        .collect();
                    mk(label, color, max, pts)
                })
                .collect();
            let bound: Vec<(f64, f64)> = sizes
                .iter()
                .filter_map(|&s| Some((s as f64, v.bound(*d, rate, bench.name(), s)?)))
                .filter(|p| p.0 > 0.0)
                .collect();
            if let Some(s) = mk("link bound", 0x777777, true, bound) {
                series.push(s);
            }
            Panel {
                title: format!("d = {d} ({} ranks), {rate}", 1u32 << d),
                series,
            }
        })
        .collect();
    Some(Figure {
        title: format!(
            "{} — {} on the emulated network",
            bench.name(),
            bench.what()
        ),
        x: Axis::log2("message size (bytes)", size_tick),
        y: Axis::log10("µs"),
        columns: if panels.len() > 1 { 2 } else { 1 },
        panels,
        panel_size: (440, 300),
        legend: Legend::Top,
    })
}

/// Write `OUT/cubenet.md` and the plots `OUT/cubenet/<bench>.svg`. `keep_model`: keep the
/// model section of the existing page (a re-render), else write its placeholder.
pub fn write_report(out: &Path, rows: &[Row], info: &RunInfo, keep_model: bool) -> Result<()> {
    let dir = out.join("cubenet");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for b in BENCHES {
        if let Some(f) = figure(rows, b) {
            let p = dir.join(format!("{}.svg", b.name()));
            std::fs::write(&p, f.to_svg()).with_context(|| format!("writing {}", p.display()))?;
        }
    }
    let path = out.join("cubenet.md");
    let old = std::fs::read_to_string(&path).ok();
    std::fs::write(&path, page(rows, info, old.as_deref(), keep_model))
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_rank_lines_attach_to_their_row() {
        let ours = "# OSU-style hypercube alltoall Latency Test (np=8)\n\
                    # Size         Avg Latency(us)\n\
                    65536                 66780.35\n\
                    # per rank: 68195.00 65540.00 71664.49 64148.00\n\
                    # per rank, barrier exit after rank 0's: +0.00 +127.69 +0.31 +98.94\n\
                    131072                1000.00\n";
        let m = parse_output(ours);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].size, 65536);
        assert_eq!(m[0].per_rank, vec![68195.0, 65540.0, 71664.49, 64148.0]);
        assert_eq!(m[0].slowest(), 71664.49);
        assert!(m[1].per_rank.is_empty());
        assert_eq!(m[1].slowest(), 1000.0, "no per-rank times: the figure");
        let mpi = "# OSU-style MPI barrier Latency Test (np=16)\n# Size         Avg \
                   Latency(us)\n0                       455.99\n# per rank: 400.00 \
                   512.50\n";
        let m = parse_output(mpi);
        assert_eq!((m[0].size, m[0].value, m[0].slowest()), (0, 455.99, 512.5));
    }

    #[test]
    fn csv_round_trip_and_medians_of_avg_and_slowest() {
        let row = |rep, avg, max| Row {
            dim: 4,
            rate: "100mbit".into(),
            imp: OURS.into(),
            bench: "alltoall".into(),
            size: 1048576,
            rep,
            avg,
            max,
            unit: "us".into(),
            iters: 3,
            link_bps: 11.95e6,
            bound_us: Some(701_000.5),
            per_rank: vec![1.5, 2.25],
        };
        let r = row(1, 10.0, 30.0);
        assert_eq!(Row::from_csv(&r.to_csv()).unwrap(), r);
        let mut none = r.clone();
        none.bound_us = None;
        none.per_rank.clear();
        assert_eq!(Row::from_csv(&none.to_csv()).unwrap(), none);
        let m = medians(&[row(1, 10.0, 30.0), row(2, 12.0, 10.0), row(3, 11.0, 20.0)]);
        let f = m[&(4, "100mbit".into(), OURS.into(), "alltoall".into(), 1048576)];
        assert_eq!((f.avg, f.max), (11.0, 20.0));
    }

    #[test]
    fn rates_iterations_and_hosts() {
        assert_eq!(nominal_bytes_per_sec("100mbit").unwrap(), 12.5e6);
        assert_eq!(nominal_bytes_per_sec("1gbit").unwrap(), 125e6);
        assert_eq!(nominal_bytes_per_sec("2.8MBps").unwrap(), 2.8e6);
        assert!(nominal_bytes_per_sec("fast").is_err());
        // A 1 MiB all-to-all on 16 ranks at 100 Mbit/s: ~1.3 s a call, the minimum.
        let est = estimate_secs(Bench::Alltoall, 4, 1 << 20, 12.5e6);
        assert!((1.3..1.4).contains(&est), "{est}");
        assert_eq!(iterations(est, 1.5, 3, 1000, 1 << 20), (3, 1));
        // 8 B: capped, with OSU-like warm-up.
        assert_eq!(iterations(1e-4, 1.5, 3, 1000, 8), (1000, 100));
        assert_eq!(iterations(0.1, 1.5, 3, 1000, 8), (15, 5));
        assert_eq!(iterations(1e-3, 1.5, 3, 1000, 65536), (1000, 10));
        let lat = estimate_secs(Bench::Latency, 4, 8, 12.5e6);
        let max = max_iters_of(Bench::Latency, 1000);
        assert_eq!(iterations(lat, 1.5, 3, max, 8), (10000, 100));
        assert_eq!(osu_iters_arg(3, 1 << 20), 30);
        assert_eq!(osu_iters_arg(3, 8192), 3);
        let hosts = "# rank namespace cube-address management-address\n\
                     1 hcbench-1 10.201.0.2 10.202.0.3\n0 hcbench-0 10.201.0.1 10.202.0.2\n";
        assert_eq!(parse_hosts(hosts), vec!["10.201.0.1", "10.201.0.2"]);
    }

    #[test]
    fn the_page_keeps_the_reading_and_the_model_only_when_asked() {
        let rows = vec![Row {
            dim: 3,
            rate: "100mbit".into(),
            imp: OURS.into(),
            bench: "barrier".into(),
            size: 0,
            rep: 1,
            avg: 100.0,
            max: 150.0,
            unit: "us".into(),
            iters: 10,
            link_bps: 11.95e6,
            bound_us: None,
            per_rank: vec![],
        }];
        let info = RunInfo::default();
        let first = page(&rows, &info, None, true);
        assert!(first.contains(MODEL_PLACEHOLDER));
        assert!(first.trim_end().ends_with(MODEL_PLACEHOLDER));
        let edited = first
            .replace(
                "(Not written yet: read the tables and write it here.)",
                "We lose.",
            )
            .replace(MODEL_PLACEHOLDER, "t_s = 1 ms");
        let again = page(&rows, &info, Some(&edited), true);
        assert!(again.contains("We lose.") && again.contains("t_s = 1 ms"));
        let fresh = page(&rows, &info, Some(&edited), false);
        assert!(fresh.contains("We lose.") && fresh.contains(MODEL_PLACEHOLDER));
        assert!(!fresh.contains("t_s = 1 ms"));
    }
}
