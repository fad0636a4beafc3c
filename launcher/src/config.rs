//! Job settings: command-line flags over an optional TOML file (`--config configs/x.toml`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Parser;
use serde::Deserialize;

/// hcrun — start an SPMD job: 2^d copies of a node program, wired into a d-dimensional
/// hypercube over loopback TCP, or over an emulated network of slow links (--link-rate).
///
/// Examples:
///   hcrun --dim 3 --example hello
///   hcrun --dim 2 -- target/release/examples/pingpong --rounds 100
///   hcrun --config configs/local-d3.toml
///   hcrun --dim 3 --link-rate 100mbit --example pingpong    (links of 100 Mbit/s each way)
#[derive(Debug, Parser)]
#[command(name = "hcrun", version, verbatim_doc_comment)]
pub struct Cli {
    /// Cube dimension d: the job has 2^d ranks (0..=16). Default 2.
    #[arg(short, long, value_parser = parse_dim, allow_negative_numbers = true)]
    pub dim: Option<u32>,

    /// Build and run this example of the workspace (e.g. hello, pingpong, ring, antipodal).
    #[arg(short, long)]
    pub example: Option<String>,

    /// Read settings from this TOML file; flags given on the command line win.
    #[arg(short, long)]
    pub config: Option<PathBuf>,

    /// Do not prefix each output line with `[rank] `.
    #[arg(long)]
    pub no_prefix: bool,

    /// Colour in log lines (hcrun's and the ranks'): auto = only when hcrun's stderr is a
    /// terminal (and NO_COLOR is not set). The ranks get the choice in HYPERCUBE_COLOR.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// When a rank fails, also show how each rank that failed in reaction to it (a peer
    /// gone, the job being stopped) ended, with its last error line.
    #[arg(short, long)]
    pub verbose: bool,

    /// Give up if the cube is not wired up within this many milliseconds. Default 30000.
    #[arg(long)]
    pub boot_timeout_ms: Option<u64>,

    /// Stop the job if it runs longer than this many seconds (0 = no limit). Default 0.
    #[arg(long)]
    pub timeout_s: Option<u64>,

    /// Also start this host program (the iPSC host): it joins the job as node `HOST`
    /// (-32768), linked to node 0, and can exchange messages with every node.
    #[arg(long, value_name = "PROGRAM", conflicts_with = "host_example")]
    pub host: Option<String>,

    /// An argument for the host program (repeat for several).
    #[arg(long = "host-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub host_args: Vec<String>,

    /// Build and start this workspace example as the host program.
    #[arg(long, value_name = "NAME")]
    pub host_example: Option<String>,

    /// Build examples in release mode (the default when hcrun itself is a release build).
    #[arg(long, conflicts_with = "debug")]
    pub release: bool,

    /// Build examples in debug mode.
    #[arg(long)]
    pub debug: bool,

    /// Record a message trace of the job and write it, merged, to this Chrome / Perfetto
    /// trace-event JSON file (docs/tracing.md): every rank gets `HYPERCUBE_TRACE` set to a
    /// temporary prefix; the per-rank files are merged when the job ends, also when it fails.
    #[arg(long, value_name = "FILE.json")]
    pub trace: Option<PathBuf>,

    /// Run the job on an emulated hypercube network whose every link carries RATE each way:
    /// a network namespace per node, a veth pair per cube edge shaped by a token bucket, the
    /// ranks' links bound to the edges (docs/cubenet.md). RATE as tc reads it: 100mbit,
    /// 1gbit, 2.8MBps, 500kbit. Needs --dim (at most 8), and root or unprivileged user
    /// namespaces. Everything is removed when the job ends, however it ends.
    #[arg(long, value_name = "RATE", value_parser = launcher::cubenet::parse_rate)]
    pub link_rate: Option<launcher::cubenet::Rate>,

    /// With --link-rate: the token bucket's depth, as tc reads sizes (96kb, 1mb). Default:
    /// one millisecond of traffic at the rate, at least 96kb.
    #[arg(long, value_name = "SIZE", value_parser = launcher::cubenet::parse_burst)]
    pub link_burst: Option<u64>,

    /// Where the ranks run: `none` lets the kernel place them and move them (the default);
    /// `core` binds rank r to the (r mod n)-th of the n cores hcrun may use, as
    /// `mpirun --bind-to core` does, so that neighbours 0 and 1 never share a core
    /// (docs/architecture.md, "Binding ranks to cores").
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = BindTo::None)]
    pub bind_to: BindTo,

    /// The node program and its arguments (after `--`, or as the first argument that does
    /// not start with `-`: everything after it is the program's); with --example, the
    /// example's arguments. An unknown option before it is an error, never a program.
    #[arg(trailing_var_arg = true, value_name = "PROGRAM [ARGS]")]
    pub program: Vec<String>,
}

/// `--bind-to`: whether each rank is bound to one core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BindTo {
    /// The kernel places the ranks and may move them between cores.
    None,
    /// Rank r runs only on the (r mod n)-th of the n cores hcrun may use (the host
    /// program is not bound).
    Core,
}

/// `--color`: when log lines may carry ANSI colour codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Only when hcrun's stderr is a terminal and `NO_COLOR` is not set.
    Auto,
    /// Always (e.g. when the output goes to a pager that understands colour).
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Whether to colour: `auto` asks whether stderr is a terminal.
    pub fn resolve(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::io::stderr().is_terminal()
                    && !std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
            }
        }
    }
}

/// `--dim`: an integer in `0..=MAX_DIM` (a negative or huge one gets the same message).
fn parse_dim(s: &str) -> std::result::Result<u32, String> {
    match s.trim().parse::<i64>() {
        Ok(d) if (0..=i64::from(MAX_DIM)).contains(&d) => Ok(d as u32),
        _ => Err(dim_range()),
    }
}

/// What a dimension may be.
fn dim_range() -> String {
    format!(
        "--dim must be in 0..={MAX_DIM} (the job has 2^d ranks, at most {})",
        1u32 << MAX_DIM
    )
}

/// The same settings in a file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Cube dimension (checked against `0..=MAX_DIM` when the job is resolved).
    pub dim: Option<i64>,
    /// Example to build and run.
    pub example: Option<String>,
    /// Program path (relative to the current directory).
    pub program: Option<String>,
    /// Program arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Prefix output lines with the rank.
    pub prefix: Option<bool>,
    /// Bootstrap timeout in milliseconds.
    pub boot_timeout_ms: Option<u64>,
    /// Whole-job timeout in seconds (0 = none).
    pub timeout_s: Option<u64>,
    /// Build examples in release mode.
    pub release: Option<bool>,
    /// Host program (path) and its arguments.
    pub host: Option<String>,
    /// Host program arguments.
    #[serde(default)]
    pub host_args: Vec<String>,
    /// Example to build and start as the host.
    pub host_example: Option<String>,
    /// Extra environment for every rank (e.g. RUST_LOG, HYPERCUBE_SPIN_US).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// `--link-rate`: run on an emulated network with links of this rate ("100mbit").
    pub link_rate: Option<String>,
    /// `--link-burst`: the links' token-bucket depth ("96kb").
    pub link_burst: Option<String>,
}

/// What to run.
#[derive(Debug, Clone)]
pub enum Target {
    /// A workspace example (built first) and its arguments.
    Example(String, Vec<String>),
    /// A program path with arguments.
    Program(Vec<String>),
}

/// The resolved job.
#[derive(Debug, Clone)]
pub struct Job {
    /// Cube dimension (0..=MAX_DIM).
    pub dim: u32,
    /// The node program.
    pub target: Target,
    /// The host program, if any.
    pub host: Option<Target>,
    /// Prefix output lines with the rank.
    pub prefix: bool,
    /// How long the cube may take to be wired.
    pub boot_timeout: Duration,
    /// How long the whole job may run (`None`: no limit).
    pub timeout: Option<Duration>,
    /// Build examples in release mode.
    pub release: bool,
    /// Extra environment for every rank.
    pub env: Vec<(String, String)>,
    /// Show the ranks that failed in reaction, too.
    pub verbose: bool,
    /// Colour in log lines (resolved from `--color`).
    pub color: bool,
    /// `--trace`: where the merged trace goes.
    pub trace: Option<PathBuf>,
    /// `--link-rate`: the emulated network to run on, if any.
    pub net: Option<Net>,
    /// `--bind-to`: whether each rank is bound to one core.
    pub bind: BindTo,
}

/// The emulated network of `--link-rate`.
#[derive(Debug, Clone)]
pub struct Net {
    /// Every link's rate, each direction.
    pub rate: launcher::cubenet::Rate,
    /// The token bucket's depth in bytes.
    pub burst: u64,
}

/// The largest cube dimension hcrun starts (2^16 = 65536 ranks).
pub const MAX_DIM: u32 = 16;

impl Job {
    /// Merge the command line over the config file (if any); `color` is the resolved
    /// `--color`.
    pub fn resolve(cli: Cli, color: bool) -> Result<Job> {
        let file = match &cli.config {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("reading the config file {}", p.display()))?;
                toml::from_str::<FileConfig>(&text)
                    .with_context(|| format!("parsing the config file {}", p.display()))?
            }
            None => FileConfig::default(),
        };
        let dim = match (cli.dim, file.dim) {
            (Some(d), _) => d,
            (None, Some(d)) => u32::try_from(d)
                .ok()
                .filter(|d| *d <= MAX_DIM)
                .with_context(|| {
                    format!(
                        "dim = {d} in the config file: {}",
                        dim_range().trim_start_matches("--")
                    )
                })?,
            (None, None) => 2,
        };
        let rate = match (cli.link_rate, &file.link_rate) {
            (Some(r), _) => Some(r),
            (None, Some(t)) => Some(
                launcher::cubenet::parse_rate(t)
                    .map_err(|e| anyhow::anyhow!("link_rate in the config file: {e}"))?,
            ),
            (None, None) => None,
        };
        let burst = match (cli.link_burst, &file.link_burst) {
            (Some(b), _) => Some(b),
            (None, Some(t)) => Some(
                launcher::cubenet::parse_burst(t)
                    .map_err(|e| anyhow::anyhow!("link_burst in the config file: {e}"))?,
            ),
            (None, None) => None,
        };
        let net = match (rate, burst) {
            (Some(rate), burst) => {
                if cli.dim.is_none() && file.dim.is_none() {
                    bail!(
                        "--link-rate needs --dim (or dim in the config file): the emulated \
                         network is a d-cube of links, e.g. --dim 3 --link-rate 100mbit"
                    );
                }
                let max = launcher::cubenet::MAX_EMULATED_DIM;
                if dim > max {
                    bail!("--link-rate emulates cubes up to --dim {max}; --dim {dim} is too large");
                }
                Some(Net {
                    burst: burst.unwrap_or_else(|| rate.default_burst()),
                    rate,
                })
            }
            (None, Some(_)) => bail!(
                "--link-burst (link_burst) shapes the links of --link-rate (link_rate), which \
                 is not given"
            ),
            (None, None) => None,
        };
        let target = if let Some(e) = cli.example {
            Target::Example(e, cli.program)
        } else if !cli.program.is_empty() {
            Target::Program(cli.program)
        } else if let Some(e) = file.example {
            Target::Example(e, file.args)
        } else if let Some(p) = file.program {
            let mut v = vec![p];
            v.extend(file.args);
            Target::Program(v)
        } else {
            bail!("nothing to run: give --example NAME or a program after `--` (see --help)");
        };
        let host = if let Some(e) = cli.host_example.or(file.host_example) {
            Some(Target::Example(e, cli.host_args))
        } else if let Some(p) = cli.host.or(file.host) {
            let mut v = vec![p];
            if cli.host_args.is_empty() {
                v.extend(file.host_args);
            } else {
                v.extend(cli.host_args);
            }
            Some(Target::Program(v))
        } else {
            None
        };
        let release = if cli.release {
            true
        } else if cli.debug {
            false
        } else {
            file.release.unwrap_or(!cfg!(debug_assertions))
        };
        let timeout_s = cli.timeout_s.or(file.timeout_s).unwrap_or(0);
        Ok(Job {
            dim,
            target,
            host,
            prefix: !cli.no_prefix && file.prefix.unwrap_or(true),
            boot_timeout: Duration::from_millis(
                cli.boot_timeout_ms
                    .or(file.boot_timeout_ms)
                    .unwrap_or(30_000),
            ),
            timeout: (timeout_s > 0).then(|| Duration::from_secs(timeout_s)),
            release,
            env: file.env.into_iter().collect(),
            verbose: cli.verbose,
            color,
            trace: cli.trace,
            net,
            bind: cli.bind_to,
        })
    }
}
