//! The comparison's results: one [`Record`] per printed row, `results.csv` read and
//! written, and the rows parsed out of each program's output.

use std::path::Path;

use anyhow::{bail, Context};

use crate::osu;

/// The implementations (the `impl` column of `results.csv`).
pub mod imp {
    /// Our runtime: `osu` through `hcrun`.
    pub const OURS: &str = "hypercube";
    /// Open MPI over loopback TCP (`osu_mpi`, [`Transport::Tcp`](crate::peers::Transport)).
    pub const OMPI_TCP: &str = "ompi-tcp";
    /// Open MPI over shared memory (`osu_mpi`, [`Transport::Shm`](crate::peers::Transport)).
    pub const OMPI_SHM: &str = "ompi-shm";
    /// Rust floor, ping-pong with spinning non-blocking reads.
    pub const FLOOR_SPIN: &str = "floor-spin";
    /// Rust floor, ping-pong with blocking reads.
    pub const FLOOR_BLOCK: &str = "floor-block";
    /// Rust floor, one-way stream.
    pub const FLOOR_STREAM: &str = "floor-stream";
    /// C floor (`tcp_floor`), spinning ping-pong: a cross-check.
    pub const C_FLOOR_SPIN: &str = "c-floor-spin";
    /// C floor, blocking ping-pong.
    pub const C_FLOOR_BLOCK: &str = "c-floor-block";
    /// C floor, stream.
    pub const C_FLOOR_STREAM: &str = "c-floor-stream";

    /// Is `imp` one of the floors (Rust or C)?
    pub fn is_floor(imp: &str) -> bool {
        imp.starts_with("floor-") || imp.starts_with("c-floor-")
    }
}

/// One measured value: a row of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    /// Which implementation ([`imp`]).
    pub imp: String,
    /// Number of ranks (2 for the floors).
    pub np: u32,
    /// Benchmark name ([`crate::Bench::name`]).
    pub bench: String,
    /// Message size in bytes.
    pub size: u64,
    /// Repetition number, from 1.
    pub rep: u32,
    /// The value printed: µs, or MB/s for `bw`.
    pub value: f64,
    /// `us` or `MB/s`.
    pub unit: String,
}

/// The CSV header of `results.csv`.
pub const CSV_HEADER: &str = "impl,np,bench,size,rep,value,unit";

impl Record {
    /// One CSV line (no newline).
    pub fn to_csv(&self) -> String {
        format!(
            "{},{},{},{},{},{:.3},{}",
            self.imp, self.np, self.bench, self.size, self.rep, self.value, self.unit
        )
    }

    /// Parse one CSV line written by [`Record::to_csv`].
    pub fn from_csv(line: &str) -> anyhow::Result<Record> {
        let f: Vec<&str> = line.trim().split(',').collect();
        if f.len() != 7 {
            bail!("expected 7 fields in {line:?}");
        }
        Ok(Record {
            imp: f[0].to_string(),
            np: f[1].parse()?,
            bench: f[2].to_string(),
            size: f[3].parse()?,
            rep: f[4].parse()?,
            value: f[5].parse()?,
            unit: f[6].to_string(),
        })
    }
}

/// Read `results.csv`.
pub fn read_csv(path: &Path) -> anyhow::Result<Vec<Record>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(Record::from_csv)
        .collect()
}

/// Write `results.csv`.
pub fn write_csv(path: &Path, recs: &[Record]) -> anyhow::Result<()> {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in recs {
        s.push_str(&r.to_csv());
        s.push('\n');
    }
    std::fs::write(path, s).with_context(|| format!("writing {}", path.display()))
}

fn unit_of(bench: &str) -> &'static str {
    if bench == "bw" || bench == "stream" {
        "MB/s"
    } else {
        "us"
    }
}

/// Turn one run's output into records; `None` if it printed no rows.
pub(super) fn records_of(
    text: &str,
    imp: &str,
    np: u32,
    bench: &str,
    rep: u32,
) -> Option<Vec<Record>> {
    let t = osu::parse_table(text);
    if t.rows.is_empty() {
        return None;
    }
    Some(
        t.rows
            .into_iter()
            .map(|(size, value)| Record {
                imp: imp.to_string(),
                np,
                bench: bench.to_string(),
                size,
                rep,
                value,
                unit: unit_of(bench).to_string(),
            })
            .collect(),
    )
}

/// Parse the C floor's one-line output (`spin 8 5.29 us`).
pub(super) fn parse_c_floor(text: &str, imp: &str, bench: &str, rep: u32) -> Option<Vec<Record>> {
    let v: Vec<Record> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 4 {
                return None;
            }
            Some(Record {
                imp: imp.to_string(),
                np: 2,
                bench: bench.to_string(),
                size: f[1].parse().ok()?,
                rep,
                value: f[2].parse().ok()?,
                unit: unit_of(bench).to_string(),
            })
        })
        .collect();
    (!v.is_empty()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trip() {
        let r = Record {
            imp: imp::OURS.into(),
            np: 8,
            bench: "allreduce".into(),
            size: 8,
            rep: 2,
            value: 123.456,
            unit: "us".into(),
        };
        assert_eq!(Record::from_csv(&r.to_csv()).unwrap(), r);
    }

    #[test]
    fn c_floor_lines() {
        let v = parse_c_floor("spin 8 5.29 us\n", imp::C_FLOOR_SPIN, "latency", 1).unwrap();
        assert_eq!((v[0].size, v[0].value), (8, 5.29));
    }
}
