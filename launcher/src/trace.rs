//! `hcrun --trace FILE.json`: every rank records into a temporary directory
//! (`HYPERCUBE_TRACE=DIR/trace`), and when the job has ended — well or not — the per-rank
//! files are merged into one Chrome / Perfetto trace (`hypercube_trace::merge`), the
//! directory removed.

use std::path::PathBuf;

use anyhow::{Context, Result};

/// A trace being recorded.
pub struct Recording {
    dir: PathBuf,
    out: PathBuf,
}

impl Recording {
    /// Make the temporary directory the ranks write into.
    pub fn start(out: PathBuf) -> Result<Recording> {
        let dir = std::env::temp_dir().join(format!(
            "hcrun-trace-{}-{:x}",
            std::process::id(),
            rand::random::<u32>()
        ));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("--trace: creating {}", dir.display()))?;
        Ok(Recording { dir, out })
    }

    /// The value of `HYPERCUBE_TRACE` for the ranks.
    pub fn prefix_env(&self) -> String {
        self.prefix().to_string_lossy().into_owned()
    }

    fn prefix(&self) -> PathBuf {
        self.dir.join("trace")
    }

    /// Merge what the ranks wrote into the output file; say where it is.
    pub fn finish(self) {
        let empty = std::fs::read_dir(&self.dir).map_or(true, |mut d| d.next().is_none());
        if empty {
            eprintln!(
                "hcrun: trace: no rank wrote a trace (none joined the job), so {} was not written",
                self.out.display()
            );
            let _ = std::fs::remove_dir_all(&self.dir);
            return;
        }
        match hypercube_trace::merge::merge_to(&self.prefix(), &self.out) {
            Ok(m) => {
                for n in &m.notes {
                    eprintln!("hcrun: trace: {n}");
                }
                for w in &m.warnings {
                    eprintln!("hcrun: trace: warning: {w}");
                }
                eprintln!(
                    "hcrun: trace written to {} ({} ranks, {} messages); open it in \
                     https://ui.perfetto.dev or try `hctrace stats {}`",
                    self.out.display(),
                    m.ranks,
                    m.messages,
                    self.out.display()
                );
            }
            Err(e) => eprintln!("hcrun: trace: {e}"),
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
