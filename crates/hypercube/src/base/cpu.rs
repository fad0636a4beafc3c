//! Whether other threads of this process compute: the deadlock detectors' view of work
//! they cannot otherwise see (a thread that computes beside one that waits, and will send
//! what is awaited once it is done), for `transport/tcp/blocked.rs`. Not for the in-process
//! transport, whose nodes are all threads of one process: there the waiting threads' own
//! looks on a large cube add up to a busy process, and a real deadlock went unreported.

use std::time::Duration;

/// The share of one core a rank's process must use, while a wait of it sees nothing, to
/// count as computing on another thread. A parked rank uses under 1 % (the progress
/// thread's looks, the waiter's spin after each 50 ms park); a computing thread, even with
/// 16 ranks on 2 cores, about 12 %.
pub(crate) const BUSY_SHARE: f64 = 0.05;

/// The window over which [`BUSY_SHARE`] is measured.
pub(crate) const BUSY_WINDOW: Duration = Duration::from_millis(100);

/// Did other threads use [`BUSY_SHARE`] of a core: `used` of their CPU time over `window`?
pub(crate) fn busy(used: Duration, window: Duration) -> bool {
    used.as_secs_f64() >= BUSY_SHARE * window.as_secs_f64()
}

/// CPU time used so far by this process's other threads than the calling one
/// (`CLOCK_PROCESS_CPUTIME_ID` less `CLOCK_THREAD_CPUTIME_ID`): a waiter's own spinning is
/// not another thread's computation.
pub(crate) fn others_cpu() -> Duration {
    cpu_clock(libc::CLOCK_PROCESS_CPUTIME_ID)
        .saturating_sub(cpu_clock(libc::CLOCK_THREAD_CPUTIME_ID))
}

/// The CPU-time clock `id` (zero if it cannot be read).
fn cpu_clock(id: libc::clockid_t) -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; `id` is one of the platform's clock ids.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}
