//! The job measures its links at start-up, so that the automatic choice of algorithms
//! knows the network it runs on (a link that is a memcpy on a shared core, or a slow wire
//! as on the iPSC and the emulated cube of docs/cubenet.md) without anybody typing a link
//! speed.
//!
//! Inside `init`, after the links are up and before the program runs: node 0 times, one
//! dimension after the other, a transfer to its neighbour across that dimension — first
//! [`PRIME`] bytes, which empty any token bucket on the way (a shaped link lets a burst
//! through at core speed), then, timed two to eight times (more on fast links, where a run
//! is short), up to [`TIMED`] bytes and the neighbour's 1-byte answer — and takes the
//! slowest dimension's seconds per byte (the best of the timings, less a small message's
//! round trip). The priming transfer, which starts on an
//! idle link, also tells the link's **burst**: the bytes a shaper's token bucket lets
//! through at core speed after idle time (`tc tbf`'s burst, a cloud VM's network credits;
//! none on a plain wire) — what the priming transfer took less than its bytes at the
//! measured rate would ([`burst_bytes`]); node 0 keeps the smallest of its dimensions'.
//! It sends both figures to every node, with its count of the cores the ranks share
//! ([`job_cores`]: `HYPERCUBE_MODEL_CORES` or its available parallelism — sent also when
//! the probe is skipped), and every node keeps them ([`measured`], [`measured_burst`]);
//! all members of any subcube therefore choose alike. The messages carry the reserved
//! [`crate::base::tags::BOOTSTRAP`] tags and are left out of traces.
//!
//! Cost: on loopback about a millisecond; on 100 Mbit/s links about 45 ms per dimension
//! (node 0's links only); on slower links the timed transfers shrink (to 16 KiB at
//! least), so that a dimension costs about the priming transfer and 0.1–0.3 s.
//! `HYPERCUBE_LINK_PROBE=0` skips it (the choice then knows nothing of the links, as
//! before), and `HYPERCUBE_MODEL_LINK_TW_NS` sets the figure instead (then nothing is
//! measured, and the burst is 0 unless `HYPERCUBE_MODEL_LINK_BURST` gives it in bytes; that
//! variable also replaces a measured burst).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::base::ids::HOST;
use crate::base::message::Select;
use crate::base::parts::Parts;
use crate::error::{Error, Result};
use crate::transport::Transport;

/// The bytes sent before the timed transfer (more than `hcrun --link-rate`'s default
/// token bucket of 96 KiB).
pub(crate) const PRIME: usize = 128 << 10;
/// The bytes of the timed transfer.
pub(crate) const TIMED: usize = 256 << 10;

/// Tags of the probe (the slot [`crate::base::tags::BOOTSTRAP`]).
const DATA: u32 = *crate::base::tags::BOOTSTRAP.start();
const ACK: u32 = DATA + 1;
const RESULT: u32 = DATA + 2;

/// The probe's result: the slowest link's seconds per byte (`f64` bits), the smallest
/// burst and node 0's cores, little-endian `u64` each.
const RESULT_BYTES: usize = 24;

/// How long a probe message may take before the probe gives up, and `init` with it (the
/// priming transfer at `hcrun --link-rate`'s slowest rate, 100 kbit/s, takes 3 s).
const TIMEOUT: Duration = Duration::from_secs(60);

/// What this node kept of the probe's result, once `run` is over.
#[derive(Clone, Copy)]
struct Kept {
    /// The measured seconds per byte of the slowest link and the smallest burst.
    link: Option<(f64, usize)>,
    /// Node 0's count of the cores the ranks share (`select::machine::local_cores`), as
    /// every node received it with the result (`None` where no result is sent).
    cores: Option<usize>,
}

static KEPT: OnceLock<Kept> = OnceLock::new();

/// The cores of the job as node 0 counts them, once the probe's result is in (every node
/// of a cube of dimension ≥ 1, the probe measuring or not); `None` before, and in a job of
/// one node or the in-process transport. The automatic choice uses it, so that ranks on
/// machines of different sizes, or under launchers that do not set
/// `HYPERCUBE_MODEL_CORES` alike (Slurm, Hydra), still choose alike.
pub(crate) fn job_cores() -> Option<usize> {
    KEPT.get().and_then(|k| k.cores)
}

/// The links' seconds per byte as the probe (or `HYPERCUBE_MODEL_LINK_TW_NS`) found it;
/// `None` when nothing was measured (a job of one node, the host, the in-process
/// transport, `HYPERCUBE_LINK_PROBE=0`).
pub(crate) fn measured() -> Option<f64> {
    if let Some(v) = override_ns() {
        return Some(v * 1e-9);
    }
    KEPT.get().and_then(|k| k.link).map(|(tw, _)| tw)
}

/// The bytes the links pass at core speed after idle time ([`burst_bytes`], the smallest
/// of node 0's links; at most [`PRIME`]), or `HYPERCUBE_MODEL_LINK_BURST`; 0 when nothing
/// was measured.
pub(crate) fn measured_burst() -> usize {
    if let Some(b) = std::env::var("HYPERCUBE_MODEL_LINK_BURST")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return b;
    }
    if override_ns().is_some() {
        return 0;
    }
    KEPT.get().and_then(|k| k.link).map_or(0, |(_, b)| b)
}

fn override_ns() -> Option<f64> {
    std::env::var("HYPERCUBE_MODEL_LINK_TW_NS")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// Run the probe (every node of the cube calls this in `init`); a failure is an error of
/// `init`, as any other of start-up.
pub(crate) fn run(t: &dyn Transport) -> Result<()> {
    let (me, dim) = (t.rank(), t.dim());
    let off = std::env::var("HYPERCUBE_LINK_PROBE").is_ok_and(|v| v.trim() == "0");
    if me == HOST || dim == 0 {
        let _ = KEPT.set(Kept {
            link: None,
            cores: None,
        });
        return Ok(());
    }
    // Skipped, the probe measures nothing (a NaN rate, which every node keeps as `None`),
    // but node 0 still sends its result: the cores.
    let skip = off || override_ns().is_some();
    let (tw, burst, cores) = if me == 0 {
        let (slowest, burst) = if skip {
            (f64::NAN, 0)
        } else {
            let mut worst = (0.0f64, PRIME);
            for k in 0..dim {
                let (tw, b) = time_link(t, 1 << k)?;
                worst = (worst.0.max(tw), worst.1.min(b));
            }
            worst
        };
        let cores = crate::collectives::select::local_cores();
        let mut bits = BytesMut::with_capacity(RESULT_BYTES);
        bits.put_u64_le(slowest.to_bits());
        bits.put_u64_le(burst as u64);
        bits.put_u64_le(cores as u64);
        let bits = bits.freeze();
        let sends = (1..(1u32 << dim))
            .map(|r| t.isend(r, RESULT, Parts::from(bits.clone())))
            .collect::<Result<Vec<_>>>()?;
        for s in sends {
            t.wait_send(s)?;
        }
        (slowest, burst, cores)
    } else {
        if !skip && me.is_power_of_two() {
            answer(t)?;
        }
        let m = recv(t, 0, RESULT)?;
        let mut words = m.data().as_ref();
        if words.len() != RESULT_BYTES {
            return Err(Error::Bootstrap(format!(
                "the link probe's result from node 0 has {} bytes, not {RESULT_BYTES} \
                 ({OTHER_BUILD})",
                words.len()
            )));
        }
        let (tw, burst, cores) = (
            f64::from_bits(words.get_u64_le()),
            words.get_u64_le(),
            words.get_u64_le(),
        );
        (
            tw,
            usize::try_from(burst).unwrap_or(PRIME).min(PRIME),
            usize::try_from(cores).unwrap_or(1).max(1),
        )
    };
    let tw = (tw.is_finite() && tw > 0.0).then_some(tw);
    tracing::debug!(
        "link probe: {:?} ns per byte, burst {burst} bytes",
        tw.map(|v| v * 1e9)
    );
    let _ = KEPT.set(Kept {
        link: tw.map(|tw| (tw, burst)),
        cores: Some(cores),
    });
    Ok(())
}

fn send(t: &dyn Transport, dest: u32, tag: u32, len: usize) -> Result<()> {
    let tok = t.isend(dest, tag, Parts::from(Bytes::from(vec![0u8; len])))?;
    t.wait_send(tok)
}

fn recv(t: &dyn Transport, from: u32, tag: u32) -> Result<crate::base::message::Message> {
    let tok = t.post_recv(Select::internal(Some(from), tag))?;
    t.wait_recv(tok, Some(TIMEOUT))
}

/// Node 0: seconds per byte of its link to `peer`, and its burst (see the module docs).
fn time_link(t: &dyn Transport, peer: u32) -> Result<(f64, usize)> {
    // A small round trip: the part of the timed one that is not the bytes.
    let t0 = Instant::now();
    send(t, peer, DATA, 1)?;
    recv(t, peer, ACK)?;
    let small = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    send(t, peer, DATA, PRIME)?;
    recv(t, peer, ACK)?;
    let prime = t0.elapsed().as_secs_f64();
    // The timed transfers take about [`TIMED_SECS`] at the rate the priming one suggests
    // (an overestimate of the rate, by the burst), between [`TIMED_MIN`] and [`TIMED`]
    // bytes: start-up stays short on slow links (the bucket is empty after the priming
    // transfer either way).
    let rate = PRIME as f64 / prime.max(1e-9);
    let size = ((rate * TIMED_SECS) as usize).clamp(TIMED_MIN, TIMED);
    // The best of several: a core that another process held for a moment slows one. At
    // least [`TIMED_RUNS`]; more while they stay within the time two would take at the
    // estimated rate, up to [`TIMED_RUNS_MAX`] — on fast links (loopback) a run takes a
    // fraction of a millisecond, and under load (another job, a build) the best of two
    // sometimes measured loopback slower than the wire threshold
    // (`Machine::WIRE_FACTOR`), so the automatic choices changed from run to run.
    let mut best = f64::INFINITY;
    let (mut runs, mut spent) = (0, 0.0);
    while another_run(runs, spent) {
        let t0 = Instant::now();
        send(t, peer, DATA, size)?;
        recv(t, peer, ACK)?;
        let took = t0.elapsed().as_secs_f64();
        best = best.min(took);
        spent += took;
        runs += 1;
    }
    // The end of the timed runs: an empty transfer, not answered.
    send(t, peer, DATA, 0)?;
    let tw = seconds_per_byte(small, best, size);
    Ok((tw, burst_bytes(small, prime, tw)))
}

/// The burst of a link whose round trip of 1 byte took `small` seconds and of [`PRIME`]
/// bytes, sent on the idle link, `prime`, at `tw` seconds per byte: the bytes that did not
/// wait for the wire, between 0 and [`PRIME`]. Anything else that slowed the priming
/// transfer makes it smaller, never larger.
fn burst_bytes(small: f64, prime: f64, tw: f64) -> usize {
    let on_wire = ((prime - small) / tw).max(0.0);
    (PRIME as f64 - on_wire).clamp(0.0, PRIME as f64) as usize
}

/// The smallest timed transfer.
const TIMED_MIN: usize = 16 << 10;

/// About how long a timed transfer should take.
const TIMED_SECS: f64 = 0.02;

/// Timed transfers per link, at least.
const TIMED_RUNS: usize = 2;

/// Timed transfers per link, at most (fast links: see `time_link`).
const TIMED_RUNS_MAX: usize = 8;

/// Whether to time another transfer after `runs` that took `spent` seconds in all: at
/// least [`TIMED_RUNS`], and more, up to [`TIMED_RUNS_MAX`], while they stay within the
/// time [`TIMED_RUNS`] should take ([`TIMED_SECS`] each) — so only on fast links.
fn another_run(runs: usize, spent: f64) -> bool {
    runs < TIMED_RUNS || (runs < TIMED_RUNS_MAX && spent < TIMED_SECS * TIMED_RUNS as f64)
}

/// Seconds per byte from the round trips of a 1-byte and a `bytes`-byte message.
fn seconds_per_byte(small: f64, big: f64, bytes: usize) -> f64 {
    ((big - small) / bytes as f64).max(f64::MIN_POSITIVE)
}

/// Node 0's neighbour: answer its transfers — the small one, the priming one and the
/// timed ones — until the empty one that ends them.
fn answer(t: &dyn Transport) -> Result<()> {
    // Bounded, as node 0's runs are (a peer that never ends them is another version).
    for _ in 0..2 + TIMED_RUNS_MAX + 1 {
        if recv(t, 0, DATA)?.data().is_empty() {
            return Ok(());
        }
        send(t, 0, ACK, 1)?;
    }
    Err(Error::Bootstrap(format!(
        "the link probe from node 0 sent more than {} transfers ({OTHER_BUILD})",
        2 + TIMED_RUNS_MAX
    )))
}

/// What a probe message that does not follow this build's probe says about its sender.
const OTHER_BUILD: &str =
    "a rank of another version of hypercube? run every rank from the same build";

#[cfg(test)]
mod tests {
    #[test]
    fn a_100_mbit_link_is_80_ns_per_byte() {
        // 256 KiB at 12.5 MB/s plus a 0.1 ms round trip.
        let big = 262144.0 / 12.5e6 + 1e-4;
        let tw = super::seconds_per_byte(1e-4, big, super::TIMED);
        assert!((tw * 1e9 - 80.0).abs() < 0.01, "{}", tw * 1e9);
    }

    /// Loopback (256 KiB in ~0.2 ms) is timed eight times, a 100 Mbit/s link (~20 ms a
    /// transfer) twice.
    #[test]
    fn fast_links_are_timed_more_often_than_slow_ones() {
        let runs = |each: f64| {
            (0..)
                .take_while(|&n| super::another_run(n, n as f64 * each))
                .count()
        };
        assert_eq!(runs(2e-4), super::TIMED_RUNS_MAX);
        assert_eq!(runs(0.021), super::TIMED_RUNS);
        assert_eq!(runs(5.0), super::TIMED_RUNS);
    }

    #[test]
    fn the_priming_transfer_tells_the_burst() {
        use super::{burst_bytes, PRIME};
        let (small, tw) = (1e-4, 80e-9);
        // 96 KiB of the 128 KiB went at once, the rest at 12.5 MB/s.
        let prime = small + (PRIME - (96 << 10)) as f64 * tw;
        let b = burst_bytes(small, prime, tw);
        assert!(b.abs_diff(96 << 10) < 8, "{b}");
        // A plain wire: every byte waited for it.
        assert_eq!(burst_bytes(small, small + PRIME as f64 * tw, tw), 0);
        // Slower than the wire (a core held elsewhere): still none, never negative.
        assert_eq!(burst_bytes(small, small + 2.0 * PRIME as f64 * tw, tw), 0);
        // All of it at once: the burst is at least PRIME, and reads as PRIME.
        assert_eq!(burst_bytes(small, small, tw), PRIME);
    }
}
