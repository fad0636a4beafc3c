//! The rows measured: one OSU figure of one run, as `results.csv` keeps it, and the
//! parsing of `osu --per-rank` output into them.

use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::osu;

/// The `impl` column: ours (`osu` through `hcrun --link-rate`).
pub const OURS: &str = "hypercube";

/// The `impl` column: Open MPI (`osu_mpi` under `mpirun.openmpi` on `cubenet`).
pub const OMPI: &str = "ompi";

/// One measured figure: a row of `results.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Cube dimension.
    pub dim: u32,
    /// Link rate as given (`100mbit`).
    pub rate: String,
    /// [`OURS`] or [`OMPI`].
    pub imp: String,
    /// Benchmark name ([`crate::Bench::name`]).
    pub bench: String,
    /// Message size in bytes (OSU's SIZE).
    pub size: u64,
    /// Repetition, from 1.
    pub rep: u32,
    /// The OSU figure: per-rank mean time of one call averaged over ranks (µs); for
    /// latency half the round trip (µs); for bw, MB/s.
    pub avg: f64,
    /// The slowest rank's mean time of one call (µs); = `avg` where there are no per-rank
    /// times (latency, bw).
    pub max: f64,
    /// `us` or `MB/s`.
    pub unit: String,
    /// Measured calls (warm-up excluded).
    pub iters: u64,
    /// The measured one-hop stream rate of this network, bytes/s (the bound's rate).
    pub link_bps: f64,
    /// The link bound at `link_bps` (µs), where the benchmark has one.
    pub bound_us: Option<f64>,
    /// Every rank's mean time (µs), in rank order (empty when not printed).
    pub per_rank: Vec<f64>,
    /// Rank 0's wall time per timed call *and the barrier after it* (µs): the rate at
    /// which a program calling the operation back to back gets through calls, which the
    /// OSU figure (the call alone) splits from the barrier differently per runtime.
    /// `None` where not printed (point-to-point runs, runs before it was measured).
    pub loop_us: Option<f64>,
}

/// The CSV header of `results.csv` (files without the last field still read).
pub const CSV_HEADER: &str =
    "dim,rate,impl,bench,size,rep,avg,max,unit,iters,link_bytes_per_s,bound_us,per_rank,loop_us";

impl Row {
    /// One CSV line (no newline); `per_rank` is `;`-separated, `bound_us` empty if none.
    pub fn to_csv(&self) -> String {
        let per: Vec<String> = self.per_rank.iter().map(|v| format!("{v:.2}")).collect();
        format!(
            "{},{},{},{},{},{},{:.3},{:.3},{},{},{:.0},{},{},{}",
            self.dim,
            self.rate,
            self.imp,
            self.bench,
            self.size,
            self.rep,
            self.avg,
            self.max,
            self.unit,
            self.iters,
            self.link_bps,
            self.bound_us.map_or(String::new(), |b| format!("{b:.3}")),
            per.join(";"),
            self.loop_us.map_or(String::new(), |l| format!("{l:.2}"))
        )
    }

    /// Parse a line written by [`Row::to_csv`].
    pub fn from_csv(line: &str) -> Result<Row> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 13 && f.len() != 14 {
            bail!("expected 13 or 14 fields in {line:?}");
        }
        Ok(Row {
            dim: f[0].parse()?,
            rate: f[1].to_string(),
            imp: f[2].to_string(),
            bench: f[3].to_string(),
            size: f[4].parse()?,
            rep: f[5].parse()?,
            avg: f[6].parse()?,
            max: f[7].parse()?,
            unit: f[8].to_string(),
            iters: f[9].parse()?,
            link_bps: f[10].parse()?,
            bound_us: if f[11].is_empty() {
                None
            } else {
                Some(f[11].parse()?)
            },
            per_rank: f[12]
                .split(';')
                .filter(|x| !x.is_empty())
                .map(str::parse)
                .collect::<Result<_, _>>()?,
            loop_us: match f.get(13) {
                Some(l) if !l.is_empty() => Some(l.parse()?),
                _ => None,
            },
        })
    }
}

/// Read `results.csv`.
pub fn read_csv(path: &Path) -> Result<Vec<Row>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(Row::from_csv)
        .collect()
}

/// Write `results.csv`.
pub fn write_csv(path: &Path, rows: &[Row]) -> Result<()> {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        s.push_str(&r.to_csv());
        s.push('\n');
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

/// One row of an OSU-format output with the per-rank line that follows it, if any.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// SIZE.
    pub size: u64,
    /// The printed figure.
    pub value: f64,
    /// The `# per rank:` line after it (ours: `osu --per-rank`; `osu_mpi --per-rank`).
    pub per_rank: Vec<f64>,
    /// The `# loop:` line after it: rank 0's time per call and barrier ([`Row::loop_us`]).
    pub loop_us: Option<f64>,
}

impl Measured {
    /// The slowest rank's time: the largest per-rank mean, or the figure without them.
    pub fn slowest(&self) -> f64 {
        self.per_rank
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
            .unwrap_or(self.value)
    }
}

/// Parse a run's output: the rows [`osu::parse_table`] recognises, each with the
/// `# per rank: T0 T1 ...` line printed after it (other `#` lines, such as ours'
/// `# per rank, barrier exit ...`, and launcher chatter are ignored), and the `# loop: T`
/// line after that.
pub fn parse_output(text: &str) -> Vec<Measured> {
    let mut out: Vec<Measured> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("# loop:") {
            if let Some(last) = out.last_mut() {
                last.loop_us = rest.trim().parse().ok();
            }
            continue;
        }
        if let Some(rest) = line.trim().strip_prefix("# per rank:") {
            if let Some(last) = out.last_mut() {
                last.per_rank = rest
                    .split_whitespace()
                    .filter_map(|x| x.parse().ok())
                    .collect();
            }
            continue;
        }
        for (size, value) in osu::parse_table(line).rows {
            out.push(Measured {
                size,
                value,
                per_rank: Vec::new(),
                loop_us: None,
            });
        }
    }
    out
}
