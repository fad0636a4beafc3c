//! The cases measured (an operation forced to one algorithm, at a size), and the raw rows
//! the measurements are kept as.

use crate::Bench;
use anyhow::{bail, Context};
use hypercube::collectives::Algorithm;
use hypercube::transport::Forwarding;

use super::grama::critical_path;

/// One operation to measure: a benchmark, the algorithm forced (`osu --alg`) and the
/// routing regime of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// The `osu` benchmark.
    pub bench: Bench,
    /// The algorithm's `--alg` name.
    pub alg: &'static str,
    /// `HYPERCUBE_FORWARDING` of the run.
    pub forwarding: Forwarding,
    /// Run with every message eager ([`EAGER_ENV`]): no rendezvous handshake, whose
    /// clear-to-send waits behind the node's own outgoing data on a shaped link.
    pub eager: bool,
}

/// The environment of an eager run: an eager limit above every message of the runs
/// (16 MiB) and an eager window (bytes in flight per receiver) to match.
pub const EAGER_ENV: [(&str, &str); 2] = [
    ("HYPERCUBE_EAGER_LIMIT", "16777216"),
    ("HYPERCUBE_EAGER_WINDOW", "67108864"),
];

/// The transport's default eager limit (`Tuning::default().eager_limit`): messages up to
/// it are eager anyway, so an eager run of a SIZE whose messages all fit measures nothing
/// new.
pub fn default_eager_limit() -> usize {
    hypercube::transport::Tuning::default().eager_limit
}

impl Case {
    /// The algorithm.
    pub fn algorithm(&self) -> Algorithm {
        self.alg.parse().unwrap_or(Algorithm::Auto)
    }

    /// Whether a run at SIZE `s` on a `dim`-cube adds anything: an eager case only when
    /// some message of its critical path is above the default eager limit.
    pub fn worth_measuring(&self, dim: u32, s: u64) -> bool {
        !self.eager
            || critical_path(self.bench, self.algorithm(), dim, s as f64)
                .is_some_and(|p| p.iter().any(|x| x.bytes > default_eager_limit() as f64))
    }

    /// The chapter 4 name of the operation.
    pub fn operation(&self) -> &'static str {
        match self.bench {
            Bench::Bcast => "one-to-all broadcast",
            Bench::Reduce => "all-to-one reduction",
            Bench::Allreduce => "all-reduce",
            Bench::Allgather => "all-to-all broadcast",
            Bench::ReduceScatter => "all-to-all reduction",
            Bench::Scatter => "scatter",
            Bench::Gather => "gather",
            Bench::Alltoall => "all-to-all personalized",
            Bench::Scan => "prefix sum",
            Bench::Shift => "circular 1-shift",
            _ => "other",
        }
    }

    /// The book's equation for the algorithm.
    pub fn equation(&self) -> &'static str {
        match (self.bench, self.alg) {
            (Bench::Bcast | Bench::Reduce, _) => "4.1",
            (Bench::Allreduce, _) => "4.5",
            (Bench::Allgather, _) => "4.4",
            (Bench::ReduceScatter, _) => "Alg. 4.8",
            (Bench::Scatter | Bench::Gather, _) => "4.6",
            (Bench::Alltoall, "store-forward") => "4.9",
            (Bench::Alltoall, _) => "4.10",
            (Bench::Scan, _) => "Alg. 4.9",
            (Bench::Shift, _) => "4.12",
            _ => "",
        }
    }
}

/// The operations of chapter 4 with their hypercube algorithms; the two that route over
/// several links (pairwise all-to-all, e-cube shift) in both regimes; and again, eager
/// ([`Case::eager`]), those whose links carry data both ways at once.
pub fn cases() -> Vec<Case> {
    let ct = Forwarding::CutThrough;
    let sf = Forwarding::StoreAndForward;
    let c = |bench, alg, forwarding| Case {
        bench,
        alg,
        forwarding,
        eager: false,
    };
    let e = |bench, alg, forwarding| Case {
        bench,
        alg,
        forwarding,
        eager: true,
    };
    vec![
        c(Bench::Bcast, "hypercube", ct),
        c(Bench::Reduce, "hypercube", ct),
        c(Bench::Allreduce, "hypercube", ct),
        c(Bench::Allgather, "hypercube", ct),
        c(Bench::ReduceScatter, "hypercube", ct),
        c(Bench::Scatter, "hypercube", ct),
        c(Bench::Gather, "hypercube", ct),
        c(Bench::Alltoall, "store-forward", ct),
        c(Bench::Alltoall, "pairwise", ct),
        c(Bench::Alltoall, "pairwise", sf),
        c(Bench::Scan, "hypercube", ct),
        c(Bench::Shift, "ecube", ct),
        c(Bench::Shift, "ecube", sf),
        // The algorithms whose links carry data both ways at once, without the rendezvous.
        e(Bench::Allreduce, "hypercube", ct),
        e(Bench::Allgather, "hypercube", ct),
        e(Bench::ReduceScatter, "hypercube", ct),
        e(Bench::Alltoall, "store-forward", ct),
        e(Bench::Alltoall, "pairwise", ct),
        e(Bench::Alltoall, "pairwise", sf),
        e(Bench::Scan, "hypercube", ct),
        e(Bench::Shift, "ecube", ct),
        e(Bench::Shift, "ecube", sf),
    ]
}

/// One measured value (a row of the raw CSV): a ping-pong (`bench = latency`, `hops`) or a
/// collective (`alg`, the mean and slowest rank).
#[derive(Clone, Debug, PartialEq)]
pub struct Raw {
    /// Cube dimension of the run.
    pub dim: u32,
    /// Link rate as given to hcrun.
    pub rate: String,
    /// Routing regime of the run.
    pub forwarding: Forwarding,
    /// `osu` benchmark.
    pub bench: Bench,
    /// Algorithm forced (`-` for latency).
    pub alg: String,
    /// Links between the ping-pong's ranks (0 for collectives).
    pub hops: u32,
    /// SIZE in bytes.
    pub size: u64,
    /// Mean time in µs (ping-pong: half the round trip).
    pub avg_us: f64,
    /// Slowest rank's mean time in µs (ping-pong: the same as `avg_us`).
    pub max_us: f64,
    /// Every message eager ([`Case::eager`]).
    pub eager: bool,
}

/// The header of the raw CSV.
pub const RAW_HEADER: &str = "dim,rate,forwarding,bench,alg,hops,size,avg_us,max_us,eager";

impl Raw {
    /// One CSV line.
    pub fn to_csv(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{:.3},{:.3},{}",
            self.dim,
            self.rate,
            self.forwarding,
            self.bench,
            self.alg,
            self.hops,
            self.size,
            self.avg_us,
            self.max_us,
            u8::from(self.eager)
        )
    }

    /// Parse a line of [`Raw::to_csv`] (without the last field: not eager).
    pub fn from_csv(line: &str) -> anyhow::Result<Raw> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 9 && f.len() != 10 {
            bail!("expected 10 fields in {line:?}");
        }
        Ok(Raw {
            dim: f[0].parse()?,
            rate: f[1].to_string(),
            forwarding: f[2].parse().map_err(|e| anyhow::anyhow!("{e}"))?,
            bench: f[3].parse()?,
            alg: f[4].to_string(),
            hops: f[5].parse()?,
            size: f[6].parse()?,
            avg_us: f[7].parse()?,
            max_us: f[8].parse()?,
            eager: f.get(9).is_some_and(|x| x.trim() == "1"),
        })
    }
}

/// A link rate as `tc` writes it (`100mbit`, `1gbit`, `500kbit`, `12.5mbps`) in bytes per
/// second.
pub fn parse_rate(s: &str) -> anyhow::Result<f64> {
    let t = s.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().with_context(|| format!("rate {s:?}"))?;
    let bits = match unit {
        "" | "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "bps" => 8.0,
        "kbps" => 8e3,
        "mbps" => 8e6,
        "gbps" => 8e9,
        _ => bail!("rate {s:?}: use bit, kbit, mbit, gbit, bps, kbps, mbps or gbps"),
    };
    Ok(v * bits / 8.0)
}

/// hcrun's default token-bucket depth for a rate of `bytes_per_sec`: one millisecond of
/// traffic, at least 96 KiB (launcher/src/cubenet/rate.rs).
pub fn default_burst(bytes_per_sec: f64) -> u64 {
    ((bytes_per_sec / 1000.0) as u64).max(96 * 1024)
}

/// The slowest rank's time from an `osu --per-rank` output (the `# per rank:` line of the
/// row), in µs.
pub fn slowest_rank(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("# per rank:"))
        .map(|rest| {
            rest.split_whitespace()
                .filter_map(|x| x.parse::<f64>().ok())
                .fold(f64::NAN, f64::max)
        })
        .filter(|x| x.is_finite())
}
