//! Message tracing (`docs/tracing.md`): when `HYPERCUBE_TRACE=PREFIX` is set, each rank
//! of a TCP job records what it does into `PREFIX.rank-N` (`PREFIX.rank-host` for the
//! host), one JSON object a line: user and collective sends and receives, frames it
//! forwards for others, waits that blocked, and utility / collective calls as intervals.
//! `hctrace merge` (or `hcrun --trace`) joins the files into one Chrome / Perfetto trace.
//!
//! Off by default, and then free: every hook is one relaxed load of [`on`]; no thread, no
//! buffer. On, a hook formats its line and appends it to an in-memory buffer under a
//! mutex; it never writes to the file itself. A background thread (`hc-trace-<rank>`)
//! writes the buffer out every [`FLUSH_EVERY`](recorder::FLUSH_EVERY) (sooner when it is half full), so a rank
//! killed by SIGKILL loses at most what it recorded in the last ~100 ms. The memory is
//! bounded: two buffers (the one being filled, the one being written) of at most half of
//! `HYPERCUBE_TRACE_BUFFER` bytes each (default [`DEFAULT_BOUND`](recorder::DEFAULT_BOUND)); a record that does not
//! fit is dropped and counted, never waited for. The file says so: a `lost` line after
//! each write that had drops, and the `end` line carries the totals and the buffers' peak.
//!
//! Times are `CLOCK_MONOTONIC` in nanoseconds, shared by all processes of one host
//! (`HYPERCUBE_TRACE_CLOCK_SKEW_NS`, for tests only, shifts one rank's clock). Ranks on
//! other hosts estimate their offset to rank 0's clock at start-up (`boot::clock`).
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

use hypercube_topology::NodeId;

use crate::base::ids::HOST;

mod clock;
mod recorder;

pub(crate) use clock::{now, CLOCK_ID};
#[cfg(test)]
use recorder::parse_bytes;
use recorder::{bound_from_env, Recorder, State};

/// The environment variable that turns tracing on: the prefix of the per-rank files.
pub(crate) use crate::wire::control::ENV_TRACE;

static ON: AtomicBool = AtomicBool::new(false);
static REC: OnceLock<Recorder> = OnceLock::new();

/// Is tracing on? One relaxed load: the only cost of the hooks when it is off.
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

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
    let id = clock::start(rank);
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
/// the writer thread runs (it writes within [`FLUSH_EVERY`](recorder::FLUSH_EVERY); a parking caller need not pay
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
    crate::base::tags::CONTROL.contains(&tag)
        || crate::base::tags::TRACE.contains(&tag)
        || crate::base::tags::BOOTSTRAP.contains(&tag)
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
