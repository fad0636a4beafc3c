//! The comparison driver: runs our `osu` through the launcher, the Rust `floor` (and the C
//! floor `tcp_floor`, as a cross-check), and the MPI benchmark `osu_mpi` on Open MPI (TCP
//! and shared memory, [`peers::mpirun`]), repeatedly, and collects one [`Record`] per
//! printed row (`records.rs`: the rows, `results.csv`). The C programs are built on first
//! use ([`peers::CPrograms`]).

mod records;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use hypercube_procgroup::Finished;

use anyhow::{bail, Context};

use crate::osu;
use crate::peers::{self, CPrograms, Transport};
use crate::Bench;
pub use records::{imp, read_csv, write_csv, Record, CSV_HEADER};
use records::{parse_c_floor, records_of};

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Rank counts (powers of two).
    pub nps: Vec<u32>,
    /// Repetitions of everything.
    pub reps: u32,
    /// Benchmarks (point-to-point ones run at np = 2 only).
    pub benches: Vec<Bench>,
    /// Sizes of interest for collectives; each run sweeps from the smallest to the largest.
    pub sizes: Vec<u64>,
    /// Sizes of interest for latency, bandwidth and the floors.
    pub p2p_sizes: Vec<u64>,
    /// `-i` for collectives (sizes above 8 KiB use a tenth).
    pub iters: u64,
    /// `-i` for latency, bandwidth and the floor ping-pongs.
    pub p2p_iters: u64,
    /// `-x` everywhere.
    pub warmup: i64,
    /// Run Open MPI (TCP) if available.
    pub mpi_tcp: bool,
    /// Run Open MPI (shared memory) if available.
    pub mpi_shm: bool,
    /// Run the Rust floor (and the C one as a cross-check).
    pub floor: bool,
    /// Deadline of one run.
    pub timeout: Duration,
}

/// Where the programs are.
#[derive(Clone, Debug)]
pub struct Tools {
    /// The launcher.
    pub hcrun: PathBuf,
    /// Our node program.
    pub osu: PathBuf,
    /// The Rust floor.
    pub floor: PathBuf,
    /// The C peers (`osu_mpi`, `tcp_floor`), built on first use.
    pub c: CPrograms,
}

impl Tools {
    /// The programs next to the running executable (`target/release/`), and the C peers
    /// built into `target/bench-c/`. Fails with a hint if one of the Rust programs is
    /// missing (a missing C compiler only skips its peer, with a note).
    pub fn beside_me() -> anyhow::Result<Tools> {
        let me = std::env::current_exe().context("finding this program")?;
        let dir = me.parent().context("this program has no folder")?;
        let t = Tools {
            hcrun: dir.join("hcrun"),
            osu: dir.join("osu"),
            floor: dir.join("floor"),
            c: CPrograms::for_exe(&me),
        };
        for p in [&t.hcrun, &t.osu, &t.floor] {
            if !p.is_file() {
                bail!(
                    "{} is missing; build first: cargo build --release -p launcher -p hypercube-bench",
                    p.display()
                );
            }
        }
        Ok(t)
    }
}

/// Run a command with a deadline: [`hypercube_procgroup::run`] (its own process group,
/// killed whole at the deadline: mpirun's and hcrun's ranks included), an error saying which
/// command could not be run.
pub fn run_cmd(cmd: &mut Command, timeout: Duration) -> anyhow::Result<Finished> {
    hypercube_procgroup::run(cmd, timeout).with_context(|| format!("starting {cmd:?}"))
}

/// The result of a whole comparison.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every row of every successful run.
    pub records: Vec<Record>,
    /// What was skipped or failed, one sentence each.
    pub notes: Vec<String>,
    /// Wall time of the whole comparison.
    pub elapsed: Duration,
}

/// `-m` for a list of sizes: from the smallest to the largest.
fn range_arg(sizes: &[u64]) -> String {
    let lo = sizes.iter().copied().min().unwrap_or(8);
    let hi = sizes.iter().copied().max().unwrap_or(lo);
    format!("{lo}:{hi}")
}

/// The log₂ of a power of two (the cube dimension for np ranks).
fn dim_of(np: u32) -> anyhow::Result<u32> {
    if !np.is_power_of_two() || np > 1 << 16 {
        bail!("np = {np} is not a power of two up to 65536");
    }
    Ok(np.trailing_zeros())
}

/// Run the whole comparison, printing progress on stderr.
pub fn run(plan: &Plan, tools: &Tools) -> anyhow::Result<Outcome> {
    let start = Instant::now();
    let mut o = Outcome::default();
    for &np in &plan.nps {
        dim_of(np)?;
    }
    let mut tcp = plan.mpi_tcp;
    let mut shm = plan.mpi_shm;
    // Build the MPI benchmark once (a missing Open MPI skips both transports, with a note).
    let mut mpi_bin = PathBuf::new();
    if tcp || shm {
        match tools.c.mpi() {
            Ok(p) => mpi_bin = p,
            Err(e) => {
                o.notes.push(format!("Open MPI skipped: {e:#}."));
                eprintln!("compare: Open MPI skipped: {e:#}");
                tcp = false;
                shm = false;
            }
        }
    }
    // Probe each transport once with a tiny run.
    for (flag, transport) in [(&mut tcp, Transport::Tcp), (&mut shm, Transport::Shm)] {
        if !*flag {
            continue;
        }
        let t = transport.name();
        let mut cmd = peers::mpirun(&mpi_bin, 2, transport);
        cmd.args(["latency", "-m", "8:8", "-i", "10", "-x", "1"]);
        let r = run_cmd(&mut cmd, Duration::from_secs(120))?;
        if !r.ok() || osu::parse_table(&r.stdout).rows.is_empty() {
            *flag = false;
            let why = r.stderr.lines().last().unwrap_or("no output").to_string();
            o.notes.push(format!(
                "Open MPI {t} skipped: `hypercube-bench mpi 2 {t} latency` failed ({why})."
            ));
            eprintln!("compare: Open MPI {t} unavailable: {why}");
        }
    }
    let mut c_floor = None;
    if plan.floor {
        match tools.c.floor() {
            Ok(p) => c_floor = Some(p),
            Err(e) => o.notes.push(format!("C floor cross-check skipped: {e:#}.")),
        }
    }

    // The list of runs, repetitions outermost so that slow drifts of the machine's load
    // spread over all implementations alike.
    struct Job {
        imp: &'static str,
        np: u32,
        bench: String,
        cmd: Command,
        rep: u32,
    }
    let mut jobs: Vec<Job> = Vec::new();
    let p2p_range = range_arg(&plan.p2p_sizes);
    let coll_range = range_arg(&plan.sizes);
    for rep in 1..=plan.reps {
        if plan.floor && plan.benches.iter().any(|b| b.is_p2p()) {
            for (imp, mode, bench) in [
                (imp::FLOOR_SPIN, "spin", "latency"),
                (imp::FLOOR_BLOCK, "pingpong", "latency"),
                (imp::FLOOR_STREAM, "stream", "bw"),
            ] {
                let mut cmd = Command::new(&tools.floor);
                cmd.args([mode, "-m", &p2p_range]);
                if mode != "stream" {
                    cmd.args(["-i", &plan.p2p_iters.to_string()]);
                }
                jobs.push(Job {
                    imp,
                    np: 2,
                    bench: bench.into(),
                    cmd,
                    rep,
                });
            }
            if let Some(c_floor) = &c_floor {
                for (imp, mode, bench, size, iters) in [
                    (imp::C_FLOOR_SPIN, "spin", "latency", 8u64, 5000u64),
                    (imp::C_FLOOR_BLOCK, "pingpong", "latency", 8, 5000),
                    (imp::C_FLOOR_STREAM, "stream", "bw", 4194304, 500),
                ] {
                    let mut cmd = Command::new(c_floor);
                    cmd.args([mode.to_string(), size.to_string(), iters.to_string()]);
                    jobs.push(Job {
                        imp,
                        np: 2,
                        bench: bench.into(),
                        cmd,
                        rep,
                    });
                }
            }
        }
        for &np in &plan.nps {
            for &b in &plan.benches {
                if b.is_p2p() && np != 2 {
                    continue;
                }
                let (range, iters) = if b.is_p2p() {
                    (p2p_range.clone(), plan.p2p_iters)
                } else {
                    (coll_range.clone(), plan.iters)
                };
                let iters = if b == Bench::Bw { plan.iters } else { iters };
                let bench_args = [
                    b.name().to_string(),
                    "-m".into(),
                    range,
                    "-i".into(),
                    iters.to_string(),
                    "-x".into(),
                    plan.warmup.to_string(),
                ];
                let d = dim_of(np)?;
                let mut cmd = Command::new(&tools.hcrun);
                cmd.args([
                    "--dim".to_string(),
                    d.to_string(),
                    "--no-prefix".into(),
                    "--timeout-s".into(),
                    plan.timeout.as_secs().max(1).to_string(),
                    "--".into(),
                ])
                .arg(&tools.osu)
                .args(&bench_args);
                jobs.push(Job {
                    imp: imp::OURS,
                    np,
                    bench: b.name().into(),
                    cmd,
                    rep,
                });
                if !b.in_mpi() {
                    continue;
                }
                for (on, imp, transport) in [
                    (tcp, imp::OMPI_TCP, Transport::Tcp),
                    (shm, imp::OMPI_SHM, Transport::Shm),
                ] {
                    if !on {
                        continue;
                    }
                    let mut cmd = peers::mpirun(&mpi_bin, np, transport);
                    cmd.args(&bench_args);
                    jobs.push(Job {
                        imp,
                        np,
                        bench: b.name().into(),
                        cmd,
                        rep,
                    });
                }
            }
        }
    }

    let total = jobs.len();
    for (k, mut j) in jobs.into_iter().enumerate() {
        let r = run_cmd(&mut j.cmd, plan.timeout + Duration::from_secs(10))?;
        let recs = if r.ok() {
            if j.imp.starts_with("c-floor") {
                parse_c_floor(&r.stdout, j.imp, &j.bench, j.rep)
            } else {
                records_of(&r.stdout, j.imp, j.np, &j.bench, j.rep)
            }
        } else {
            None
        };
        let status = match &recs {
            Some(v) => format!("{} rows", v.len()),
            None => {
                let why = if r.timed_out {
                    format!("timed out after {:.0} s", r.elapsed.as_secs_f64())
                } else {
                    // The most telling line: a rank's own reason if it gave one.
                    let lines: Vec<&str> =
                        r.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
                    let why = lines
                        .iter()
                        .find(|l| l.contains("aborts the job") || l.contains("panicked"))
                        .or_else(|| lines.last())
                        .copied()
                        .unwrap_or("no output");
                    format!("failed: {}", why.trim())
                };
                o.notes.push(format!(
                    "{} {} np={} rep {}: {why}",
                    j.imp, j.bench, j.np, j.rep
                ));
                why
            }
        };
        eprintln!(
            "compare: [{:>3}/{total}] rep {} np={:<2} {:<14} {:<14} {:>6.1} s  {status}",
            k + 1,
            j.rep,
            j.np,
            j.bench,
            j.imp,
            r.elapsed.as_secs_f64()
        );
        if let Some(v) = recs {
            o.records.extend(v);
        }
    }
    o.elapsed = start.elapsed();
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn range_and_dimension() {
        assert_eq!(range_arg(&[65536, 8, 1048576]), "8:1048576");
        assert!(dim_of(12).is_err());
        assert_eq!(dim_of(16).unwrap(), 4);
    }
}
