//! The measurements: `osu` through `hcrun --link-rate`, one run at a time under the
//! benchmarks' lock; ping-pongs for the fit, then every case.

use crate::compare::run_cmd;
use crate::lock::BenchLock;
use crate::{osu, Bench};
use anyhow::{bail, Context};
use hypercube::transport::Forwarding;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::args::ModelArgs;
use super::cases::{cases, slowest_rank, Case, Raw, EAGER_ENV, RAW_HEADER};
use super::fits::pingpongs;
use super::page::size_text;

/// Runs `osu` through `hcrun` on the emulated cube, one run at a time under [`BenchLock`].
#[derive(Clone, Debug)]
pub struct Runner {
    /// The launcher.
    pub hcrun: PathBuf,
    /// The node program.
    pub osu: PathBuf,
    /// Link rate, as hcrun takes it.
    pub rate: String,
    /// Deadline of one run (the wait for the lock not included).
    pub timeout: Duration,
}

impl Runner {
    /// `osu ARGS` on a `dim`-cube in the regime `forwarding` with the environment `env`:
    /// its standard output.
    pub fn osu(
        &self,
        dim: u32,
        forwarding: Forwarding,
        env: &[(&str, &str)],
        args: &[String],
    ) -> anyhow::Result<String> {
        let mut cmd = Command::new(&self.hcrun);
        cmd.args([
            "--dim",
            &dim.to_string(),
            "--link-rate",
            &self.rate,
            "--no-prefix",
        ])
        .arg("--")
        .arg(&self.osu)
        .args(args)
        .env(Forwarding::ENV, forwarding.name())
        .envs(env.iter().copied());
        let _lock = BenchLock::take(|| Ok(()))?;
        let r = run_cmd(&mut cmd, self.timeout)?;
        if !r.ok() {
            bail!(
                "hcrun --dim {dim} --link-rate {} osu {} ({forwarding}) failed{}: {}",
                self.rate,
                args.join(" "),
                if r.timed_out { " (timed out)" } else { "" },
                r.stderr
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
        }
        Ok(r.stdout)
    }
}

/// The ping-pongs of the fit on a `dim`-cube: ranks 0 and `2^h − 1` for h = 1 … dim, sizes
/// `lo..=hi` doubling; two runs per hop count: up to 128 B with `-i 10·iters -x 100`
/// (start-up: many round trips), from 256 B with `-i iters -x 5` (a tenth above 8 KiB).
pub fn measure_pingpongs(
    runner: &Runner,
    dim: u32,
    forwarding: Forwarding,
    (lo, hi): (u64, u64),
    iters: u64,
) -> anyhow::Result<Vec<Raw>> {
    let mut out = Vec::new();
    let split = 128u64;
    let mut runs = Vec::new();
    if lo <= split {
        runs.push((lo, hi.min(split), iters * 10, 100));
    }
    if hi > split {
        runs.push((lo.max(2 * split), hi, iters, 5));
    }
    for h in 1..=dim {
        let peer = (1u32 << h) - 1;
        let mut rows = Vec::new();
        let t0 = Instant::now();
        for &(a, b, i, x) in &runs {
            let args: Vec<String> = [
                "latency".to_string(),
                "-m".into(),
                format!("{a}:{b}"),
                "-i".into(),
                i.to_string(),
                "-x".into(),
                x.to_string(),
                "--peer".into(),
                peer.to_string(),
            ]
            .to_vec();
            let text = runner.osu(dim, forwarding, &[], &args)?;
            rows.extend(osu::parse_table(&text).rows);
        }
        eprintln!(
            "cubenet-model: d={dim} {forwarding} ping-pong over {h} link(s): {} sizes in {:.1} s",
            rows.len(),
            t0.elapsed().as_secs_f64()
        );
        for (size, us) in rows {
            out.push(Raw {
                dim,
                rate: runner.rate.clone(),
                forwarding,
                bench: Bench::Latency,
                alg: "-".into(),
                hops: h,
                size,
                avg_us: us,
                max_us: us,
                eager: false,
            });
        }
    }
    Ok(out)
}

/// `-i` and `-x` for a collective at SIZE `s`: many calls of small sizes, few of 1 MiB
/// (`osu` runs a tenth of `-i` above 8 KiB).
pub(super) fn collective_iters(s: u64) -> (u64, u64) {
    if s <= 8192 {
        (100, 10)
    } else if s < 512 * 1024 {
        (200, 3)
    } else {
        (30, 1)
    }
}

/// One collective case at one size: the mean and slowest rank (µs).
pub fn measure_case(runner: &Runner, dim: u32, case: &Case, s: u64) -> anyhow::Result<Raw> {
    let (i, x) = collective_iters(s);
    let args: Vec<String> = [
        case.bench.name().to_string(),
        "-m".into(),
        format!("{s}:{s}"),
        "-i".into(),
        i.to_string(),
        "-x".into(),
        x.to_string(),
        "--alg".into(),
        case.alg.into(),
        "--per-rank".into(),
    ]
    .to_vec();
    let env: &[(&str, &str)] = if case.eager { &EAGER_ENV } else { &[] };
    let text = runner.osu(dim, case.forwarding, env, &args)?;
    let t = osu::parse_table(&text);
    let (size, avg) = *t.rows.first().context("osu printed no row")?;
    let max = slowest_rank(&text).context("osu printed no per-rank line")?;
    Ok(Raw {
        dim,
        rate: runner.rate.clone(),
        forwarding: case.forwarding,
        bench: case.bench,
        alg: case.alg.into(),
        hops: 0,
        size,
        avg_us: avg,
        max_us: max,
        eager: case.eager,
    })
}

/// The raw measurements written by an earlier run.
pub fn read_raw(path: &Path) -> anyhow::Result<Vec<Raw>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(Raw::from_csv)
        .collect()
}

/// Every measurement of the command; writes the raw CSV as it goes.
pub(super) fn measure_all(a: &ModelArgs, notes: &mut Vec<String>) -> anyhow::Result<Vec<Raw>> {
    let me = std::env::current_exe().context("finding this program")?;
    let dir = me.parent().context("this program has no folder")?;
    let (hcrun, osu) = (dir.join("hcrun"), dir.join("osu"));
    for p in [&hcrun, &osu] {
        if !p.is_file() {
            bail!(
                "{} is missing; build first: cargo build --release -p launcher -p hypercube-bench",
                p.display()
            );
        }
    }
    let mut raw = if a.resume && a.raw.is_file() {
        read_raw(&a.raw)?
    } else {
        Vec::new()
    };
    let save = |raw: &[Raw]| -> anyhow::Result<()> {
        if let Some(d) = a.raw.parent() {
            std::fs::create_dir_all(d)?;
        }
        let mut s = format!("{RAW_HEADER}\n");
        for r in raw {
            s.push_str(&r.to_csv());
            s.push('\n');
        }
        std::fs::write(&a.raw, s).with_context(|| format!("writing {}", a.raw.display()))
    };
    let mut rates = vec![a.rate.clone()];
    rates.extend(a.extra_fit_rates.iter().cloned());
    for rate in &rates {
        let runner = Runner {
            hcrun: hcrun.clone(),
            osu: osu.clone(),
            rate: rate.clone(),
            timeout: Duration::from_secs(a.timeout_s.max(1)),
        };
        for &d in &a.dims {
            for f in [Forwarding::CutThrough, Forwarding::StoreAndForward] {
                if !pingpongs(&raw, rate, d, f).is_empty() {
                    continue;
                }
                match measure_pingpongs(&runner, d, f, a.pingpong_range, a.pingpong_iters) {
                    Ok(v) => raw.extend(v),
                    Err(e) => notes.push(format!("ping-pongs d = {d}, {f}, {rate}: {e:#}")),
                }
                save(&raw)?;
            }
        }
    }
    if a.fit_only {
        return Ok(raw);
    }
    let runner = Runner {
        hcrun,
        osu,
        rate: a.rate.clone(),
        timeout: Duration::from_secs(a.timeout_s.max(1)),
    };
    for &d in &a.dims {
        for case in cases() {
            for &s in &a.sizes {
                if !case.worth_measuring(d, s)
                    || raw.iter().any(|r| {
                        r.rate == a.rate
                            && r.dim == d
                            && r.size == s
                            && r.bench == case.bench
                            && r.alg == case.alg
                            && r.forwarding == case.forwarding
                            && r.eager == case.eager
                    })
                {
                    continue;
                }
                let t0 = Instant::now();
                match measure_case(&runner, d, &case, s) {
                    Ok(r) => {
                        eprintln!(
                            "cubenet-model: d={d} {} {} ({}{}) {}: mean {:.0} µs, slowest {:.0} µs ({:.1} s)",
                            case.bench,
                            case.alg,
                            case.forwarding,
                            if case.eager { ", eager" } else { "" },
                            size_text(s),
                            r.avg_us,
                            r.max_us,
                            t0.elapsed().as_secs_f64()
                        );
                        raw.push(r);
                    }
                    Err(e) => {
                        eprintln!("cubenet-model: {e:#}");
                        notes.push(format!("{e:#}"));
                    }
                }
                save(&raw)?;
            }
        }
    }
    Ok(raw)
}
