//! What `hypercube-bench cubenet-model` is asked: its command line.

use crate::osu;
use std::path::PathBuf;

/// `hypercube-bench cubenet-model`: fit Grama's parameters on the emulated cube and put the
/// chapter 4 operations beside the model (writes docs/perf/cubenet-model.md).
#[derive(clap::Args, Debug, Clone)]
pub struct ModelArgs {
    /// Link rate of the per-operation runs (and the first fit), as hcrun takes it
    #[arg(long, default_value = "100mbit")]
    pub rate: String,
    /// More rates to fit the parameters at (ping-pongs only), e.g. 1gbit
    #[arg(long, value_delimiter = ',')]
    pub extra_fit_rates: Vec<String>,
    /// Cube dimensions of the fits and the per-operation runs
    #[arg(long, value_delimiter = ',', default_value = "3,4")]
    pub dims: Vec<u32>,
    /// Collective sizes (bytes)
    #[arg(long, value_delimiter = ',', default_value = "1024,65536,1048576")]
    pub sizes: Vec<u64>,
    /// Ping-pong size range MIN:MAX (doubling)
    #[arg(long, default_value = "8:1048576", value_parser = osu::parse_range)]
    pub pingpong_range: (u64, u64),
    /// Ping-pong -i from 256 B (a tenth above 8 KiB; ten times as many up to 128 B)
    #[arg(long, default_value_t = 100)]
    pub pingpong_iters: u64,
    /// Only fit (no per-operation runs)
    #[arg(long)]
    pub fit_only: bool,
    /// Raw measurements: written here after measuring
    #[arg(long, default_value_os_t = crate_root().join("../../target/cubenet-model-raw.csv"))]
    pub raw: PathBuf,
    /// Do not measure: re-render the report from --raw
    #[arg(long)]
    pub replay: bool,
    /// Keep the measurements already in --raw and take only the missing ones (an
    /// interrupted run, or new cases)
    #[arg(long)]
    pub resume: bool,
    /// The report
    #[arg(long, default_value_os_t = crate_root().join("../../docs/perf/cubenet-model.md"))]
    pub out: PathBuf,
    /// Deadline of one run in seconds (the wait for the lock not included)
    #[arg(long, default_value_t = 300)]
    pub timeout_s: u64,
}

pub(super) fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
