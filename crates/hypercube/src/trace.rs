//! Message tracing (`docs/tracing.md`): when `HYPERCUBE_TRACE=PREFIX` is set, each rank
//! of a TCP job records what it does into `PREFIX.rank-N` (`PREFIX.rank-host` for the
//! host), one JSON object a line: user and collective sends and receives, frames it
//! forwards for others, waits that blocked, and utility / collective calls as intervals.
//! `hctrace merge` (or `hcrun --trace`) joins the files into one Chrome / Perfetto trace.
//!
//! Off by default, and then free: every hook is one relaxed load of [`on`]; no thread, no
//! buffer. On, a hook formats its line and appends it to an in-memory buffer under a
//! mutex; it never writes to the file itself. A background thread (`hc-trace-<rank>`)
//! writes the buffer out every [`FLUSH_EVERY`] (sooner when it is half full), so a rank
//! killed by SIGKILL loses at most what it recorded in the last ~100 ms. The memory is
//! bounded: two buffers (the one being filled, the one being written) of at most half of
//! `HYPERCUBE_TRACE_BUFFER` bytes each (default [`DEFAULT_BOUND`]); a record that does not
//! fit is dropped and counted, never waited for. The file says so: a `lost` line after
//! each write that had drops, and the `end` line carries the totals and the buffers' peak.
//!
//! Times are `CLOCK_MONOTONIC` in nanoseconds, shared by all processes of one host
//! (`HYPERCUBE_TRACE_CLOCK_SKEW_NS`, for tests only, shifts one rank's clock). Ranks on
//! other hosts estimate their offset to rank 0's clock at start-up ([`estimate_clock`]).
//! A message is named by its sender and the sender's `msg_id` (the frame header's, which
//! the sender numbers for every message, eager or not), so its send, every hop that
//! forwarded it and its receive can be joined.
//!
//! The lines (all times in ns):
//!
//! ```text
//! {"ev":"start","rank":R,"dim":D,"pid":P,"t":T,"clock_id":"..","mem_bound":B}  first line
//! {"ev":"clock","ref":0,"offset_ns":O,"rtt_ns":R,"samples":N,"same_clock":S}  after start-up
//! {"ev":"send","t0":T,"t1":T,"peer":N,"tag":G,"bytes":B,"id":I}
//! {"ev":"recv","t0":T,"t1":T,"peer":N,"tag":G,"bytes":B,"id":I}
//! {"ev":"fwd","t":T,"src":N,"dest":N,"id":I,"kind":"eager|rts|data","bytes":B,"link":L}
//! {"ev":"wait","t0":T,"t1":T,"what":"..."}
//! {"ev":"call","t0":T,"t1":T,"name":"...","alg":"...","k":K,"base":N,"bytes":B,"root":N|null}
//! {"ev":"lost","t":T,"records":N,"bytes":B}      records dropped since the last write
//! {"ev":"end","t":T,"records":N,"dropped":N,"dropped_bytes":B,"mem_peak":B,"mem_bound":B}
//! ```
//!
//! `offset_ns` is what to add to this rank's times to get rank 0's clock.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use hypercube_topology::NodeId;

use crate::ids::HOST;

/// The environment variable that turns tracing on: the prefix of the per-rank files.
pub(crate) const ENV_TRACE: &str = "HYPERCUBE_TRACE";

/// The recorder's memory bound in bytes (both buffers together; `64K`, `8M` also work).
pub(crate) const ENV_BUFFER: &str = "HYPERCUBE_TRACE_BUFFER";

/// For tests only: shift this process's trace clock, as if it ran on another host.
/// `NS` (every rank) or `RANK=NS,RANK=NS,...` (those ranks), signed nanoseconds.
pub(crate) const ENV_SKEW: &str = "HYPERCUBE_TRACE_CLOCK_SKEW_NS";

/// The default memory bound: 8 MiB a rank (two buffers of 4 MiB).
pub(crate) const DEFAULT_BOUND: usize = 8 << 20;

/// The smallest bound accepted (a smaller one is raised to it).
const MIN_BOUND: usize = 2 << 10;

/// How often the background thread writes the buffer to the file.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_millis(100);

static ON: AtomicBool = AtomicBool::new(false);
static SKEW: AtomicI64 = AtomicI64::new(0);
static REC: OnceLock<Recorder> = OnceLock::new();

/// The per-process recorder (exists only when tracing is on).
struct Recorder {
    /// The buffer being filled, and its accounting.
    state: Mutex<State>,
    /// Wakes the writer thread (half full, or stop).
    wake: Condvar,
    /// The file, and the second buffer (the one being written, then kept for reuse).
    out: Mutex<(File, Vec<u8>)>,
    /// Each buffer's bound: half of the memory bound.
    half: usize,
    /// This rank (for the writer thread's name).
    rank: NodeId,
    /// The writer thread runs (started, and finish not reached).
    writer: AtomicBool,
}

#[derive(Default)]
struct State {
    buf: Vec<u8>,
    /// The capacity of the other buffer, for the accounting.
    spare_cap: usize,
    /// The largest buffer memory seen (both buffers' capacities).
    peak: usize,
    records: u64,
    /// Dropped since the last write, and in all.
    lost: u64,
    lost_bytes: u64,
    dropped: u64,
    dropped_bytes: u64,
    /// The writer thread was asked to write early.
    woken: bool,
    stop: bool,
}

impl Recorder {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Append one line (with its newline), or count it as dropped.
    fn push(&self, line: &[u8]) {
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
    fn write_out(&self) {
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
    fn run(&self) {
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

/// Is tracing on? One relaxed load: the only cost of the hooks when it is off.
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

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

/// Parse a byte count: `123`, `64K`, `64KiB`, `8M`, `8MiB`, `1G`.
fn parse_bytes(v: &str) -> Option<usize> {
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
fn bound_from_env() -> usize {
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

static CLOCK_ID: OnceLock<String> = OnceLock::new();

/// Start recording if `HYPERCUBE_TRACE` is set (a TCP rank calls this once it knows who it
/// is). A file that cannot be created is a warning, not an error: the job runs untraced.
pub(crate) fn start(rank: NodeId, dim: u32) {
    let Some(prefix) = std::env::var_os(ENV_TRACE) else {
        return;
    };
    if prefix.is_empty() || REC.get().is_some() {
        return;
    }
    let name = if rank == HOST {
        "host".to_string()
    } else {
        rank.to_string()
    };
    let mut path = prefix;
    path.push(format!(".rank-{name}"));
    let mut file = match File::create(&path) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("tracing off: cannot create {}: {e}", path.to_string_lossy());
            return;
        }
    };
    let skew = skew_from_env(rank);
    SKEW.store(skew.unwrap_or(0), Ordering::Relaxed);
    let id = CLOCK_ID.get_or_init(|| clock_id(skew)).clone();
    let bound = bound_from_env();
    let t = now();
    let pid = std::process::id();
    let first = writeln!(
        file,
        "{{\"ev\":\"start\",\"rank\":{},\"dim\":{dim},\"pid\":{pid},\"t\":{t},\"clock_id\":{},\"mem_bound\":{bound}}}",
        Node(rank),
        Str(&id)
    );
    if let Err(e) = first {
        tracing::warn!("tracing off: cannot write {}: {e}", path.to_string_lossy());
        return;
    }
    let half = bound / 2;
    let rec = Recorder {
        state: Mutex::new(State {
            buf: Vec::with_capacity(half.min(64 << 10)),
            ..State::default()
        }),
        wake: Condvar::new(),
        out: Mutex::new((file, Vec::new())),
        half,
        rank,
        writer: AtomicBool::new(false),
    };
    {
        let mut s = rec.state();
        s.peak = s.buf.capacity();
    }
    if REC.set(rec).is_err() {
        return;
    }
    let Some(rec) = REC.get() else { return };
    rec.writer.store(true, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name(format!("hc-trace-{}", Node(rec.rank)))
        .spawn(move || rec.run());
    if let Err(e) = spawned {
        rec.writer.store(false, Ordering::SeqCst);
        // Still on: callers that park, finalize and the exit write the buffer.
        tracing::warn!(
            "trace: cannot start the writer thread ({e}); writing at waits and the end only"
        );
    }
    // SAFETY: registers a plain `extern "C"` function; it only touches statics.
    unsafe { libc::atexit(at_exit) };
    ON.store(true, Ordering::Relaxed);
}

/// `exit(3)` (a rank that aborts, loses its launcher, or returns from `main`): write what
/// is buffered.
extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(rec) = REC.get() {
            rec.write_out();
        }
    });
}

// The line a hook formats, reused per thread.
thread_local! {
    static LINE: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Record one event line (tracing is on).
pub(crate) fn emit(line: std::fmt::Arguments<'_>) {
    let Some(rec) = REC.get() else { return };
    LINE.with(|l| {
        let Ok(mut l) = l.try_borrow_mut() else {
            return;
        };
        l.clear();
        let _ = std::fmt::Write::write_fmt(&mut *l, line);
        l.push('\n');
        rec.push(l.as_bytes());
        if l.capacity() > 4096 {
            *l = String::new();
        }
    });
}

/// A caller is about to park, or the transport ends: write buffered events now, unless
/// the writer thread runs (it writes within [`FLUSH_EVERY`]; a parking caller need not pay
/// for a write).
pub(crate) fn flush() {
    if let Some(rec) = REC.get() {
        if !rec.writer.load(Ordering::Relaxed) {
            rec.write_out();
        }
    }
}

/// The rank leaves the job: everything to the file, then a last line with the totals;
/// the writer thread stops.
pub(crate) fn finish() {
    let Some(rec) = REC.get() else { return };
    rec.write_out();
    let (line, already) = {
        let mut s = rec.state();
        let already = s.stop;
        s.stop = true;
        (
            format!(
                "{{\"ev\":\"end\",\"t\":{},\"records\":{},\"dropped\":{},\"dropped_bytes\":{},\"mem_peak\":{},\"mem_bound\":{}}}\n",
                now(),
                s.records,
                s.dropped,
                s.dropped_bytes,
                s.peak,
                rec.half * 2
            ),
            already,
        )
    };
    rec.writer.store(false, Ordering::SeqCst);
    rec.wake.notify_all();
    if already {
        return;
    }
    let mut out = rec.out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = out.0.write_all(line.as_bytes());
}

/// Tags of the start-up clock exchange (the slot [`crate::tags::TRACE`]): requests to
/// rank 0 and its replies.
const CLOCK_PING: u32 = *crate::tags::TRACE.start();
const CLOCK_REPLY: u32 = CLOCK_PING + 1;
/// Rank 0's turn to a rank: start pinging.
const CLOCK_GO: u32 = CLOCK_PING + 2;

/// The runtime's own start-up work runs — the link probe, the clock exchange — whose
/// waits are not the program's and are not recorded.
static IN_STARTUP_WORK: AtomicBool = AtomicBool::new(false);

/// Run `f`, the runtime's own start-up work inside `init` (no other thread of the program
/// runs yet), with its waits left out of the trace.
pub(crate) fn startup_work<T>(f: impl FnOnce() -> T) -> T {
    IN_STARTUP_WORK.store(true, Ordering::Relaxed);
    let out = f();
    IN_STARTUP_WORK.store(false, Ordering::Relaxed);
    out
}

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
            crate::parts::Parts::from(bytes::Bytes::from(data)),
        )?;
        t.wait_send(tok)
    };
    send().map_err(|e| format!("sending to node {dest}: {e}"))
}

fn clock_recv(t: &Tr, from: Option<NodeId>, tag: u32) -> Result<crate::message::Message, String> {
    let tok = t
        .post_recv(crate::message::Select::internal(from, tag))
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
/// A node number as JSON (the host is `"host"`).
pub(crate) struct Node(pub NodeId);

impl std::fmt::Display for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0 == HOST {
            f.write_str("\"host\"")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

/// A string as a JSON string literal.
pub(crate) struct Str<'a>(pub &'a str);

impl std::fmt::Display for Str<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
                c => write!(f, "{c}")?,
            }
        }
        f.write_str("\"")
    }
}

/// Is `tag` one the trace leaves out (the runtime's own control messages: the finalize
/// barrier; the start-up link probe; the trace's own start-up clock exchange)?
pub(crate) fn hidden(tag: u32) -> bool {
    crate::tags::CONTROL.contains(&tag)
        || crate::tags::TRACE.contains(&tag)
        || crate::tags::BOOTSTRAP.contains(&tag)
}

/// A message sent (the `isend` part: eager sends are complete when it returns).
pub(crate) fn send(t0: u64, peer: NodeId, tag: u32, bytes: u64, id: u64) {
    if hidden(tag) {
        return;
    }
    emit(format_args!(
        "{{\"ev\":\"send\",\"t0\":{t0},\"t1\":{},\"peer\":{},\"tag\":{tag},\"bytes\":{bytes},\"id\":{id}}}",
        now(),
        Node(peer)
    ));
}

/// A message received (its receive completed).
pub(crate) fn recv(t0: u64, peer: NodeId, tag: u32, bytes: u64, id: u64) {
    if hidden(tag) {
        return;
    }
    emit(format_args!(
        "{{\"ev\":\"recv\",\"t0\":{t0},\"t1\":{},\"peer\":{},\"tag\":{tag},\"bytes\":{bytes},\"id\":{id}}}",
        now(),
        Node(peer)
    ));
}

/// A frame forwarded for others on `link`.
pub(crate) fn forward(src: NodeId, dest: NodeId, id: u64, kind: &str, bytes: u64, link: usize) {
    emit(format_args!(
        "{{\"ev\":\"fwd\",\"t\":{},\"src\":{},\"dest\":{},\"id\":{id},\"kind\":\"{kind}\",\"bytes\":{bytes},\"link\":{link}}}",
        now(),
        Node(src),
        Node(dest)
    ));
}

/// A wait that blocked from `t0` until now, for `what`.
pub(crate) fn wait(t0: u64, what: &str) {
    if IN_STARTUP_WORK.load(Ordering::Relaxed) {
        return;
    }
    emit(format_args!(
        "{{\"ev\":\"wait\",\"t0\":{t0},\"t1\":{},\"what\":{}}}",
        now(),
        Str(what)
    ));
}

/// One utility or collective call in progress; recorded as an interval when dropped.
#[derive(Debug)]
pub(crate) struct Call {
    t0: u64,
    /// The operation's name.
    pub name: String,
    /// The algorithm that runs (empty: the utility has one).
    pub alg: String,
    /// Subcube dimension and lowest node.
    pub k: u32,
    pub base: NodeId,
    /// The call's message size in bytes, where the caller knows it.
    pub bytes: u64,
    /// The root node, for rooted operations where the caller knows it.
    pub root: Option<NodeId>,
}

impl Call {
    /// A call starting now, if tracing is on.
    pub(crate) fn begin(name: &'static str, k: u32, base: NodeId) -> Option<Call> {
        on().then(|| Call {
            t0: now(),
            name: name.to_string(),
            alg: String::new(),
            k,
            base,
            bytes: 0,
            root: None,
        })
    }

    /// An iPSC utility's call on this node's subcube of dimension `k` (tracing on).
    pub(crate) fn utility(
        name: &'static str,
        me: NodeId,
        k: u32,
        root: Option<NodeId>,
        bytes: usize,
    ) -> Option<Call> {
        let mut c = Call::begin(name, k, hypercube_topology::subcube_base(me, k.min(31)))?;
        c.root = root;
        c.bytes = bytes as u64;
        Some(c)
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        emit(format_args!(
            "{{\"ev\":\"call\",\"t0\":{},\"t1\":{},\"name\":{},\"alg\":{},\"k\":{},\"base\":{},\"bytes\":{},\"root\":{}}}",
            self.t0,
            now(),
            Str(&self.name),
            Str(&self.alg),
            self.k,
            Node(self.base),
            self.bytes,
            match self.root {
                Some(r) => Node(r).to_string(),
                None => "null".into(),
            }
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_strings_are_escaped() {
        assert_eq!(Str("a \"b\"\\\n").to_string(), r#""a \"b\"\\\u000a""#);
        assert_eq!(Node(HOST).to_string(), "\"host\"");
        assert_eq!(Node(5).to_string(), "5");
    }

    #[test]
    fn ntp_offset_of_a_skewed_clock() {
        // Rank 0's clock is 1000 ns ahead; 100 ns each way, 50 ns at rank 0.
        let (t0, t1, t2, t3) = (10_000, 11_100, 11_150, 10_250);
        assert_eq!(clock_sample(t0, t1, t2, t3), (1000, 200));
        // Asymmetric: 300 ns out, 100 ns back: the error is half the difference.
        assert_eq!(clock_sample(10_000, 11_300, 11_300, 10_400), (1100, 400));
    }

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes("8MiB"), Some(8 << 20));
        assert_eq!(parse_bytes(" 2 m "), Some(2 << 20));
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("12Q"), None);
    }

    #[test]
    fn the_clock_moves_forward() {
        let a = now();
        let b = now();
        assert!(b >= a && a > 0);
    }
}
