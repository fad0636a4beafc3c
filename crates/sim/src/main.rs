//! `hypercube-sim`: reproduce the tables of Bhatt (1992) and run single simulations.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use hypercube_plot::{Axis, Figure, Legend, Panel, Series};
use hypercube_sim::bound::LowerBound;
use hypercube_sim::experiment::{self, run_row, Algo, RowResult, Setup, Stats};
use hypercube_sim::model::Semantics;
use hypercube_sim::tables::{self, Baseline, TABLES, THRESHOLD_TABLES};
use hypercube_sim::workload::{Generator, Params};

/// `hypercube-sim plot`: the SVG charts.
#[path = "cli/plot.rs"]
mod plot;

/// Cycle-level simulator of many-to-many routing on the hypercube, after
/// S. R. Bhatt, "Efficient Hypercube Communications" (NJIT, 1992).
///
/// Heavy runs (`table --all`) should be built with `--release`.
#[derive(Parser, Debug)]
#[command(name = "hypercube-sim", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Print thesis tables (5.1 … 5.8) with the paper's numbers beside ours.
    ///
    /// Every row is run on `--seeds` workloads; we print mean ± sample
    /// standard deviation of com_time, ALG II at its best threshold, our
    /// algorithm, and the lower bound. Example:
    /// `cargo run --release -p hypercube-sim -- table 5.1 5.7` or `table --all`.
    Table(TableArgs),
    /// Run one algorithm on one seeded workload and print com_time and the bound.
    Run(RunArgs),
    /// Write SVG plots (com_time vs threshold, com_time vs load) into a directory.
    Plot(PlotArgs),
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Number of seeds (workloads) per row.
    #[arg(long, default_value_t = 20)]
    seeds: u64,
    /// First seed; seeds are first-seed, first-seed+1, …
    #[arg(long, default_value_t = 1)]
    first_seed: u64,
    /// Cycle semantics: the thesis's model, or what the appendix C code computes.
    #[arg(long, value_enum, default_value_t = SemArg::Synchronous)]
    semantics: SemArg,
    /// Many-to-many workload generator.
    #[arg(long, value_enum, default_value_t = GenArg::Appendix)]
    generator: GenArg,
    /// Step of the ALG II threshold sweep over [0, 1].
    #[arg(long, default_value_t = 0.1)]
    threshold_step: f64,
}

#[derive(Args, Debug)]
struct TableArgs {
    /// Table identifiers: 5.1 … 5.8.
    ids: Vec<String>,
    /// Print all tables.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Hypercube dimension.
    #[arg(short, long, default_value_t = 6)]
    n: u32,
    /// Lower limit of messages per pair.
    #[arg(long, default_value_t = 1)]
    lnom1: u32,
    /// Upper limit of messages per pair.
    #[arg(long, default_value_t = 1)]
    lnom2: u32,
    /// Percentage of senders.
    #[arg(long, default_value_t = 100.0)]
    senders: f64,
    /// Percentage of destinations per sender.
    #[arg(long, default_value_t = 100.0)]
    dest: f64,
    /// Algorithm.
    #[arg(short, long, value_enum, default_value_t = AlgoArg::Ours)]
    algo: AlgoArg,
    /// ALG II threshold in [0, 1].
    #[arg(long, default_value_t = 1.0)]
    threshold: f64,
    /// Seed of the workload (and of the router's randomness).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Cycle semantics.
    #[arg(long, value_enum, default_value_t = SemArg::Synchronous)]
    semantics: SemArg,
    /// Many-to-many workload generator.
    #[arg(long, value_enum, default_value_t = GenArg::Appendix)]
    generator: GenArg,
}

#[derive(Args, Debug)]
struct PlotArgs {
    /// Output directory (created if missing).
    #[arg(long, default_value = "docs/sim")]
    out: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SemArg {
    /// Thesis model: simultaneous moves, one hop per packet per cycle.
    Synchronous,
    /// Appendix C code: nodes act in order and update state in place.
    Appendix,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum GenArg {
    /// The appendix's generator (draws with replacement; counts in lnom1..lnom2-1).
    Appendix,
    /// The chapter-5 text (distinct senders and destinations; counts in lnom1..=lnom2).
    Text,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum AlgoArg {
    /// Brute force (§3.4).
    BruteForce,
    /// Johnsson–Ho reverse breadth first (§3.3).
    Rbf,
    /// ALG I equibalancing (§4.2).
    Alg1,
    /// ALG II one-step lookahead (§4.3), see --threshold.
    Alg2,
    /// Our online router.
    Ours,
    /// Our offline schedule search (best of a portfolio).
    OursBest,
    /// The dimension-ordered exchange (Johnsson–Ho; Grama et al. §4.5).
    Exchange,
    /// Source routes from the runtime's planner (hypercube_topology::Plan).
    Planned,
}

impl Common {
    fn setup(&self) -> Result<Setup> {
        if self.seeds == 0 {
            bail!("--seeds must be at least 1");
        }
        if !(self.threshold_step > 0.0 && self.threshold_step <= 1.0) {
            bail!(
                "--threshold-step must be in (0, 1], got {}",
                self.threshold_step
            );
        }
        let steps = (1.0 / self.threshold_step).round() as usize;
        let mut thresholds: Vec<f64> = (0..=steps)
            .map(|i| (i as f64 * self.threshold_step).min(1.0))
            .collect();
        for t in [0.2, 0.4, 0.6, 0.8, 1.0] {
            if !thresholds.iter().any(|x| (x - t).abs() < 1e-9) {
                thresholds.push(t);
            }
        }
        thresholds.sort_by(f64::total_cmp);
        Ok(Setup {
            seeds: self.seeds,
            first_seed: self.first_seed,
            semantics: sem(self.semantics),
            generator: gen(self.generator),
            thresholds,
        })
    }
}

fn sem(s: SemArg) -> Semantics {
    match s {
        SemArg::Synchronous => Semantics::Synchronous,
        SemArg::Appendix => Semantics::Appendix,
    }
}

fn gen(g: GenArg) -> Generator {
    match g {
        GenArg::Appendix => Generator::Appendix,
        GenArg::Text => Generator::Text,
    }
}

fn ms(s: &Stats) -> String {
    format!("{:7.1}±{:<5.1}", s.mean, s.sd)
}

fn print_row_table(t: &tables::PaperTable, setup: &Setup) -> Result<Vec<RowResult>> {
    let base = match t.baseline {
        Baseline::Rbf => "RBF",
        Baseline::BruteForce => "BR_FC",
    };
    let other = match t.baseline {
        Baseline::Rbf => "BR_FC",
        Baseline::BruteForce => "RBF",
    };
    println!("Table {}: {}", t.id, t.title);
    println!(
        "  {} seeds from {}, {:?} semantics, {:?} generator; ours = mean±sd of com_time",
        setup.seeds, setup.first_seed, setup.semantics, setup.generator
    );
    println!(
        "  row lnom1 lnom2 %snd %dst |  bound  | ALG II paper   ours        (θ*) | ALG I paper   ours         | {base:>5} paper   ours         | {other:>5} ours      |  OURS online   | OURS-BEST      BEST/bound | EXCH          | PLANNED        plan port | all-port: PLANNED  plan link"
    );
    let mut out = Vec::new();
    for row in t.rows {
        let p = &row.params;
        let res =
            run_row(p, setup).with_context(|| format!("simulating row {}{}", t.id, row.label))?;
        let (b, o) = match t.baseline {
            Baseline::Rbf => (&res.rbf, &res.brute_force),
            Baseline::BruteForce => (&res.brute_force, &res.rbf),
        };
        println!(
            "  {}.  {:5} {:5} {:4} {:4} | {:7.1} | {:11} {} ({:.1}) | {:10} {} | {:10} {} | {} | {} | {} {:6.3}     | {} | {} {:9.1} | {:15.1} {:9.1}",
            row.label,
            p.lnom1,
            p.lnom2,
            p.senders_pct,
            p.dest_pct,
            res.bound.mean,
            row.alg2,
            ms(&res.alg2),
            res.best_threshold,
            row.alg1,
            ms(&res.alg1),
            row.baseline,
            ms(b),
            ms(o),
            ms(&res.ours),
            ms(&res.ours_best),
            res.ours_best.mean / res.bound.mean,
            ms(&res.exchange),
            ms(&res.planned),
            res.plan_port.mean,
            res.planned_all_port.mean,
            res.plan_link.mean
        );
        out.push(res);
    }
    println!();
    Ok(out)
}

fn print_threshold_table(t: &tables::ThresholdTable, setup: &Setup) -> Result<RowResult> {
    println!("Table {}: {}", t.id, t.title);
    println!(
        "  {} seeds from {}, {:?} semantics, {:?} generator",
        setup.seeds, setup.first_seed, setup.semantics, setup.generator
    );
    let res = run_row(&t.params, setup).with_context(|| format!("simulating table {}", t.id))?;
    println!("  threshold | paper | ALG II ours     | OURS online     | OURS-BEST       | bound");
    for (th, s) in &res.sweep {
        let paper = t
            .points
            .iter()
            .find(|(x, _)| (x - th).abs() < 1e-9)
            .map(|(_, c)| c.to_string())
            .unwrap_or_else(|| "-".into());
        println!(
            "  {th:9.1} | {paper:>5} | {} | {} | {} | {:7.1}",
            ms(s),
            ms(&res.ours),
            ms(&res.ours_best),
            res.bound.mean
        );
    }
    println!();
    Ok(res)
}

fn table(a: &TableArgs) -> Result<()> {
    let setup = a.common.setup()?;
    let ids: Vec<String> = if a.all {
        tables::ids().into_iter().map(String::from).collect()
    } else {
        a.ids.clone()
    };
    if ids.is_empty() {
        bail!(
            "name at least one table (one of {}) or pass --all",
            tables::ids().join(", ")
        );
    }
    for id in &ids {
        let id = id.trim().trim_start_matches("Table").trim();
        if let Some(t) = TABLES.iter().find(|t| t.id == id) {
            print_row_table(t, &setup)?;
        } else if let Some(t) = THRESHOLD_TABLES.iter().find(|t| t.id == id) {
            print_threshold_table(t, &setup)?;
        } else {
            bail!(
                "unknown table {id:?}; known tables: {}",
                tables::ids().join(", ")
            );
        }
    }
    Ok(())
}

fn run_one(a: &RunArgs) -> Result<()> {
    if !(1..=10).contains(&a.n) {
        bail!("--n must be between 1 and 10, got {}", a.n);
    }
    if a.lnom1 > a.lnom2 {
        bail!(
            "--lnom1 ({}) must not exceed --lnom2 ({})",
            a.lnom1,
            a.lnom2
        );
    }
    for (name, v) in [("--senders", a.senders), ("--dest", a.dest)] {
        if !(0.0..=100.0).contains(&v) {
            bail!("{name} is a percentage in [0, 100], got {v}");
        }
    }
    if !(0.0..=1.0).contains(&a.threshold) {
        bail!("--threshold must be in [0, 1], got {}", a.threshold);
    }
    let p = Params {
        n: a.n,
        lnom1: a.lnom1,
        lnom2: a.lnom2,
        senders_pct: a.senders,
        dest_pct: a.dest,
    };
    let w = experiment::workload(&p, gen(a.generator), a.seed);
    let algo = match a.algo {
        AlgoArg::BruteForce => Algo::BruteForce,
        AlgoArg::Rbf => Algo::Rbf,
        AlgoArg::Alg1 => Algo::Equibalancing,
        AlgoArg::Alg2 => Algo::Lookahead(a.threshold),
        AlgoArg::Ours => Algo::Ours,
        AlgoArg::OursBest => Algo::OursBest,
        AlgoArg::Exchange => Algo::Exchange,
        AlgoArg::Planned => Algo::Planned,
    };
    let semantics = sem(a.semantics);
    let cycles = experiment::run(algo, &w, semantics, a.seed).context("simulation failed")?;
    let b = LowerBound::of(&w);
    let bound = match semantics {
        Semantics::Synchronous => b.value(),
        Semantics::Appendix => b.appendix(),
    };
    println!(
        "{algo:?}: com_time = {cycles} cycles; packets = {}; lower bound = {bound} (hops {}, source {}, sink {})",
        w.packets.len(),
        b.hops,
        b.source,
        b.sink
    );
    if algo == Algo::Planned {
        use hypercube_sim::algorithms::planned;
        if let Some(plan) = planned::plan_of(&w) {
            println!(
                "plan: busiest port {} packets (the plan's one-port bound); busiest link {} packets (its all-port prediction), all-port simulation {} cycles; {} legs",
                planned::busiest_port(&plan),
                plan.busiest(),
                planned::all_port_cycles(&w, &planned::routes_of(&w, &plan)),
                plan.legs().len()
            );
        }
    }
    Ok(())
}

const COLORS: [u32; 8] = [
    0x1f77b4, 0xd62728, 0x2ca02c, 0xff7f0e, 0x9467bd, 0x7f7f7f, 0x8c564b, 0x17becf,
];

fn main() -> Result<()> {
    let cli = Cli::parse();
    match &cli.cmd {
        Cmd::Table(a) => table(a),
        Cmd::Run(a) => run_one(a),
        Cmd::Plot(a) => plot::plot(a),
    }
}
