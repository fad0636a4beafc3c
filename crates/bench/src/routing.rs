//! `hypercube-bench routing`: many-to-many exchanges on the emulated hypercube network,
//! planned routes against e-cube and against Open MPI's `MPI_Alltoallv` over the kernel's
//! e-cube routes, beside the plan's predicted time (its busiest link's bytes over the link
//! rate). Writes `docs/perf/routing.md` and `docs/perf/routing/results.csv`.
//!
//! Workloads, each a p × p size matrix written to a file that both runtimes read (`m2m`,
//! `crates/bench/c/m2m_mpi.c`):
//! - `transpose`, `bitrev`: one block of `--bytes` from every node to its image under the
//!   permutation (`hypercube_topology::plan::patterns`);
//! - `table 5.4a` …: the thesis's random many-to-many rows (Bhatt, Tables 5.4–5.6; the
//!   appendix's generator, seed 1), packets × bytes per packet, the bytes per packet chosen
//!   so that e-cube's busiest link carries about one second's worth;
//! - `dense`: the complete exchange, `--bytes` / 4 per block.
//!
//! Runs alternate per workload (ours e-cube, ours automatic, Open MPI), `--reps` times; the
//! report shows the median of the slowest rank's mean time per call.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use hypercube::topology::plan::patterns::{bit_reversal, permutation, transpose};
use hypercube::topology::Plan;
use hypercube_sim::tables::TABLES;
use hypercube_sim::workload::Generator;

use crate::compare::run_cmd;
use crate::cubenet::Network;
use crate::lock::BenchLock;
use crate::peers::CPrograms;

/// Options of `hypercube-bench routing`.
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Networks as DIM:RATE (hcrun --link-rate), e.g. 4:100mbit,6:20mbit
    #[arg(long, value_delimiter = ',', default_value = "4:100mbit,6:20mbit")]
    pub networks: Vec<String>,
    /// Bytes per block of the permutations (and 4 × the dense exchange's block)
    #[arg(long, default_value_t = 256 << 10)]
    pub bytes: u64,
    /// Repetitions of every run (the report shows medians)
    #[arg(long, default_value_t = 3)]
    pub reps: u32,
    /// Timed iterations per run
    #[arg(short = 'i', long, default_value_t = 3)]
    pub iters: u32,
    /// Do not run Open MPI
    #[arg(long)]
    pub no_mpi: bool,
    /// Only the workloads whose names start with one of these (e.g. transpose,dense)
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Output folder (routing.md and routing/results.csv go there)
    #[arg(long, default_value_os_t = crate::cubenet::default_out())]
    pub out: PathBuf,
}

/// One workload on one network.
struct Workload {
    name: String,
    dim: u32,
    sizes: Vec<u64>,
}

/// The TCP payload share of a shaped link's rate (1448 of 1514 bytes per full frame; the
/// stream rate measured in docs/perf/cubenet.md is 95.6% of nominal).
const PAYLOAD_SHARE: f64 = 1448.0 / 1514.0;

fn workloads(dim: u32, rate_bps: f64, bytes: u64) -> Vec<Workload> {
    let p = 1usize << dim;
    let mut v = vec![
        Workload {
            name: "transpose".into(),
            dim,
            sizes: permutation(dim, bytes, |n| transpose(n, dim)),
        },
        Workload {
            name: "bitrev".into(),
            dim,
            sizes: permutation(dim, bytes, |n| bit_reversal(n, dim)),
        },
    ];
    for t in TABLES
        .iter()
        .filter(|t| matches!(t.id, "5.4" | "5.5" | "5.6"))
    {
        for row in t.rows.iter().filter(|r| r.params.n == dim) {
            let w = hypercube_sim::experiment::workload(&row.params, Generator::Appendix, 1);
            let mut counts = vec![0u64; p * p];
            for &(s, d) in &w.packets {
                counts[s as usize * p + d as usize] += 1;
            }
            let busiest = Plan::ecube(dim, &counts).map_or(1, |e| e.busiest().max(1));
            let per_packet = (rate_bps * PAYLOAD_SHARE / busiest as f64) as u64;
            v.push(Workload {
                name: format!("table {}{}", t.id, row.label),
                dim,
                sizes: counts.iter().map(|c| c * per_packet).collect(),
            });
        }
    }
    let mut dense = vec![bytes / 4; p * p];
    for i in 0..p {
        dense[i * p + i] = 0;
    }
    v.push(Workload {
        name: "dense".into(),
        dim,
        sizes: dense,
    });
    v
}

/// The value of `key=` in the `m2m` line of a run's output.
fn field(stdout: &str, key: &str) -> Option<f64> {
    let line = stdout.lines().find(|l| l.starts_with("m2m "))?;
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    v.sort_by(f64::total_cmp);
    (!v.is_empty()).then(|| crate::report::median_of_sorted(&v))
}

/// Run `hypercube-bench routing`.
pub fn main(a: Args) -> Result<()> {
    let me = std::env::current_exe().context("finding this program")?;
    let dir = me
        .parent()
        .context("this program has no folder")?
        .to_path_buf();
    let (hcrun, m2m, cubenet) = (dir.join("hcrun"), dir.join("m2m"), dir.join("cubenet"));
    for p in [&hcrun, &m2m, &cubenet] {
        if !p.is_file() {
            bail!(
                "{} is missing; build first: cargo build --release -p launcher -p hypercube-bench",
                p.display()
            );
        }
    }
    let mpi = if a.no_mpi {
        None
    } else {
        Some(CPrograms::for_exe(&me).m2m_mpi()?)
    };
    let work = dir.join("../routing-bench");
    std::fs::create_dir_all(&work)?;
    let mut csv = String::from("network,workload,impl,rep,slowest_us\n");
    let mut rows = Vec::new();
    for spec in &a.networks {
        let (d, rate) = spec
            .split_once(':')
            .with_context(|| format!("network {spec:?}: write DIM:RATE, e.g. 4:100mbit"))?;
        let dim: u32 = d.parse().with_context(|| format!("network {spec:?}"))?;
        let rate_bps = crate::cubenet::nominal_bytes_per_sec(rate)?;
        let net = match &mpi {
            Some(_) => Some(Network::up(&cubenet, "hcroute", dim, rate, None, &work)?),
            None => None,
        };
        let chosen = workloads(dim, rate_bps, a.bytes)
            .into_iter()
            .filter(|w| a.only.is_empty() || a.only.iter().any(|o| w.name.starts_with(o.as_str())));
        for w in chosen {
            let p = 1usize << dim;
            let file = work.join(format!("{}-d{dim}.txt", w.name.replace(' ', "-")));
            let text: String = w
                .sizes
                .chunks(p)
                .map(|r| r.iter().map(u64::to_string).collect::<Vec<_>>().join(" ") + "\n")
                .collect();
            std::fs::write(&file, text)?;
            let mut times: Vec<(&str, Vec<f64>)> = vec![("ecube", vec![]), ("auto", vec![])];
            // The busiest link of the plan the runtime follows (printed by `m2m`).
            let mut plan_busiest = 0;
            if net.is_some() {
                times.push(("mpi", vec![]));
            }
            for rep in 0..a.reps {
                for (imp, t) in times.iter_mut() {
                    let mut cmd = if *imp == "mpi" {
                        let (Some(net), Some(bin)) = (&net, &mpi) else {
                            continue;
                        };
                        let mut c = net.mpirun(net.nodes);
                        c.arg(bin);
                        c
                    } else {
                        let mut c = std::process::Command::new(&hcrun);
                        c.args(["--dim", d, "--link-rate", rate, "--no-prefix"])
                            .args(["--timeout-s", "200", "--"])
                            .arg(&m2m)
                            .args(["--alg", imp]);
                        c
                    };
                    cmd.arg(&file).args(["-i", &a.iters.to_string(), "-x", "1"]);
                    let r = {
                        let _lock = BenchLock::take(|| Ok(()))?;
                        run_cmd(&mut cmd, Duration::from_secs(240))?
                    };
                    let got = field(&r.stdout, "slowest_us");
                    if *imp == "auto" {
                        if let Some(b) = field(&r.stdout, "plan_busiest") {
                            plan_busiest = b as u64;
                        }
                    }
                    eprintln!(
                        "routing-bench: d={dim} {rate} {:<12} {imp:<6} rep {rep}: {}",
                        w.name,
                        got.map_or_else(
                            || format!("failed: {}", r.stderr.lines().last().unwrap_or("")),
                            |us| format!("{:.1} ms", us / 1e3)
                        )
                    );
                    if let Some(us) = got {
                        t.push(us);
                        writeln!(csv, "{spec},{},{imp},{rep},{us:.1}", w.name)?;
                    }
                }
            }
            rows.push(Row::new(spec, rate_bps, &w, plan_busiest, times));
        }
        drop(net);
    }
    std::fs::create_dir_all(a.out.join("routing"))?;
    std::fs::write(a.out.join("routing/results.csv"), csv)?;
    write_page(&a.out.join("routing.md"), &rows)?;
    eprintln!(
        "routing-bench: wrote {}",
        a.out.join("routing.md").display()
    );
    Ok(())
}

/// One line of the report.
struct Row {
    network: String,
    workload: String,
    ecube_busiest: u64,
    plan_busiest: u64,
    predicted_ms: f64,
    ecube_ms: Option<f64>,
    auto_ms: Option<f64>,
    mpi_ms: Option<f64>,
}

impl Row {
    fn new(
        spec: &str,
        rate_bps: f64,
        w: &Workload,
        busiest: u64,
        times: Vec<(&str, Vec<f64>)>,
    ) -> Row {
        let get = |name: &str| {
            times
                .iter()
                .find(|(n, _)| *n == name)
                .and_then(|(_, v)| median(v.clone()))
                .map(|us| us / 1e3)
        };
        let ecube = Plan::ecube(w.dim, &w.sizes).map_or(0, |e| e.busiest());
        Row {
            network: spec.to_string(),
            workload: w.name.clone(),
            ecube_busiest: ecube,
            plan_busiest: busiest,
            predicted_ms: busiest as f64 / (rate_bps * PAYLOAD_SHARE) * 1e3,
            ecube_ms: get("ecube"),
            auto_ms: get("auto"),
            mpi_ms: get("mpi"),
        }
    }
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |x| format!("{x:.1}"))
}

fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => format!("{:.2}", a / b),
        _ => "—".into(),
    }
}

fn write_page(path: &Path, rows: &[Row]) -> Result<()> {
    let mut s = String::new();
    writeln!(
        s,
        "# Planned routes against e-cube on the emulated hypercube\n"
    )?;
    writeln!(
        s,
        "Generated by `hypercube-bench routing` (run as root after `cargo build --release -p \
         launcher -p hypercube-bench`; {}); do not edit by hand. Every workload is a p × p \
         size matrix run through `alltoallv` by `m2m` (ours, `hcrun --dim D --link-rate \
         RATE`) and `MPI_Alltoallv` by `crates/bench/c/m2m_mpi.c` (Open MPI over `cubenet \
         up --kernel-routes`: the kernel forwards along e-cube routes over the same shaped \
         links). Times: median over repetitions of the slowest rank's mean time per call. \
         *ours e-cube*: `--alg ecube`, every block at once along its e-cube route; *ours \
         auto*: the default on wires, planned routes (balanced when predicted faster, else \
         e-cube); *predicted*: the plan's busiest link bytes over the link's payload rate \
         (95.6% of nominal). Busiest-link bytes: e-cube's and the plan's.\n",
        crate::cubenet::commit_line(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
    )?;
    writeln!(
        s,
        "| network | workload | e-cube busiest | plan busiest | predicted ms | ours e-cube ms \
         | ours auto ms | Open MPI ms | auto / e-cube | auto / MPI | auto / predicted |"
    )?;
    writeln!(s, "|---|---|---|---|---|---|---|---|---|---|---|")?;
    for r in rows {
        writeln!(
            s,
            "| {} | {} | {} | {} | {:.1} | {} | {} | {} | {} | {} | {} |",
            r.network,
            r.workload,
            r.ecube_busiest,
            r.plan_busiest,
            r.predicted_ms,
            ms(r.ecube_ms),
            ms(r.auto_ms),
            ms(r.mpi_ms),
            ratio(r.auto_ms, r.ecube_ms),
            ratio(r.auto_ms, r.mpi_ms),
            ratio(r.auto_ms, Some(r.predicted_ms)),
        )?;
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
