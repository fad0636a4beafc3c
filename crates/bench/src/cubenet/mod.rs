//! `hypercube-bench cubenet` (or `scripts/cubenet-compare.sh`): ours and Open MPI on the
//! **same emulated hypercube network** (`hcrun --link-rate`, `cubenet`: a network namespace
//! per node, a `tbf`-shaped veth pair per cube edge), beside the all-port link bound of
//! every operation ([`crate::linkbound`]).
//!
//! For every cube dimension d and link rate:
//! 1. the one-hop stream rate is measured on that network (`osu bw` between the neighbours
//!    0 and 1, ours and Open MPI's): the link bound uses the measured rate, not the nominal;
//! 2. the OSU set ([`benches`]) runs once per size, ours as
//!    `hcrun --dim D --link-rate RATE -- osu BENCH --per-rank ...` (a private network per
//!    job), Open MPI's `osu_mpi` under `mpirun.openmpi` on a persistent network of the same
//!    shape built with `cubenet up --kernel-routes` (the kernel forwards between
//!    non-neighbours over the same shaped links), one rank per namespace, started through
//!    `cubenet rsh` ([`Network`]); the network is removed afterwards, also on error;
//! 3. each run reports the OSU average (per-rank mean, averaged over ranks) and the slowest
//!    rank's mean (the average hides a root that finishes last).
//!
//! Every run holds the benchmarks' lock ([`crate::lock`]), so that no two benchmarks of the
//! checkout share the cores. A failed run is retried (bounded; Open MPI on a rebuilt
//! network) and every retry is counted in the report. Output: `results.csv`,
//! `run-info.txt` and one SVG per benchmark in `<out>/cubenet/`, and the page
//! `<out>/cubenet.md`.
//!
//! A file per job: what is asked (`args.rs`), the rows measured (`rows.rs`), the plan of
//! runs (`plan.rs`), the networks and programs (`network.rs`), one run with its retries
//! (`runner.rs`), one case of a dimension and rate (`measure.rs`), and the page: its medians
//! (`medians.rs`), its text (`page.rs`) and its figures (`figures.rs`).

mod args;
mod figures;
mod measure;
mod medians;
mod network;
mod page;
mod plan;
mod rows;
mod runner;
#[cfg(test)]
mod tests;

pub use args::{default_out, Args, DEFAULT_NAME};
pub use figures::figure;
pub(crate) use measure::commit_line;
pub use medians::{medians, time_text, Figures, Key};
pub use network::{parse_hosts, Network, CUBE_IF, MGMT_NET};
pub use page::{
    page, write_report, MODEL_HEADING, MODEL_PLACEHOLDER, READING_BEGIN, READING_END,
    READING_HEADING,
};
pub use plan::{
    benches, estimate_secs, iterations, max_iters_of, nominal_bytes_per_sec, osu_iters_arg,
    STREAM_SIZE,
};
pub use rows::{parse_output, read_csv, write_csv, Measured, Row, CSV_HEADER, OMPI, OURS};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

use crate::peers::CPrograms;
use crate::report::RunInfo;
use crate::{load_average, shell_line};

use measure::{finish, measure_case, Meta};
use network::Tools;
use plan::Plan;
use runner::{catch_signals, Runner};

/// The folder under `--out` that a stopped or failed run writes what it measured to (a
/// page, `results.csv` and plots of its own), so that it never replaces the last complete
/// run's page.
pub const STOPPED_DIR: &str = "cubenet-stopped";

/// `hypercube-bench cubenet`: measure (unless `--report`), then write the page; a run
/// that stops early writes what it measured to `OUT/`[`STOPPED_DIR`] instead.
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
        bind_cores: a.bind_cores,
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
                    // Keep what was measured — beside the last complete run's page and
                    // results, not over them — then fail.
                    runner
                        .notes
                        .push(format!("stopped at d={dim} {rate}: {e:#}"));
                    let stopped = Args {
                        out: a.out.join(STOPPED_DIR),
                        ..a.clone()
                    };
                    match finish(&stopped, &plan, &rows, &runner, &meta) {
                        Ok(()) => eprintln!(
                            "cubenet-bench: stopped; what was measured is in {}, and {} is \
                             as the last complete run left it",
                            stopped.out.display(),
                            a.out.join("cubenet.md").display()
                        ),
                        Err(w) => eprintln!(
                            "cubenet-bench: stopped, and what was measured could not be \
                             written: {w:#}"
                        ),
                    }
                    return Err(e);
                }
            }
        }
    }
    finish(&a, &plan, &rows, &runner, &meta)
}
