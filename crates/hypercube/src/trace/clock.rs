//! The trace clock: `CLOCK_MONOTONIC` in nanoseconds, shared by the hooks (`trace/mod.rs`)
//! and the recorder (`recorder.rs`), with the test-only skew that makes one rank's clock
//! look like another host's, and what names this process's clock (`clock_id` in the
//! `start` line).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::OnceLock;

use hypercube_topology::NodeId;

/// For tests only: shift this process's trace clock, as if it ran on another host.
/// `NS` (every rank) or `RANK=NS,RANK=NS,...` (those ranks), signed nanoseconds.
pub(crate) const ENV_SKEW: &str = "HYPERCUBE_TRACE_CLOCK_SKEW_NS";

static SKEW: AtomicI64 = AtomicI64::new(0);

/// The trace clock: `CLOCK_MONOTONIC` in nanoseconds (plus the test-only skew).
pub(crate) fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let t = ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64;
    t.saturating_add_signed(SKEW.load(Ordering::Relaxed))
}

/// The test-only clock skew for `rank` from `HYPERCUBE_TRACE_CLOCK_SKEW_NS`: `None` if the
/// variable does not name this rank.
fn skew_from_env(rank: NodeId) -> Option<i64> {
    let v = std::env::var(ENV_SKEW).ok()?;
    let v = v.trim();
    if let Ok(ns) = v.parse::<i64>() {
        return Some(ns);
    }
    for item in v.split(',') {
        let parsed = item
            .split_once('=')
            .and_then(|(r, ns)| Some((r.trim().parse::<u32>().ok()?, ns.trim().parse().ok()?)));
        match parsed {
            Some((r, ns)) if r == rank => return Some(ns),
            Some(_) => {}
            None => {
                tracing::warn!("{ENV_SKEW}={v:?}: {item:?} is not RANK=NS; ignored");
                return None;
            }
        }
    }
    None
}

/// What identifies this process's clock: the kernel's boot id (processes of one boot of
/// one kernel share `CLOCK_MONOTONIC`), marked when the test-only skew applies.
fn clock_id(skewed: Option<i64>) -> String {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    let boot = if boot.is_empty() {
        // Unknown: never taken for the same clock as another process's.
        format!("unknown-{}", std::process::id())
    } else {
        boot
    };
    match skewed {
        Some(ns) => format!("{boot}+skew{ns}"),
        None => boot,
    }
}

pub(crate) static CLOCK_ID: OnceLock<String> = OnceLock::new();

/// Set this rank's test-only skew from the environment and name its clock (once).
pub(super) fn start(rank: NodeId) -> String {
    let skew = skew_from_env(rank);
    SKEW.store(skew.unwrap_or(0), Ordering::Relaxed);
    CLOCK_ID.get_or_init(|| clock_id(skew)).clone()
}
