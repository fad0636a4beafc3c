//! The trace's start-up clock exchange: ranks whose clock is not rank 0's (another host)
//! estimate their offset to it by NTP-style ping-pongs over the links, so that `hctrace`
//! can put every rank's events on rank 0's clock (`docs/tracing.md`). Runs inside `init`
//! when tracing is on, on reserved tags ([`crate::base::tags::TRACE`]), its waits not traced.

use std::time::Duration;

use hypercube_topology::NodeId;

use crate::base::ids::HOST;
use crate::trace::{emit, now, on, startup_work, CLOCK_ID};

/// Tags of the start-up clock exchange (the slot [`crate::base::tags::TRACE`]): requests to
/// rank 0 and its replies.
const CLOCK_PING: u32 = *crate::base::tags::TRACE.start();
const CLOCK_REPLY: u32 = CLOCK_PING + 1;
/// Rank 0's turn to a rank: start pinging.
const CLOCK_GO: u32 = CLOCK_PING + 2;

/// Ping-pongs a rank makes with rank 0 when their clocks differ.
const CLOCK_SAMPLES: u32 = 16;

/// How long the clock exchange waits for one message before it gives up (the job then
/// runs with this rank's clock uncorrected).
const CLOCK_TIMEOUT: Duration = Duration::from_secs(20);

/// One clock sample: NTP's offset ((t1 − t0) + (t2 − t3)) / 2 and round trip
/// (t3 − t0) − (t2 − t1), where t0, t3 are this rank's send and receive times and t1, t2
/// rank 0's receive and reply times.
pub(crate) fn clock_sample(t0: u64, t1: u64, t2: u64, t3: u64) -> (i64, u64) {
    let (t0, t1, t2, t3) = (t0 as i128, t1 as i128, t2 as i128, t3 as i128);
    let offset = ((t1 - t0) + (t2 - t3)) / 2;
    let rtt = ((t3 - t0) - (t2 - t1)).max(0);
    (
        offset.clamp(i64::MIN as i128, i64::MAX as i128) as i64,
        rtt.min(u64::MAX as i128) as u64,
    )
}

fn u64_at(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// Estimate this rank's clock offset to rank 0's and record it (a `clock` line), when
/// tracing is on. Every node of the cube takes part (the host does not: it is on the
/// launcher's machine, and its offset is taken as 0). A rank first sends its clock id:
/// if rank 0's is the same (same kernel boot, so the same `CLOCK_MONOTONIC`) the offset
/// is exactly 0 and one round trip is all; otherwise [`CLOCK_SAMPLES`] ping-pongs, and the
/// sample with the smallest round trip gives the offset. Rank 0 serves the ranks one after
/// the other. A failure is a warning: the trace then has no offset for the rank.
pub(crate) fn estimate_clock(t: &Tr) {
    if !on() {
        return;
    }
    let (me, dim) = (t.rank(), t.dim());
    if me == HOST || dim == 0 {
        return;
    }
    let id = CLOCK_ID.get().cloned().unwrap_or_default();
    let res = startup_work(|| {
        if me == 0 {
            clock_serve(t, (1u32 << dim) - 1, &id).map(|()| (0, 0, 0, true))
        } else {
            clock_ask(t, &id)
        }
    });
    match res {
        Ok((offset, rtt, samples, same)) => emit(format_args!(
            "{{\"ev\":\"clock\",\"ref\":0,\"offset_ns\":{offset},\"rtt_ns\":{rtt},\"samples\":{samples},\"same_clock\":{same}}}"
        )),
        Err(e) => tracing::warn!(
            "trace: the clock offset to rank 0 was not estimated ({e}); this rank's times are merged uncorrected"
        ),
    }
}

type Tr = dyn crate::transport::Transport;

fn clock_send(t: &Tr, dest: NodeId, tag: u32, data: Vec<u8>) -> Result<(), String> {
    let send = || {
        let tok = t.isend(
            dest,
            tag,
            crate::base::parts::Parts::from(bytes::Bytes::from(data)),
        )?;
        t.wait_send(tok)
    };
    send().map_err(|e| format!("sending to node {dest}: {e}"))
}

fn clock_recv(
    t: &Tr,
    from: Option<NodeId>,
    tag: u32,
) -> Result<crate::base::message::Message, String> {
    let tok = t
        .post_recv(crate::base::message::Select::internal(from, tag))
        .map_err(|e| e.to_string())?;
    t.wait_recv(tok, Some(CLOCK_TIMEOUT))
        .map_err(|e| format!("waiting for the clock exchange: {e}"))
}

/// Rank 0: one rank after the other (so that no ping queues behind another rank's), tell
/// it to go, then answer its pings until it says it is done (a ping whose first byte is
/// 1). A ping is `[0][t0: u64][clock id]`; the reply `[t1: u64][t2: u64][same: u8]`.
fn clock_serve(t: &Tr, others: u32, id: &str) -> Result<(), String> {
    for r in 1..=others {
        clock_send(t, r, CLOCK_GO, Vec::new())?;
        // Bounded: a rank sends at most CLOCK_SAMPLES pings, then its done.
        for _ in 0..=CLOCK_SAMPLES {
            let m = clock_recv(t, Some(r), CLOCK_PING)?;
            let t1 = now();
            let d = m.data();
            if d.first() != Some(&0) {
                break;
            }
            let same = d.get(9..).is_some_and(|their| their == id.as_bytes()) && !id.is_empty();
            let mut reply = Vec::with_capacity(17);
            reply.extend_from_slice(&t1.to_le_bytes());
            reply.extend_from_slice(&now().to_le_bytes());
            reply.push(same as u8);
            clock_send(t, r, CLOCK_REPLY, reply)?;
        }
    }
    Ok(())
}

/// A rank other than 0: ping rank 0 (see [`clock_serve`]); (offset, round trip, samples,
/// same clock).
fn clock_ask(t: &Tr, id: &str) -> Result<(i64, u64, u32, bool), String> {
    let mut best: Option<(i64, u64)> = None;
    let mut n = 0;
    let mut same = false;
    // Wait for this rank's turn.
    clock_recv(t, Some(0), CLOCK_GO)?;
    let result = (|| {
        for _ in 0..CLOCK_SAMPLES {
            let mut p = Vec::with_capacity(9 + id.len());
            p.push(0);
            let t0 = now();
            p.extend_from_slice(&t0.to_le_bytes());
            p.extend_from_slice(id.as_bytes());
            clock_send(t, 0, CLOCK_PING, p)?;
            let m = clock_recv(t, Some(0), CLOCK_REPLY)?;
            let t3 = now();
            let d = m.data();
            let (Some(t1), Some(t2), Some(s)) = (u64_at(d, 0), u64_at(d, 8), d.get(16)) else {
                return Err(format!(
                    "a clock reply of {} bytes from rank 0 (17 expected)",
                    d.len()
                ));
            };
            if *s == 1 {
                same = true;
                return Ok(());
            }
            n += 1;
            let (off, rtt) = clock_sample(t0, t1, t2, t3);
            if best.map_or(true, |(_, r)| rtt < r) {
                best = Some((off, rtt));
            }
        }
        Ok(())
    })();
    // Always say done, so rank 0 does not wait for this rank.
    let done = clock_send(t, 0, CLOCK_PING, vec![1]);
    result?;
    done?;
    if same {
        return Ok((0, 0, 0, true));
    }
    let (off, rtt) = best.unwrap_or((0, 0));
    Ok((off, rtt, n, false))
}

#[cfg(test)]
mod tests {
    use super::clock_sample;

    #[test]
    fn ntp_offset_of_a_skewed_clock() {
        // Rank 0's clock is 1000 ns ahead; 100 ns each way, 50 ns at rank 0.
        let (t0, t1, t2, t3) = (10_000, 11_100, 11_150, 10_250);
        assert_eq!(clock_sample(t0, t1, t2, t3), (1000, 200));
        // Asymmetric: 300 ns out, 100 ns back: the error is half the difference.
        assert_eq!(clock_sample(10_000, 11_300, 11_300, 10_400), (1100, 400));
    }
}
