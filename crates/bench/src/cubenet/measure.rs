//! Measuring one case (a cube dimension at a link rate): the stream rate first, then every
//! benchmark of the plan, ours and Open MPI's; and writing what was measured.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::osu;
use crate::peers;
use crate::report::{size_text, RunInfo};
use crate::Bench;
use crate::{linkbound, load_average, shell_line};

use super::args::Args;
use super::medians::imp_label;
use super::network::Network;
use super::page::write_report;
use super::plan::{
    estimate_secs, iterations, max_iters_of, nominal_bytes_per_sec, Plan, STREAM_SIZE,
};
use super::rows::{write_csv, Row, OMPI, OURS};
use super::runner::{Job, Runner};
use crate::lock::LOCK_PATH;

/// The commit, and whether the code the programs were built from had uncommitted changes
/// (the runtime, launcher or benchmarks).
pub(crate) fn commit_line(repo: &Path) -> String {
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
pub(super) fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(k, x)| match x.rsplit_once('/') {
            Some((_, base)) if k == 0 => base.to_string(),
            _ => x,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Measure one (d, rate): the stream rates, then every benchmark and size, ours and Open
/// MPI's in turn. Returns the run-info line of the measured link rates.
pub(super) fn measure_case(
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
    // Ours always; Open MPI where its network is up.
    let runtimes: &[&str] = if net.is_some() {
        &[OURS, OMPI]
    } else {
        &[OURS]
    };
    // 1. The one-hop stream rate: 64 × 64 KiB in flight per iteration, about 3 s.
    let per_iter = osu::WINDOW as f64 * STREAM_SIZE as f64;
    let n = ((3.0 * nominal / per_iter).round() as u64).clamp(3, 200);
    let mut rates: Vec<(&str, f64)> = Vec::new();
    for &imp in runtimes {
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
                loop_us: None,
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
                // An iPSC utility is ours only: its Open MPI figure is the peer
                // collective's run (`Bench::mpi_peer`).
                for &imp in runtimes.iter().filter(|&&i| i == OURS || bench.in_mpi()) {
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
                            loop_us: m.loop_us,
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
pub(super) struct Meta {
    pub(super) machine: String,
    pub(super) started: String,
    pub(super) commit: String,
    pub(super) load_before: String,
    pub(super) t0: Instant,
    pub(super) notes: Vec<String>,
    pub(super) link_lines: Vec<String>,
}

/// Write the CSV, run-info and the page.
pub(super) fn finish(
    a: &Args,
    plan: &Plan,
    rows: &[Row],
    runner: &Runner,
    meta: &Meta,
) -> Result<()> {
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
            "binding".into(),
            if a.bind_cores {
                "ours `hcrun --bind-to core` (rank r on core r mod n); Open MPI unbound".into()
            } else {
                "none: the kernel places every rank".into()
            },
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
