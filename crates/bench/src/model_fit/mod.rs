//! `hypercube-bench cubenet-model`: Grama's cost model (ch. 4, §2.5.1), fitted to and
//! checked against the emulated hypercube network (`hcrun --link-rate`, docs/cubenet.md).
//!
//! 1. **Fit.** Ping-pongs (`osu latency --peer 2^h − 1`) over 1 … d links, under
//!    cut-through and store-and-forward forwarding, give one-way times `T(m, l)`. The links
//!    are `tc tbf` token buckets, whose burst `B` lets a message through at core speed
//!    while the bucket holds tokens; a ping-pong of `m` bytes therefore runs in one of three
//!    regimes (derivation in [`LinkFit::predict`]):
//!    - *start-up* (a few bytes): `t_s + (l − 1) t_h`, software only;
//!    - *duty cycle* (from a few hundred bytes to ~2 B): each link carries `m` per round trip
//!      and its bucket never fills up, so the round trip is the rate's: `T = t_w m / 2` (any
//!      `l`, either regime) — a transient: a short run of sizes below ~1 KiB fits in the
//!      bucket and goes at core speed;
//!    - *bucket drained* (`m` ≳ 2.5 B): every message starts with a full bucket and
//!      drains it: `t_s + (l − 1) t_h + k t_w (m − b)`,
//!
//!    with `k = 1` under cut-through and `k = l` under store-and-forward (every link of the
//!    route carries the whole message in turn), and `b` the burst in payload bytes. One
//!    weighted linear least-squares fit ([`fit_link`]; weights `1/T`, so relative residuals
//!    count) over the small and the large sizes of all hop counts gives `t_s, t_h, t_w` and
//!    `c = t_w b`. The mid sizes are not fitted; the report shows them against the
//!    duty-cycle prediction as a check of the explanation.
//! 2. **Per operation.** Each chapter 4 operation, forced to the algorithm the formula
//!    describes, is measured with `osu --per-rank` (mean and slowest rank) and put beside:
//!    Grama's formula with the fitted parameters ([`grama_time`]: the sum over the
//!    algorithm's critical path of [`CostModel::message_over`]), the same formula with the
//!    token bucket ([`tbf_time`]), the virtual-clock transport's time
//!    ([`virtual_clock`]: the collective run on `run_local_timed`, and on
//!    `run_local_timed_all_port`, with the fitted [`CostModel`]) and the all-port link bound
//!    ([`crate::linkbound`]). The algorithms that exchange messages above the eager limit
//!    run once more with every message eager ([`Case::eager`]).
//! 3. **Report.** `docs/perf/cubenet-model.md` ([`render`]); the hand-written part above
//!    [`GENERATED_MARKER`] is kept when the file is rewritten. The raw measurements go to
//!    `target/cubenet-model-raw.csv` (and the run's date, command... to `….csv.info`):
//!    `--replay` re-renders the report from them, `--resume` measures only what is missing.
//!
//! Every benchmark run holds the benchmarks' lock ([`crate::lock::BenchLock`], the one the
//! other benchmark drivers of this checkout take), so runs of several people never overlap.
//!
//! A file per job: the command line (`args.rs`), the link model and its fit (`fit.rs`),
//! Grama's formulas step by step (`grama.rs`), the virtual clock (`clock.rs`), the cases and
//! raw rows (`cases.rs`), the runs (`measure.rs`), the fits and rows of the report (`fits.rs`)
//! and the report itself (`page.rs`).
//!
//! [`CostModel`]: hypercube::collectives::select::CostModel
//! [`CostModel::message_over`]: hypercube::collectives::select::CostModel::message_over

mod args;
mod cases;
mod clock;
mod fit;
mod fits;
mod grama;
mod measure;
mod page;
#[cfg(test)]
mod tests;

pub use args::ModelArgs;
pub use cases::{
    cases, default_burst, default_eager_limit, parse_rate, slowest_rank, Case, Raw, EAGER_ENV,
    RAW_HEADER,
};
pub use clock::virtual_clock;
pub use fit::{
    fit_link, hop_factor, least_squares, size_class, LinkFit, PingPong, SizeClass, FRAMING,
};
pub use fits::{op_rows, spread, Fits, OpRow};
pub use grama::{busiest_link_of, critical_path, grama_time, tbf_time, Step};
pub use measure::{measure_case, measure_pingpongs, read_raw, Runner};
pub use page::{fmt_time, render, RunInfo, GENERATED_MARKER};

use anyhow::Context;
use std::path::PathBuf;
use std::time::Instant;

use args::crate_root;
use measure::measure_all;

/// Run the command: measure (unless `--replay`), fit, compare, write the report.
pub fn run(a: ModelArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let mut notes = Vec::new();
    let raw = if a.replay {
        read_raw(&a.raw)?
    } else {
        measure_all(&a, &mut notes)?
    };
    let measure_secs = start.elapsed().as_secs_f64();
    let mut rates = vec![a.rate.clone()];
    rates.extend(a.extra_fit_rates.iter().cloned());
    let mut all = Vec::new();
    for r in &rates {
        all.push(Fits::from_raw(&raw, r)?);
    }
    let rows = op_rows(&raw, &all[0], &mut notes);
    let cmd = std::env::args()
        .map(|x| {
            if x.contains('/') && !x.starts_with('-') {
                x.rsplit('/').next().unwrap_or_default().to_string()
            } else {
                x
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut info = RunInfo {
        lines: vec![
            (
                "date".into(),
                crate::shell_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
            ),
            (
                "commit".into(),
                crate::shell_line(
                    "git",
                    &[
                        "-C",
                        &crate_root().to_string_lossy(),
                        "rev-parse",
                        "--short",
                        "HEAD",
                    ],
                ),
            ),
            (
                "machine".into(),
                crate::machine_line(),
            ),
            ("command".into(), format!("`{cmd}`")),
            (
                "network".into(),
                format!(
                    "`hcrun --dim D --link-rate {}`: a veth pair per cube edge, `tc tbf` on each \
                     end (burst {} KiB, latency 100 ms), ranks forward routed messages themselves \
                     (`HYPERCUBE_FORWARDING`)",
                    a.rate,
                    default_burst(parse_rate(&a.rate)?) / 1024
                ),
            ),
            (
                "iterations".into(),
                format!(
                    "ping-pongs up to 128 B `-i {} -x 100`, from 256 B `-i {}` (a tenth above 8 KiB) \
                 `-x 5`; collectives ≤ 8 KiB `-i 100 \
                     -x 10`, < 512 KiB `-i 200 -x 3` (20 calls), ≥ 512 KiB `-i 30 -x 1` (3 calls)",
                    a.pingpong_iters * 10,
                    a.pingpong_iters
                ),
            ),
            (
                "run time".into(),
                if a.replay {
                    "replayed from the raw measurements".into()
                } else {
                    format!(
                        "{:.1} min (measurements, waits for the lock included)",
                        measure_secs / 60.0
                    )
                },
            ),
        ],
        notes,
    };
    // The measuring run's lines go beside the raw file; a replay shows them, and its own
    // date, commit and command as the re-rendering's.
    let info_path = PathBuf::from(format!("{}.info", a.raw.display()));
    if a.replay {
        if let Ok(text) = std::fs::read_to_string(&info_path) {
            let measured: Vec<(String, String)> = text
                .lines()
                .filter_map(|l| l.split_once(": "))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let rerender = format!("{}, commit {}, `{}`", info.lines[0].1, info.lines[1].1, cmd);
            info.lines = measured;
            info.lines.push(("re-rendered".into(), rerender));
        }
    } else {
        let text: String = info
            .lines
            .iter()
            .map(|(k, v)| format!("{k}: {v}\n"))
            .collect();
        std::fs::write(&info_path, text)
            .with_context(|| format!("writing {}", info_path.display()))?;
    }
    let generated = render(&raw, &all, &rows, &info);
    let head = std::fs::read_to_string(&a.out)
        .ok()
        .and_then(|t| t.split_once(GENERATED_MARKER).map(|(h, _)| h.to_string()))
        .unwrap_or_else(|| "# Grama's model, measured on the emulated hypercube\n\n".into());
    if let Some(dir) = a.out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&a.out, format!("{head}{generated}"))
        .with_context(|| format!("writing {}", a.out.display()))?;
    eprintln!(
        "cubenet-model: wrote {} in {:.1} min",
        a.out.display(),
        start.elapsed().as_secs_f64() / 60.0
    );
    Ok(())
}
