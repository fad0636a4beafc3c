//! The report of a comparison, a file per job: the medians over repetitions
//! ([`medians`]), the targets of issue 5 and after (met or not), `docs/perf/README.md`
//! ([`readme`], its tables written by [`table()`] from column specs) and one SVG plot per
//! benchmark ([`figure`]).

mod figures;
mod medians;
mod readme;
mod run_info;
pub mod table;
mod targets;
mod text;

use std::path::Path;

use anyhow::Context;

use crate::compare::Record;
use crate::Bench;

pub use figures::figure;
pub use medians::{median_of_sorted, medians, Key, KEY_SIZES, P2P_KEY_SIZES};
pub use readme::readme;
pub use run_info::RunInfo;
pub use table::{table, Column};
pub use text::{size_text, size_tick};

/// Write `README.md` and the plots into `out` (the CSV is written by the caller).
pub fn write_all(out: &Path, recs: &[Record], info: &RunInfo) -> anyhow::Result<()> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    for b in Bench::ALL {
        let path = out.join(format!("{}.svg", b.name()));
        match figure(recs, b) {
            Some(f) => std::fs::write(&path, f.to_svg())
                .with_context(|| format!("writing {}", path.display()))?,
            None => {
                // A plot of a benchmark this run did not measure would be stale.
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    let path = out.join("README.md");
    std::fs::write(&path, readme(recs, info))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests;
