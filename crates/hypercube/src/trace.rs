//! Message tracing (`docs/tracing.md`): when `HYPERCUBE_TRACE=PREFIX` is set, each rank
//! of a TCP job streams what it does to `PREFIX.rank-N` (`PREFIX.rank-host` for the host),
//! one JSON object a line: user and collective sends and receives, frames it forwards for
//! others, waits that blocked, and utility / collective calls as intervals. `hctrace merge`
//! (or `hcrun --trace`) joins the files into one Chrome / Perfetto trace.
//!
//! Off by default, and then free: every hook is one relaxed load of [`on`]. On, events go
//! through a 64 KiB buffered writer that is written out with the first event more than
//! [`FLUSH_EVERY`] after the last write, whenever a caller parks and at finalize, so memory
//! stays bounded and a rank that dies leaves what it wrote readable (all but what it
//! recorded since it last parked or wrote).
//!
//! Times are `CLOCK_MONOTONIC` in nanoseconds, shared by all processes of one host.
//! A message is named by its sender and the sender's `msg_id` (the frame header's, which
//! the sender numbers for every message, eager or not), so its send, every hop that
//! forwarded it and its receive can be joined.
//!
//! The lines (all times in ns):
//!
//! ```text
//! {"ev":"start","rank":R,"dim":D,"pid":P,"t":T}                 first line of every file
//! {"ev":"send","t0":T,"t1":T,"peer":N,"tag":G,"bytes":B,"id":I}
//! {"ev":"recv","t0":T,"t1":T,"peer":N,"tag":G,"bytes":B,"id":I}
//! {"ev":"fwd","t":T,"src":N,"dest":N,"id":I,"kind":"eager|rts|data","bytes":B,"link":L}
//! {"ev":"wait","t0":T,"t1":T,"what":"..."}
//! {"ev":"call","t0":T,"t1":T,"name":"...","alg":"...","k":K,"base":N,"bytes":B,"root":N|null}
//! {"ev":"end","t":T}                                            at finalize
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use hypercube_topology::NodeId;

use crate::ids::HOST;

/// The environment variable that turns tracing on: the prefix of the per-rank files.
pub(crate) const ENV_TRACE: &str = "HYPERCUBE_TRACE";

/// How long, at most, buffered events wait before they are written to the file (ns).
const FLUSH_EVERY: u64 = 50_000_000;

static ON: AtomicBool = AtomicBool::new(false);
static SINK: OnceLock<Mutex<Sink>> = OnceLock::new();

struct Sink {
    w: BufWriter<File>,
    last_flush: u64,
    dirty: bool,
}

/// Is tracing on? One relaxed load: the only cost of the hooks when it is off.
#[inline(always)]
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The shared monotonic clock, in nanoseconds.
pub(crate) fn now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Start recording if `HYPERCUBE_TRACE` is set (a TCP rank calls this once it knows who it
/// is). A file that cannot be created is a warning, not an error: the job runs untraced.
pub(crate) fn start(rank: NodeId, dim: u32) {
    let Some(prefix) = std::env::var_os(ENV_TRACE) else {
        return;
    };
    if prefix.is_empty() || SINK.get().is_some() {
        return;
    }
    let name = if rank == HOST {
        "host".to_string()
    } else {
        rank.to_string()
    };
    let mut path = prefix;
    path.push(format!(".rank-{name}"));
    let file = match File::create(&path) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("tracing off: cannot create {}: {e}", path.to_string_lossy());
            return;
        }
    };
    let t = now();
    let sink = Sink {
        w: BufWriter::with_capacity(64 << 10, file),
        last_flush: t,
        dirty: false,
    };
    if SINK.set(Mutex::new(sink)).is_ok() {
        let rank_json = if rank == HOST {
            "\"host\"".to_string()
        } else {
            rank.to_string()
        };
        let pid = std::process::id();
        ON.store(true, Ordering::Relaxed);
        emit(format_args!(
            "{{\"ev\":\"start\",\"rank\":{rank_json},\"dim\":{dim},\"pid\":{pid},\"t\":{t}}}"
        ));
        flush();
    }
}

/// Write one event line (tracing is on). Flushes when the last flush is older than
/// [`FLUSH_EVERY`].
pub(crate) fn emit(line: std::fmt::Arguments<'_>) {
    let Some(sink) = SINK.get() else { return };
    let mut s = sink.lock().unwrap_or_else(|p| p.into_inner());
    let _ = s.w.write_fmt(line);
    let _ = s.w.write_all(b"\n");
    s.dirty = true;
    let t = now();
    if t.saturating_sub(s.last_flush) >= FLUSH_EVERY {
        let _ = s.w.flush();
        s.last_flush = t;
        s.dirty = false;
    }
}

/// Write buffered events to the file (a caller about to park, finalize, the end).
pub(crate) fn flush() {
    let Some(sink) = SINK.get() else { return };
    let mut s = sink.lock().unwrap_or_else(|p| p.into_inner());
    if s.dirty {
        let _ = s.w.flush();
        s.dirty = false;
        s.last_flush = now();
    }
}

/// The rank leaves the job: a last line, and everything to the file.
pub(crate) fn finish() {
    if on() {
        emit(format_args!("{{\"ev\":\"end\",\"t\":{}}}", now()));
        flush();
    }
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
/// barrier)?
pub(crate) fn hidden(tag: u32) -> bool {
    crate::tags::CONTROL.contains(&tag)
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
    fn the_clock_moves_forward() {
        let a = now();
        let b = now();
        assert!(b >= a && a > 0);
    }
}
