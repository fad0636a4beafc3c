//! How freed message memory goes back to the allocator and to the kernel.
//!
//! Message buffers of a few MiB are allocated and freed all the time; by default glibc gives
//! such blocks back to the kernel at once (mmap/munmap), and every reuse then pays a page
//! fault per 4 KiB (measured: ~30% of a 1 MiB allreduce at np = 8; the command and figures
//! are in `docs/perf/analysis.md`). [`keep_freed`] raises glibc's thresholds so that freed
//! buffers are reused instead.
//!
//! Kept for good, freed memory is a high-water mark that only rises: with messages of
//! random sizes the heap fragments, and a ten-minute soak of random traffic grew every
//! rank's resident memory by 10–23 % (`docs/reliability.md`, "The soak") while the memory
//! in use stayed flat (a heap profile: median 1.6–1.8 MB from minute one on). So the
//! progress thread also hands the allocator's free pages back every [`GIVE_BACK_EVERY`]
//! ([`give_back_when_due`]): the buffers of a steady loop then fault in again once per
//! period, not once per call (a 1 MiB allreduce loop on 8 ranks: 0.99× the time without
//! it), and a burst of large messages does not stay resident for the rest of the job.
//! Every 10 s left one rank of sixteen at +14 % in the soak; every 2 s, all within +10 %.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often freed memory that is kept goes back to the kernel.
pub(crate) const GIVE_BACK_EVERY: Duration = Duration::from_secs(2);

/// Set once [`keep_freed`] has raised the thresholds.
static KEEPING: AtomicBool = AtomicBool::new(false);

/// When free memory was last handed back, in ms since [`start`].
static GIVEN_BACK_MS: AtomicU64 = AtomicU64::new(0);

fn start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

/// Keep freed message buffers for reuse: raise glibc's mmap and trim thresholds — unless
/// the user set `MALLOC_MMAP_THRESHOLD_` / `MALLOC_TRIM_THRESHOLD_` or
/// `HYPERCUBE_KEEP_FREED_MEMORY=0`.
pub(crate) fn keep_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let set = |v: &str| std::env::var_os(v).is_some();
        if set("MALLOC_MMAP_THRESHOLD_")
            || set("MALLOC_TRIM_THRESHOLD_")
            || std::env::var("HYPERCUBE_KEEP_FREED_MEMORY").is_ok_and(|v| v.trim() == "0")
        {
            return;
        }
        start();
        // SAFETY: mallopt only adjusts glibc's allocator parameters.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        }
        KEEPING.store(true, Ordering::Relaxed);
    }
}

/// If freed memory is kept ([`keep_freed`]) and the last hand-back is [`GIVE_BACK_EVERY`]
/// ago, give the allocator's whole free pages back to the kernel now (`malloc_trim`).
/// Cheap when not due: one clock read and an atomic load. Returns whether it gave back.
pub(crate) fn give_back_when_due() -> bool {
    if !KEEPING.load(Ordering::Relaxed) {
        return false;
    }
    let now = start().elapsed().as_millis() as u64;
    let last = GIVEN_BACK_MS.load(Ordering::Relaxed);
    // One thread wins a due turn (the exchange), the others go on.
    if !due(now, last)
        || GIVEN_BACK_MS
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return false;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory of glibc's heaps to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
    true
}

/// Is a hand-back due at `now_ms` after one at `last_ms`?
fn due(now_ms: u64, last_ms: u64) -> bool {
    now_ms.saturating_sub(last_ms) >= GIVE_BACK_EVERY.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_back_is_due_once_a_period_after_the_last() {
        let p = GIVE_BACK_EVERY.as_millis() as u64;
        assert!(!due(0, 0) && !due(p - 1, 0), "not within the first period");
        assert!(due(p, 0) && due(5 * p, 0));
        assert!(!due(p + 10, p) && due(2 * p, p));
        assert!(!due(3, 7), "a clock read before the last hand-back");
    }

    #[test]
    fn nothing_is_given_back_unless_freed_memory_is_kept() {
        // Test processes do not call keep_freed (nor set KEEPING).
        assert!(!KEEPING.load(Ordering::Relaxed));
        assert!(!give_back_when_due());
    }
}
