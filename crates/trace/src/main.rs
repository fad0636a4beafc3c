//! `hctrace`: merge, summarise and draw hypercube message traces (`docs/tracing.md`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hypercube_trace::{links, merge, model::Trace, stats, steps, timeline};

/// Merge, summarise and draw hypercube message traces.
#[derive(Parser, Debug)]
#[command(name = "hctrace", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Join the per-rank files PREFIX.rank-N (written under HYPERCUBE_TRACE=PREFIX) into
    /// one Chrome / Perfetto trace-event JSON file.
    Merge {
        /// The prefix the ranks were given in HYPERCUBE_TRACE.
        prefix: PathBuf,
        /// The merged trace to write.
        #[arg(short, long, value_name = "FILE.json")]
        output: PathBuf,
    },
    /// Per rank: messages and bytes sent, received, forwarded; time in calls, time
    /// blocked, the largest wait.
    Stats {
        /// A merged trace.
        file: PathBuf,
    },
    /// Draw the space-time diagram as SVG.
    Timeline {
        /// A merged trace.
        file: PathBuf,
        /// The SVG to write.
        #[arg(short, long, value_name = "FILE.svg")]
        output: PathBuf,
        /// Only this window, START:END from the trace's first event (µs, or with a unit:
        /// 800ns, 250us, 1.5ms, 2s; either side may be empty).
        #[arg(long, value_name = "START:END")]
        window: Option<String>,
        /// Picture width in pixels.
        #[arg(long, default_value_t = 1200)]
        width: u32,
    },
    /// Draw the cube's links over time: one row per directed link, colour = bytes in
    /// flight on it (congestion shows as a dark row).
    Links {
        /// A merged trace.
        file: PathBuf,
        /// The SVG to write.
        #[arg(short, long, value_name = "FILE.svg")]
        output: PathBuf,
        /// Only this window, START:END from the trace's first event (as for timeline).
        #[arg(long, value_name = "START:END", conflicts_with = "call")]
        window: Option<String>,
        /// Only the time of the K-th utility or collective call (from 0, as for steps).
        #[arg(long, value_name = "K")]
        call: Option<usize>,
        /// Bytes in flight drawn darkest (default: the most any link had); give two
        /// pictures the same to compare them.
        #[arg(long, value_name = "BYTES", default_value_t = 0)]
        scale: u64,
        /// Picture width in pixels.
        #[arg(long, default_value_t = 1200)]
        width: u32,
    },
    /// Draw the K-th utility or collective call on the cube, one panel per step (Grama's
    /// pictures; cubes of up to 4 dimensions).
    Steps {
        /// A merged trace.
        file: PathBuf,
        /// Which call, from 0 (finalize not counted).
        #[arg(long, value_name = "K")]
        call: usize,
        /// The SVG to write.
        #[arg(short, long, value_name = "FILE.svg")]
        output: PathBuf,
    },
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.cmd {
        Cmd::Merge { prefix, output } => {
            let m = merge::merge_to(&prefix, &output).map_err(|e| e.to_string())?;
            for n in &m.notes {
                eprintln!("hctrace: note: {n}");
            }
            for w in &m.warnings {
                eprintln!("hctrace: warning: {w}");
            }
            eprintln!(
                "hctrace: wrote {} ({} ranks, {} messages); open it in https://ui.perfetto.dev",
                output.display(),
                m.ranks,
                m.messages
            );
            Ok(())
        }
        Cmd::Stats { file } => {
            let t = Trace::load(&file).map_err(|e| e.to_string())?;
            print!("{}", stats::table(&t));
            Ok(())
        }
        Cmd::Timeline {
            file,
            output,
            window,
            width,
        } => {
            let t = Trace::load(&file).map_err(|e| e.to_string())?;
            let window = window_of(&t, window.as_deref())?;
            let svg = timeline::svg(&t, &timeline::Options { window, width })
                .map_err(|e| format!("{}: {e}", file.display()))?;
            std::fs::write(&output, svg)
                .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
            eprintln!("hctrace: wrote {}", output.display());
            Ok(())
        }
        Cmd::Links {
            file,
            output,
            window,
            call,
            scale,
            width,
        } => {
            let t = Trace::load(&file).map_err(|e| e.to_string())?;
            let window = match call {
                Some(k) => Some(
                    steps::call_window(&t, k)
                        .ok_or_else(|| {
                            format!(
                                "--call {k}: the trace has {} calls (--call 0 to {})",
                                steps::count(&t),
                                steps::count(&t).saturating_sub(1)
                            )
                        })?
                        .0,
                ),
                None => window_of(&t, window.as_deref())?,
            };
            let svg = links::svg(
                &t,
                &links::Options {
                    window,
                    width,
                    scale,
                },
            )
            .map_err(|e| format!("{}: {e}", file.display()))?;
            std::fs::write(&output, svg)
                .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
            eprintln!("hctrace: wrote {}", output.display());
            Ok(())
        }
        Cmd::Steps { file, call, output } => {
            let t = Trace::load(&file).map_err(|e| e.to_string())?;
            let svg = steps::svg(&t, call).map_err(|e| format!("{}: {e}", file.display()))?;
            std::fs::write(&output, svg)
                .map_err(|e| format!("{}: cannot write: {e}", output.display()))?;
            eprintln!("hctrace: wrote {}", output.display());
            Ok(())
        }
    }
}

/// The `--window START:END` of a trace, its open ends at the trace's first and last event.
fn window_of(t: &Trace, w: Option<&str>) -> Result<Option<(f64, f64)>, String> {
    let (lo, hi) = t.span();
    w.map(|w| {
        let (a, b) = timeline::parse_window(w)?;
        Ok((a.unwrap_or(lo), b.unwrap_or(hi)))
    })
    .transpose()
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hctrace: error: {e}");
            ExitCode::FAILURE
        }
    }
}
