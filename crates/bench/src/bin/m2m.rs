//! `m2m`: one many-to-many exchange through `alltoallv`, timed — the node program of
//! `hypercube-bench routing` (its MPI twin is `crates/bench/c/m2m_mpi.c`, which reads the
//! same matrix and calls `MPI_Alltoallv`). Run it through the launcher:
//!
//! ```text
//! hcrun --dim 4 --link-rate 100mbit -- target/release/m2m sizes.txt -i 5 --alg planned
//! ```
//!
//! The matrix file: p lines of p byte counts (line = sender). Every iteration is a barrier,
//! then one timed `alltoallv` whose blocks are checked (their first and last bytes name
//! sender and receiver). Rank 0 prints one line,
//! `m2m slowest_us=… mean_us=… alg=… plan_busiest=… ecube_busiest=…`: the slowest rank's
//! mean time per call, the mean over ranks, and the bytes on the busiest link of the plan
//! a planned call follows and of e-cube routing.

use std::time::Instant;

use anyhow::{bail, ensure, Context, Result};
use bytes::Bytes;
use clap::Parser;
use hypercube::collectives::{Algorithm, Op};
use hypercube::topology::Plan;

/// One many-to-many exchange through alltoallv, timed (run through hcrun; rank 0 prints).
#[derive(Parser, Debug)]
#[command(name = "m2m", version)]
struct Args {
    /// The size matrix: p lines of p byte counts, line = sender
    matrix: std::path::PathBuf,
    /// Timed iterations
    #[arg(short = 'i', default_value_t = 5)]
    iters: u32,
    /// Warm-up iterations (not timed)
    #[arg(short = 'x', default_value_t = 1)]
    warmup: u32,
    /// alltoallv's algorithm: auto, pairwise, ecube or planned
    #[arg(short = 'a', long = "alg", default_value = "auto")]
    alg: String,
}

/// The matrix of a file: p lines of p numbers.
fn read_matrix(text: &str, p: usize) -> Result<Vec<u64>> {
    let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    ensure!(
        rows.len() == p,
        "the matrix has {} rows for {p} ranks",
        rows.len()
    );
    let mut m = Vec::with_capacity(p * p);
    for (i, r) in rows.iter().enumerate() {
        let v: Vec<u64> = r
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .with_context(|| format!("row {i} of the matrix"))?;
        ensure!(
            v.len() == p,
            "row {i} of the matrix has {} numbers, not {p}",
            v.len()
        );
        m.extend(v);
    }
    Ok(m)
}

/// The block from `src` to `dst` of `len` bytes: its first and last bytes name them.
fn block(src: usize, dst: usize, len: usize) -> Bytes {
    let mut v = vec![(src * 31 + dst) as u8; len];
    if len > 0 {
        v[0] = src as u8;
        v[len - 1] = dst as u8;
    }
    Bytes::from(v)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let node = hypercube::init()?;
    let p = node.numnodes() as usize;
    let me = node.mynode() as usize;
    let text = std::fs::read_to_string(&args.matrix)
        .with_context(|| format!("reading {}", args.matrix.display()))?;
    let sizes = read_matrix(&text, p)?;
    let alg: Algorithm = args.alg.parse()?;
    let cube = node.cube().with(alg);
    let blocks: Vec<Bytes> = (0..p)
        .map(|t| block(me, t, sizes[me * p + t] as usize))
        .collect();
    let mut total = 0.0;
    for i in 0..args.warmup + args.iters {
        node.cube().barrier()?;
        let t0 = Instant::now();
        let got = cube.alltoallv(&blocks)?;
        let dt = t0.elapsed().as_secs_f64();
        for (src, b) in got.iter().enumerate() {
            if *b != block(src, me, sizes[src * p + me] as usize) {
                bail!(
                    "rank {me}: the block from {src} is wrong ({} bytes)",
                    b.len()
                );
            }
        }
        if i >= args.warmup {
            total += dt;
        }
    }
    let mean_us = total / f64::from(args.iters.max(1)) * 1e6;
    let slowest = node.cube().allreduce(&[mean_us], Op::Max)?[0];
    let sum = node.cube().allreduce(&[mean_us], Op::Sum)?[0];
    if me == 0 {
        let plan = node.cube().with(alg).alltoallv_plan(&sizes);
        let busiest = plan.as_ref().map_or(0, Plan::busiest);
        let ecube = Plan::ecube(node.cubedim(), &sizes).map_or(0, |e| e.busiest());
        println!(
            "m2m slowest_us={slowest:.1} mean_us={:.1} alg={} plan_busiest={busiest} \
             ecube_busiest={ecube}",
            sum / p as f64,
            args.alg
        );
    }
    node.finalize()?;
    Ok(())
}
