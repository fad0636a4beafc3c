//! `hypercube-bench`: the comparison in one command (`compare`), the re-rendering of its
//! report from `results.csv` (`report`), one run of a C peer by hand (`mpi`, `c-floor`),
//! and ours vs. Open MPI on the emulated hypercube network (`cubenet`). See
//! `hypercube-bench --help`.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use hypercube_bench::compare::{self, Plan, Tools};
use hypercube_bench::peers::{self, CPrograms, Transport};
use hypercube_bench::report::{self, RunInfo};
use hypercube_bench::{load_average, machine_line, shell_line, Bench};

/// hypercube vs. Open MPI vs. the raw-TCP floor, side by side.
///
/// `compare` runs our `osu` (through hcrun), the Rust and C floors, and the crate's MPI
/// benchmark (crates/bench/c/osu_mpi.c) on Open MPI over TCP and shared memory, for each
/// np and repetition, then writes results.csv, README.md (medians, ratios, targets) and one
/// SVG per benchmark into docs/perf/. The C programs are built on first use into
/// target/bench-c/ with mpicc.openmpi and cc (scripts/install-bench-deps.sh installs
/// them). Build first (scripts/compare.sh does): cargo build --release -p launcher -p
/// hypercube-bench.
#[derive(Parser, Debug)]
#[command(name = "hypercube-bench", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run the comparison and write the report
    Compare(CompareArgs),
    /// Re-render README.md and the plots from an existing results.csv
    Report {
        /// Folder with results.csv (and run-info.txt)
        #[arg(long, default_value_os_t = default_out())]
        out: PathBuf,
    },
    /// Run the MPI benchmark (crates/bench/c/osu_mpi.c) on Open MPI, as compare does:
    /// e.g. `mpi 8 tcp allreduce -m 4:1048576`
    Mpi {
        /// Number of ranks (may exceed the cores: ranks yield when idle)
        np: u32,
        /// tcp (loopback TCP, the like-for-like peer) or shm (shared memory)
        transport: Transport,
        /// The benchmark and its options: BENCH [-m MIN:MAX] [-i ITERS] [-x WARMUP]
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Fit Grama's t_s, t_w, t_h on the emulated cube (hcrun --link-rate) and compare the
    /// chapter 4 operations with the model; writes docs/perf/cubenet-model.md
    CubenetModel(hypercube_bench::model_fit::ModelArgs),
    /// Run the C floor (crates/bench/c/tcp_floor.c): one figure, or the standard set
    CFloor {
        /// pingpong | spin | stream, SIZE, ITERS (omit all three for the standard set)
        #[arg(num_args = 0..=3)]
        args: Vec<String>,
    },
    /// Ours vs. Open MPI on the emulated hypercube network (hcrun --link-rate, cubenet),
    /// beside the link bound: writes docs/perf/cubenet.md and docs/perf/cubenet/ (root only)
    Cubenet(hypercube_bench::cubenet::Args),
    /// Planned against e-cube routes and Open MPI's MPI_Alltoallv on many-to-many workloads
    /// on the emulated network: writes docs/perf/routing.md (root only)
    Routing(hypercube_bench::routing::Args),
}

#[derive(Args, Debug)]
struct CompareArgs {
    /// Rank counts, powers of two (latency and bw run at np=2 only)
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
    np: Vec<u32>,
    /// Repetitions of every run (the report shows medians)
    #[arg(long, default_value_t = 3)]
    reps: u32,
    /// Benchmarks: `all`, `mpi` (those Open MPI has too), or a list such as
    /// latency,bw,allreduce
    #[arg(long, default_value = "all")]
    benches: String,
    /// Collective sizes of interest in bytes; each run sweeps (doubling) from the smallest
    /// to the largest
    #[arg(long, value_delimiter = ',', default_value = "8,65536,1048576")]
    sizes: Vec<u64>,
    /// Point-to-point (and floor) sizes of interest; swept the same way
    #[arg(long, value_delimiter = ',', default_value = "8,65536,1048576,4194304")]
    p2p_sizes: Vec<u64>,
    /// -i for collectives and bw (sizes above 8 KiB use a tenth)
    #[arg(short = 'i', long, default_value_t = 100)]
    iters: u64,
    /// -i for latency and the floor ping-pongs (sizes above 8 KiB use a tenth)
    #[arg(long, default_value_t = 1000)]
    p2p_iters: u64,
    /// -x (warm-up iterations per size; -1 = OSU's defaults: 100 up to 8 KiB, 10 above; bw
    /// 10 / 2). Fewer measured the start-up of both runtimes: a 100-call 8 B barrier on 8
    /// ranks after 5 warm-up calls took 137–284 µs (ours) and 143–175 µs (Open MPI) per call,
    /// after 100 warm-up calls 128–176 and 134–156
    #[arg(short = 'x', long, default_value_t = -1, allow_negative_numbers = true)]
    warmup: i64,
    /// A quick smoke run: np 2,4; 1 repetition; latency, bw, allreduce, alltoall, barrier;
    /// sizes 8 and 64 KiB; fewer iterations (overrides those options)
    #[arg(long)]
    quick: bool,
    /// Do not run Open MPI at all
    #[arg(long)]
    no_mpi: bool,
    /// Do not run Open MPI's shared-memory transport
    #[arg(long)]
    no_shm: bool,
    /// Do not run the floors
    #[arg(long)]
    no_floor: bool,
    /// Deadline of one run in seconds (a run past it is killed and reported)
    #[arg(long, default_value_t = 300)]
    timeout_s: u64,
    /// Output folder
    #[arg(long, default_value_os_t = default_out())]
    out: PathBuf,
}

/// The repository root (this crate is crates/bench).
fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn default_out() -> PathBuf {
    repo_root().join("docs/perf")
}

fn parse_benches(s: &str) -> anyhow::Result<Vec<Bench>> {
    match s.trim() {
        "all" => Ok(Bench::ALL.to_vec()),
        "mpi" => Ok(Bench::MPI.to_vec()),
        list => list
            .split(',')
            .filter(|x| !x.trim().is_empty())
            .map(str::parse)
            .collect(),
    }
}

/// The system's TCP congestion control, and what our links and the floor ask for (the
/// choice moves loopback figures by up to 2×: `docs/perf/analysis.md`).
fn congestion_line() -> String {
    let system = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let asked = hypercube_bench::links_congestion();
    let ours = std::env::var("HYPERCUBE_TCP_CONGESTION").map_or_else(
        |_| format!("the first of {asked} when ranks do not outnumber cores, else the system's"),
        |v| format!("HYPERCUBE_TCP_CONGESTION={v}"),
    );
    format!(
        "system {system} (Open MPI and the C floor use it); our links: {ours}; Rust floor: the \
         first of {asked}"
    )
}

/// Which programs the peers' rows come from, and Open MPI's version.
fn peers_line(recs: &[compare::Record]) -> String {
    let ran = |prefix: &str| recs.iter().any(|r| r.imp.starts_with(prefix));
    let mpi = if ran("ompi") {
        let v = shell_line(peers::MPIRUN, &["--version"]);
        let v = v.rsplit(' ').next().unwrap_or("unknown");
        format!(
            "Open MPI {v} (`{}`) running `crates/bench/c/osu_mpi.c`",
            peers::MPIRUN
        )
    } else {
        "Open MPI not run".into()
    };
    let c = if ran("c-floor") {
        "C floor `crates/bench/c/tcp_floor.c`"
    } else {
        "C floor not run"
    };
    format!("{mpi}; {c}")
}

fn compare_cmd(a: CompareArgs) -> anyhow::Result<()> {
    let mut plan = Plan {
        nps: a.np.clone(),
        reps: a.reps.max(1),
        benches: parse_benches(&a.benches)?,
        sizes: a.sizes.clone(),
        p2p_sizes: a.p2p_sizes.clone(),
        iters: a.iters,
        p2p_iters: a.p2p_iters,
        warmup: a.warmup,
        mpi_tcp: !a.no_mpi,
        mpi_shm: !a.no_mpi && !a.no_shm,
        floor: !a.no_floor,
        timeout: Duration::from_secs(a.timeout_s.max(1)),
    };
    if a.quick {
        plan.nps = vec![2, 4];
        plan.reps = 1;
        plan.benches = vec![
            Bench::Latency,
            Bench::Bw,
            Bench::Allreduce,
            Bench::Alltoall,
            Bench::Barrier,
        ];
        plan.sizes = vec![8, 65536];
        plan.p2p_sizes = vec![8, 65536];
        plan.iters = 20;
        plan.p2p_iters = 200;
        plan.warmup = 2;
    }
    anyhow::ensure!(
        !plan.sizes.is_empty() && !plan.p2p_sizes.is_empty(),
        "--sizes and --p2p-sizes must not be empty"
    );
    let tools = Tools::beside_me()?;
    let commit = shell_line(
        "git",
        &[
            "-C",
            &repo_root().to_string_lossy(),
            "rev-parse",
            "--short",
            "HEAD",
        ],
    );
    let started = shell_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]);
    let load_before = load_average();
    let o = compare::run(&plan, &tools)?;
    let load_after = load_average();
    std::fs::create_dir_all(&a.out)?;
    compare::write_csv(&a.out.join("results.csv"), &o.records)?;
    let list = |v: &[u64]| {
        v.iter()
            .map(|s| report::size_text(*s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let info = RunInfo {
        lines: vec![
            ("date".into(), started),
            ("commit".into(), commit),
            ("machine".into(), machine_line()),
            ("TCP congestion control".into(), congestion_line()),
            ("peers".into(), peers_line(&o.records)),
            (
                "command".into(),
                format!(
                    "`{}`",
                    std::env::args()
                        .map(|x| if x.contains('/') {
                            x.rsplit('/').next().unwrap_or_default().to_string()
                        } else {
                            x
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            ),
            (
                "plan".into(),
                format!(
                    "np {:?}, {} repetition(s), benchmarks {}; collective sweep {} (tables: {}), \
                     point-to-point sweep {} (tables: {}); -i {} (collectives, bw), -i {} \
                     (latency, floor), -x {}",
                    plan.nps,
                    plan.reps,
                    Bench::names(&plan.benches),
                    format_args!(
                        "{}..{}",
                        report::size_text(*plan.sizes.iter().min().unwrap_or(&8)),
                        report::size_text(*plan.sizes.iter().max().unwrap_or(&8))
                    ),
                    list(&plan.sizes),
                    format_args!(
                        "{}..{}",
                        report::size_text(*plan.p2p_sizes.iter().min().unwrap_or(&8)),
                        report::size_text(*plan.p2p_sizes.iter().max().unwrap_or(&8))
                    ),
                    list(&plan.p2p_sizes),
                    plan.iters,
                    plan.p2p_iters,
                    if plan.warmup < 0 {
                        "-1 (OSU's defaults: 100 warm-up calls up to 8 KiB, 10 above)".to_string()
                    } else {
                        plan.warmup.to_string()
                    }
                ),
            ),
            (
                "load average (1 min) before / after".into(),
                format!(
                    "{load_before} / {load_after} — other jobs on the machine (e.g. a \
                     concurrent build or benchmark) distort every figure, spinning ones most"
                ),
            ),
            (
                "run time".into(),
                format!("{:.1} min", o.elapsed.as_secs_f64() / 60.0),
            ),
        ],
        notes: o.notes.clone(),
    };
    std::fs::write(a.out.join("run-info.txt"), info.to_text())?;
    report::write_all(&a.out, &o.records, &info)?;
    eprintln!(
        "compare: {} rows in {:.1} min; wrote {}/README.md, results.csv and plots",
        o.records.len(),
        o.elapsed.as_secs_f64() / 60.0,
        a.out.display()
    );
    for n in &o.notes {
        eprintln!("compare: note: {n}");
    }
    Ok(())
}

/// The C peers of this checkout, built into the target folder of this program.
fn c_programs() -> anyhow::Result<CPrograms> {
    let me = std::env::current_exe().context("finding this program")?;
    Ok(CPrograms::for_exe(&me))
}

/// Run `cmd` with this program's standard streams; exit with its status.
fn run_and_exit(mut cmd: Command) -> anyhow::Result<()> {
    let st = cmd
        .status()
        .with_context(|| format!("starting {:?}", cmd.get_program()))?;
    std::process::exit(st.code().unwrap_or(1))
}

fn c_floor_cmd(args: &[String]) -> anyhow::Result<()> {
    let bin = c_programs()?.floor()?;
    if !args.is_empty() {
        anyhow::ensure!(args.len() == 3, "give MODE SIZE ITERS, or nothing");
        let mut cmd = Command::new(bin);
        cmd.args(args);
        return run_and_exit(cmd);
    }
    for (mode, size, iters) in hypercube_bench::FLOOR_SET {
        let st = Command::new(&bin)
            .args([mode.to_string(), size.to_string(), iters.to_string()])
            .status()?;
        anyhow::ensure!(
            st.success(),
            "{} {mode} {size} {iters} failed",
            bin.display()
        );
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    match Cli::parse().cmd {
        Cmd::Mpi {
            np,
            transport,
            args,
        } => {
            let bin = c_programs()?.mpi()?;
            let mut cmd = peers::mpirun(&bin, np, transport);
            cmd.args(args);
            run_and_exit(cmd)
        }
        Cmd::CFloor { args } => c_floor_cmd(&args),
        Cmd::Compare(a) => compare_cmd(a),
        Cmd::Cubenet(a) => hypercube_bench::cubenet::main(a, machine_line()),
        Cmd::Routing(a) => hypercube_bench::routing::main(a),
        Cmd::CubenetModel(a) => hypercube_bench::model_fit::run(a),
        Cmd::Report { out } => {
            let recs = compare::read_csv(&out.join("results.csv"))?;
            let info = std::fs::read_to_string(out.join("run-info.txt"))
                .map(|t| RunInfo::from_text(&t))
                .unwrap_or_default();
            report::write_all(&out, &recs, &info).context("writing the report")?;
            eprintln!("report: wrote {}/README.md and plots", out.display());
            Ok(())
        }
    }
}
