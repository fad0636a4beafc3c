//! The OSU Micro-Benchmarks conventions that every program of this crate follows, the C
//! MPI benchmark `c/osu_mpi.c` included: the size sweep, the default iteration counts, and
//! the output format (a `# title` line, a `# Size` header and one row per size).

use anyhow::{bail, Context};
use hypercube::collectives::{Algorithm, Subcube};
use hypercube::Node;

use crate::Bench;

/// Messages in flight per iteration of the bandwidth test (OSU's window).
pub const WINDOW: usize = 64;

/// Largest iteration count the sweep helpers accept from a command line.
const MAX_ITERS: u64 = 1 << 40;

/// The first line: `# <title>`.
pub fn title_line(title: &str) -> String {
    format!("# {title}")
}

/// The column header: `# Size` left-aligned in 10 columns, then the value column's name
/// right-aligned in 20 (`printf("%-10s%20s\n", "# Size", col)`).
pub fn header_line(col: &str) -> String {
    format!("{:<10}{:>20}", "# Size", col)
}

/// One row: the size left-aligned in 10 columns, the value with two decimals right-aligned
/// in 20 (`printf("%-10zu%20.2f\n", size, v)`).
pub fn row_line(size: u64, value: f64) -> String {
    format!("{size:<10}{value:>20.2}")
}

/// The column name of latency-like tests (`latency`, `pingpong`, `spin`).
pub const COL_LATENCY: &str = "Latency (us)";
/// The column name of the collective tests (per-rank mean, averaged over ranks).
pub const COL_AVG_LATENCY: &str = "Avg Latency(us)";
/// The column name of the bandwidth tests (MB/s with 1 MB = 10^6 bytes).
pub const COL_BANDWIDTH: &str = "Bandwidth (MB/s)";

/// Parse `MIN:MAX` (as `-m` takes it): two byte counts with MIN ≤ MAX.
pub fn parse_range(s: &str) -> anyhow::Result<(u64, u64)> {
    let (a, b) = s
        .split_once(':')
        .with_context(|| format!("size range {s:?} is not MIN:MAX"))?;
    let lo: u64 = a
        .trim()
        .parse()
        .with_context(|| format!("bad MIN in size range {s:?}"))?;
    let hi: u64 = b
        .trim()
        .parse()
        .with_context(|| format!("bad MAX in size range {s:?}"))?;
    if lo > hi {
        bail!("size range {s:?}: MIN is larger than MAX");
    }
    if hi > 1 << 34 {
        bail!("size range {s:?}: MAX above 16 GiB");
    }
    Ok((lo, hi))
}

/// The sizes of a sweep from `lo` to `hi`: `lo`, then doubling (0 is followed by 1), as
/// `for (s = lo; s <= hi; s = s ? s * 2 : 1)`.
pub fn sizes(lo: u64, hi: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = lo;
    while s <= hi {
        v.push(s);
        s = if s == 0 { 1 } else { s * 2 };
    }
    v
}

/// Iterations at `size`: with `-i ITERS` given (`iters > 0`), ITERS for messages up to
/// 8 KiB and ITERS/10 (at least 1) above; otherwise `small` or `large`.
pub fn iters_for(size: u64, iters: u64, small: u64, large: u64) -> u64 {
    let iters = iters.min(MAX_ITERS);
    if iters > 0 {
        if size > 8192 {
            (iters / 10).max(1)
        } else {
            iters
        }
    } else if size > 8192 {
        large
    } else {
        small
    }
}

/// Warm-up iterations at `size`: `-x WARMUP` if given (≥ 0), otherwise `small` up to
/// 8 KiB and `large` above.
pub fn warmup_for(size: u64, warmup: i64, small: u64, large: u64) -> u64 {
    if warmup >= 0 {
        (warmup as u64).min(MAX_ITERS)
    } else if size > 8192 {
        large
    } else {
        small
    }
}

/// One parsed OSU-format table: its title (without `# `), value column name and rows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// The title line without the leading `# `.
    pub title: String,
    /// The value column's name (`Latency (us)`, `Avg Latency(us)`, `Bandwidth (MB/s)`).
    pub column: String,
    /// `(size in bytes, value)` in the order printed.
    pub rows: Vec<(u64, f64)>,
}

/// Parse the output of one OSU-style run (ours, `osu_mpi` or `floor`): the first
/// `# ` line is the title, a line starting with `# Size` names the column, every line of
/// exactly two numbers is a row; anything else (launcher chatter, warnings) is ignored.
pub fn parse_table(text: &str) -> Table {
    let mut t = Table::default();
    for line in text.lines() {
        let line = line.trim_end();
        if let Some(rest) = line.strip_prefix("# Size") {
            t.column = rest.trim().to_string();
        } else if let Some(rest) = line.strip_prefix("# ") {
            if t.title.is_empty() {
                t.title = rest.trim().to_string();
            }
        } else {
            let mut f = line.split_whitespace();
            if let (Some(a), Some(b), None) = (f.next(), f.next(), f.next()) {
                if let (Ok(s), Ok(v)) = (a.parse::<u64>(), b.parse::<f64>()) {
                    t.rows.push((s, v));
                }
            }
        }
    }
    t
}

/// The barrier between timed calls of `bench`: the exchange (`Algorithm::Hypercube`),
/// whatever the automatic choice, unless `HYPERCUBE_ALG_BARRIER` names one or `bench` is
/// the barrier itself (then the automatic choice, back to back as in OSU's
/// `osu_barrier`). Each rank's time starts at
/// its own exit of that barrier, so the order in which a barrier lets the ranks go is part
/// of every rooted operation's figures: after the tree (the automatic choice where ranks
/// outnumber the cores four to one) node 0 leaves first and the leaves `log p` messages
/// later, and an 8 B broadcast from node 0 measured 8 % of Open MPI's time on the emulated
/// 4-cube — the leaves found its message waiting — while every all-to-all-like operation's
/// slowest rank (node 0, waiting for the rest) took 1.1–1.5× it. With the exchange the ranks
/// leave as in Open MPI's `MPI_Barrier` of 8–63 ranks (recursive doubling in its tuned
/// component's fixed rules, the same pattern; 4–7 ranks get its linear barrier), so both
/// runtimes' figures mean the same (docs/perf/cubenet.md, "The barrier's exit order").
/// `osu` and the shaped virtual clock's loop (`model_fit/clock.rs`) both use it.
pub fn between_calls(node: &Node, bench: Bench) -> Subcube<'_> {
    if bench == Bench::Barrier || std::env::var_os("HYPERCUBE_ALG_BARRIER").is_some() {
        node.cube()
    } else {
        node.cube().with(Algorithm::Hypercube)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_matches_the_c_printf() {
        assert_eq!(header_line(COL_LATENCY), "# Size            Latency (us)");
        assert_eq!(row_line(8, 7.14), "8                         7.14");
        assert_eq!(
            header_line(COL_AVG_LATENCY),
            "# Size         Avg Latency(us)"
        );
    }

    #[test]
    fn sweep_and_iterations() {
        assert_eq!(sizes(0, 4), vec![0, 1, 2, 4]);
        assert_eq!(sizes(8, 32), vec![8, 16, 32]);
        assert_eq!(iters_for(8, 0, 1000, 100), 1000);
        assert_eq!(iters_for(65536, 0, 1000, 100), 100);
        assert_eq!(iters_for(65536, 5, 1000, 100), 1);
        assert_eq!(warmup_for(65536, -1, 100, 10), 10);
        assert_eq!(warmup_for(8, 0, 100, 10), 0);
        assert!(parse_range("9:8").is_err());
        assert_eq!(parse_range("4:1048576").unwrap(), (4, 1 << 20));
    }

    #[test]
    fn parses_what_it_prints() {
        let text = format!(
            "{}\n{}\n{}\n{}\nnoise here\n",
            title_line("OSU-style MPI allreduce Latency Test (np=4)"),
            header_line(COL_AVG_LATENCY),
            row_line(8, 54.17),
            row_line(16, 55.28)
        );
        let t = parse_table(&text);
        assert_eq!(t.title, "OSU-style MPI allreduce Latency Test (np=4)");
        assert_eq!(t.column, COL_AVG_LATENCY);
        assert_eq!(t.rows, vec![(8, 54.17), (16, 55.28)]);
    }
}
