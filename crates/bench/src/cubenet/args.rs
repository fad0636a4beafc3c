//! What `hypercube-bench cubenet` is asked: its command line.

use std::path::PathBuf;

/// The default name of the persistent network built for Open MPI (`cubenet --name`).
pub const DEFAULT_NAME: &str = "hcbench";

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
    /// reduce_scatter alltoall scatter gather scan barrier, then the iPSC utilities gsendw
    /// gop gcat spgsnw, compared with Open MPI's bcast, reduce, gather and bcast) or a list
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
    /// Bind our ranks to cores (`hcrun --bind-to core`: rank r on core r mod n); Open MPI's
    /// ranks stay as they are (`--bind-to none`)
    #[arg(long)]
    pub bind_cores: bool,
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
    /// Output folder: writes OUT/cubenet.md and OUT/cubenet/ (results.csv, run-info.txt, SVG);
    /// a run stopped early (a signal, a failed run) writes what it measured to
    /// OUT/cubenet-stopped/ instead and leaves those as they were
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
