//! The recorder behind the trace hooks (`trace/mod.rs`): two bounded buffers, the one
//! being filled under a mutex and the one a background thread writes out; its memory
//! bound from `HYPERCUBE_TRACE_BUFFER`.

use std::fs::File;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use hypercube_topology::NodeId;

use super::clock::now;

/// The recorder's memory bound in bytes (both buffers together; `64K`, `8M` also work).
pub(crate) const ENV_BUFFER: &str = "HYPERCUBE_TRACE_BUFFER";

/// The default memory bound: 8 MiB a rank (two buffers of 4 MiB).
pub(crate) const DEFAULT_BOUND: usize = 8 << 20;

/// The smallest bound accepted (a smaller one is raised to it).
const MIN_BOUND: usize = 2 << 10;

/// How often the background thread writes the buffer to the file.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_millis(100);

/// The per-process recorder (exists only when tracing is on).
pub(super) struct Recorder {
    /// The buffer being filled, and its accounting.
    pub(super) state: Mutex<State>,
    /// Wakes the writer thread (half full, or stop).
    pub(super) wake: Condvar,
    /// The file, and the second buffer (the one being written, then kept for reuse).
    pub(super) out: Mutex<(File, Vec<u8>)>,
    /// Each buffer's bound: half of the memory bound.
    pub(super) half: usize,
    /// This rank (for the writer thread's name).
    pub(super) rank: NodeId,
    /// The writer thread runs (started, and finish not reached).
    pub(super) writer: AtomicBool,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) buf: Vec<u8>,
    /// The capacity of the other buffer, for the accounting.
    pub(super) spare_cap: usize,
    /// The largest buffer memory seen (both buffers' capacities).
    pub(super) peak: usize,
    pub(super) records: u64,
    /// Dropped since the last write, and in all.
    pub(super) lost: u64,
    pub(super) lost_bytes: u64,
    pub(super) dropped: u64,
    pub(super) dropped_bytes: u64,
    /// The writer thread was asked to write early.
    pub(super) woken: bool,
    pub(super) stop: bool,
}

impl Recorder {
    pub(super) fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Append one line (with its newline), or count it as dropped.
    pub(super) fn push(&self, line: &[u8]) {
        let mut s = self.state();
        let len = s.buf.len();
        let need = len + line.len();
        if need > self.half {
            s.lost += 1;
            s.lost_bytes += line.len() as u64;
            s.dropped += 1;
            s.dropped_bytes += line.len() as u64;
            return;
        }
        if need > s.buf.capacity() {
            // Grow by doubling, never past the bound.
            let cap = (s.buf.capacity() * 2).max(need).min(self.half);
            s.buf.reserve_exact(cap - len);
            let mem = s.buf.capacity() + s.spare_cap;
            s.peak = s.peak.max(mem);
        }
        s.buf.extend_from_slice(line);
        s.records += 1;
        if need > self.half / 2 && !s.woken {
            s.woken = true;
            drop(s);
            self.wake.notify_one();
        }
    }

    /// Write what is buffered to the file (the writer thread, a parking caller, the end).
    pub(super) fn write_out(&self) {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let (file, spare) = &mut *out;
        let (lost, lost_bytes) = {
            let mut s = self.state();
            s.woken = false;
            if s.buf.is_empty() && s.lost == 0 {
                return;
            }
            spare.clear();
            std::mem::swap(&mut s.buf, spare);
            s.spare_cap = spare.capacity();
            let lost = (s.lost, s.lost_bytes);
            (s.lost, s.lost_bytes) = (0, 0);
            lost
        };
        let _ = file.write_all(spare);
        if lost > 0 {
            let _ = writeln!(
                file,
                "{{\"ev\":\"lost\",\"t\":{},\"records\":{lost},\"bytes\":{lost_bytes}}}",
                now()
            );
        }
        spare.clear();
    }

    /// The writer thread: every [`FLUSH_EVERY`], or when woken, until stopped.
    pub(super) fn run(&self) {
        loop {
            {
                let s = self.state();
                let (s, _) = self
                    .wake
                    .wait_timeout_while(s, FLUSH_EVERY, |s| !s.stop && !s.woken)
                    .unwrap_or_else(|p| p.into_inner());
                if s.stop {
                    return;
                }
            }
            self.write_out();
        }
    }
}

/// Parse a byte count: `123`, `64K`, `64KiB`, `8M`, `8MiB`, `1G`.
pub(super) fn parse_bytes(v: &str) -> Option<usize> {
    let v = v.trim();
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: usize = v[..digits].parse().ok()?;
    let mult = match v[digits..].trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// The memory bound from `HYPERCUBE_TRACE_BUFFER` (a warning and the default if malformed).
pub(super) fn bound_from_env() -> usize {
    match std::env::var(ENV_BUFFER) {
        Err(_) => DEFAULT_BOUND,
        Ok(v) => match parse_bytes(&v) {
            Some(b) => b.max(MIN_BOUND),
            None => {
                tracing::warn!(
                    "{ENV_BUFFER}={v:?} is not a byte count (like 65536, 64K or 8M); using {} bytes",
                    DEFAULT_BOUND
                );
                DEFAULT_BOUND
            }
        },
    }
}
