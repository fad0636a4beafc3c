//! The plan of runs: which benchmarks, dimensions, rates and sizes, and how many
//! iterations each run takes within its time budget.

use anyhow::{bail, Context, Result};

use crate::Bench;

use super::args::Args;

/// The OSU set run on the emulated network, in the order of the report: the benchmarks
/// Open MPI's peer also has ([`Bench::in_mpi`]) but the stream rate (`bw`, which every case
/// measures on its own first, [`STREAM_SIZE`]) and the shift; then the iPSC utilities,
/// ours only, each compared with Open MPI's run of the collective that does its job
/// ([`Bench::mpi_peer`]: the same size, in the same repetition).
pub fn benches() -> Vec<Bench> {
    Bench::ALL
        .into_iter()
        .filter(|b| b.mpi_peer().is_some() && !matches!(b, Bench::Bw | Bench::Shift))
        .collect()
}

/// The size of the one-hop stream measurement (`osu bw`: 64 such messages in flight).
pub const STREAM_SIZE: u64 = 65536;

/// A rate as tc reads it (`100mbit`, `1gbit`, `500kbit`, `2.8MBps`, `1000000bit`), in
/// bytes per second (tc's `k`, `m`, `g`, `t` are powers of 1000 for rates).
pub fn nominal_bytes_per_sec(rate: &str) -> Result<f64> {
    let s = rate.trim().to_ascii_lowercase();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .with_context(|| format!("rate {rate:?}: no number"))?;
    let (scale, bits) = match unit {
        "" | "bit" => (1.0, true),
        "kbit" => (1e3, true),
        "mbit" => (1e6, true),
        "gbit" => (1e9, true),
        "tbit" => (1e12, true),
        "bps" => (1.0, false),
        "kbps" => (1e3, false),
        "mbps" => (1e6, false),
        "gbps" => (1e9, false),
        "tbps" => (1e12, false),
        _ => bail!("rate {rate:?}: unknown unit {unit:?} (use bit, kbit, mbit, gbit, or bps, kbps, mbps, gbps)"),
    };
    let bps = v * scale / if bits { 8.0 } else { 1.0 };
    anyhow::ensure!(bps > 0.0, "rate {rate:?} is not positive");
    Ok(bps)
}

/// A rough estimate of one call's time (s) on a d-cube of `bps` links, to choose a run's
/// iterations: a start-up per step plus the bytes a simple algorithm moves over one link in
/// sequence (binomial tree d·m, recursive doubling or a linear root (p−1)·m, all-to-all
/// p·m — about twice its link bound).
pub fn estimate_secs(bench: Bench, dim: u32, m: u64, bps: f64) -> f64 {
    let d = f64::from(dim.max(1));
    let p = f64::from(1u32 << dim);
    let m = m as f64;
    let bytes = match bench {
        Bench::Latency => m,
        Bench::Bcast
        | Bench::Gsendw
        | Bench::Reduce
        | Bench::Gop
        | Bench::Scan
        | Bench::Allreduce => d * m,
        Bench::Alltoall => p * m,
        Bench::Barrier => 0.0,
        _ => (p - 1.0) * m,
    };
    let startup = if bench == Bench::Latency {
        20e-6
    } else {
        150e-6 * d
    };
    startup + bytes / bps
}

/// Measured calls and warm-up calls of a run: `budget_s` over [`estimate_secs`], within
/// `[min, max]`; warm-up a tenth of that, at least 1, at most OSU's defaults (100 up to
/// 8 KiB, 10 above), and at least 5 up to 8 KiB, where calls are cheap and the first ones
/// pay for connection set-up.
pub fn iterations(est_s: f64, budget_s: f64, min: u64, max: u64, size: u64) -> (u64, u64) {
    let n = (budget_s / est_s.max(1e-9)).round();
    let n = (n.min(max as f64) as u64).clamp(min.max(1), max.max(min).max(1));
    let w = if size <= 8192 {
        (n / 10).clamp(5.min(n).max(1), 100)
    } else {
        (n / 10).clamp(1, 10)
    };
    (n, w)
}

/// The most measured calls of a run of `bench`: `max`, ten times that for the ping-pong
/// (OSU's own default is 10 000 up to 8 KiB: 1 000 round trips of 8 B are 10 ms, which
/// one preemption on the shared cores distorts).
pub fn max_iters_of(bench: Bench, max: u64) -> u64 {
    if bench.is_p2p() {
        max.saturating_mul(10)
    } else {
        max
    }
}

/// The `-i` that makes `osu` and `osu_mpi` run `n` measured calls at `size` (both use a
/// tenth of `-i` above 8 KiB).
pub fn osu_iters_arg(n: u64, size: u64) -> u64 {
    if size > 8192 {
        n * 10
    } else {
        n
    }
}

/// What to run (the options after `--quick`).
#[derive(Clone, Debug)]
pub(super) struct Plan {
    pub(super) dims: Vec<u32>,
    pub(super) rates: Vec<String>,
    pub(super) benches: Vec<Bench>,
    pub(super) sizes: Vec<u64>,
    pub(super) reps: u32,
    pub(super) budget_s: f64,
    pub(super) min_iters: u64,
    pub(super) max_iters: u64,
}

impl Plan {
    pub(super) fn of(a: &Args) -> Result<Plan> {
        let mut p = Plan {
            dims: a.dims.clone(),
            rates: a.rates.clone(),
            benches: parse_benches(&a.benches)?,
            sizes: a.sizes.clone(),
            reps: a.reps.max(1),
            budget_s: a.budget_s,
            min_iters: a.min_iters.max(1),
            max_iters: a.max_iters.max(1),
        };
        if a.quick {
            p.dims = vec![3];
            p.benches = vec![
                Bench::Latency,
                Bench::Bcast,
                Bench::Allreduce,
                Bench::Alltoall,
                Bench::Barrier,
            ];
            p.sizes = vec![8, 65536];
            p.reps = 1;
            p.budget_s = 0.3;
            p.min_iters = 2;
        }
        anyhow::ensure!(!p.sizes.is_empty(), "--sizes must not be empty");
        for &d in &p.dims {
            anyhow::ensure!((1..=8).contains(&d), "--dims: {d} is not in 1..=8");
        }
        for r in &p.rates {
            nominal_bytes_per_sec(r)?;
        }
        Ok(p)
    }

    pub(super) fn sizes_of(&self, b: Bench) -> Vec<u64> {
        if b == Bench::Barrier {
            vec![0]
        } else {
            let mut v = self.sizes.clone();
            v.sort_unstable();
            v.dedup();
            v
        }
    }
}

pub(super) fn parse_benches(s: &str) -> Result<Vec<Bench>> {
    if s.trim() == "all" {
        return Ok(benches());
    }
    let v: Vec<Bench> = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(str::parse)
        .collect::<Result<_>>()?;
    for b in &v {
        anyhow::ensure!(
            benches().contains(b),
            "{b} is not in the OSU set run on the network"
        );
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The set the report was written for, in its order.
    #[test]
    fn the_osu_set_on_the_network() {
        let names: Vec<&str> = benches().into_iter().map(Bench::name).collect();
        assert_eq!(
            names.join(" "),
            "latency bcast reduce allreduce allgather reduce_scatter alltoall scatter gather \
             scan barrier gsendw gop gcat spgsnw"
        );
    }
}
