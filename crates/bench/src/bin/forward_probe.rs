//! `forward_probe`: what passing a byte stream on through an intermediate process costs on
//! this machine, by mechanism — the measurement behind `docs/perf/forwarding.md` (issue 15:
//! is zero-copy forwarding worth building into the TCP transport?).
//!
//! Three processes (this program re-executes itself with a hidden `--role`): a **sender**
//! writes framed messages (16-byte header + payload) into a loopback TCP socket, a
//! **forwarder** reads the headers, checks them and moves the frames on into a second loopback
//! socket, and a **sink** reads, checks every header and a sample of the payload, and
//! discards. Forwarder modes:
//!
//! - `direct`: no forwarder, sender → sink (the floor).
//! - `copy`: `recv` into a user buffer of CHUNK bytes, walk the frame headers in it, `send`
//!   it on (what the runtime's links do today: two copies through user space per hop).
//! - `splice`: per frame, `recv` the header (checked in user space), `send` it with
//!   `MSG_MORE`, then move the payload socket → pipe → socket with `splice(2)`
//!   (`SPLICE_F_MOVE | SPLICE_F_MORE`; the pipe enlarged to `/proc/sys/fs/pipe-max-size`).
//! - `zerocopy`: as `copy`, but `send` with `MSG_ZEROCOPY` from a ring of buffers, each
//!   reused only after the kernel's completion for it came on the error queue.
//!
//! Per run it reports the wall time (first write of the sender to the last read of the sink,
//! both on `CLOCK_MONOTONIC`), the throughput, and from `wait4(2)` the CPU (user + system) and
//! the voluntary/involuntary context switches of each process and of the whole pipeline.
//! Sockets have `TCP_NODELAY` and the congestion control asked for (`cubic` as the runtime's
//! links when ranks do not outnumber cores; `system`, this VM's `bbr`, otherwise), and the
//! kernel's buffer autotuning (as the runtime's default `socket_buffer: 0`). Sockets block;
//! the runtime's are non-blocking and polled, which changes wake-ups, not copies.
//!
//! `forward_probe --help` for the options; every process kills itself (`alarm(2)`) after
//! `--timeout` seconds so a hang cannot outlive the run.

use std::io::{BufRead, BufReader, ErrorKind, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};
use std::process::{Child, ChildStdout, Command, Stdio};

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};

/// Bytes of a frame header: magic (4), payload length (4), sequence number (8), little-endian.
const HEADER: usize = 16;
/// The header's first four bytes.
const MAGIC: [u8; 4] = *b"HCFP";
/// The sink checks the payload byte at every multiple of this offset in a frame.
const SAMPLE_EVERY: usize = 4096;
/// `SO_ZEROCOPY` (asm-generic/socket.h; not exported by the `libc` crate).
const SO_ZEROCOPY: libc::c_int = 60;
/// `SO_EE_ORIGIN_ZEROCOPY` (linux/errqueue.h).
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_CODE_ZEROCOPY_COPIED`: the kernel copied the data after all.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;
/// Buffers in the zero-copy forwarder's ring.
const ZC_RING: usize = 8;

/// Three-process loopback forwarding probe: sender → forwarder → sink, by forwarding
/// mechanism; wall time, throughput, CPU and context switches per process and in total.
#[derive(Parser, Debug)]
#[command(name = "forward_probe", version)]
struct Args {
    /// Forwarder modes to measure, comma-separated: direct, copy, splice, zerocopy
    #[arg(long, value_delimiter = ',', default_value = "direct,copy,splice")]
    modes: Vec<Mode>,
    /// Message (frame payload) sizes in bytes, comma-separated; K/M/G suffixes (powers of 2)
    #[arg(long, value_delimiter = ',', value_parser = parse_bytes, default_value = "64K,256K,1M")]
    sizes: Vec<u64>,
    /// Payload bytes per run (rounded up to whole messages); K/M/G suffixes
    #[arg(long, value_parser = parse_bytes, default_value = "2G")]
    bytes: u64,
    /// Repetitions; the modes alternate within each repetition
    #[arg(long, default_value_t = 3)]
    reps: u32,
    /// Congestion controls to run under, comma-separated (`system`: the machine's default)
    #[arg(long, value_delimiter = ',', default_value = "cubic,system")]
    congestion: Vec<String>,
    /// The forwarder's read size for copy/zerocopy (default: the message size, at least
    /// 64 KiB — the runtime's smallest read — and at most 1 MiB); K/M suffixes
    #[arg(long, value_parser = parse_bytes)]
    chunk: Option<u64>,
    /// Ping-pong instead of a stream: ITERS round trips of one message each way (the sink
    /// echoes every frame back through the forwarder, which then forwards both ways, one
    /// thread per direction); reports the one-way time (half the round trip, median) —
    /// the latency of a 2-hop message. `--bytes` is then ignored.
    #[arg(long, value_name = "ITERS", default_value_t = 0)]
    pingpong: u64,
    /// Seconds after which every process of a run kills itself
    #[arg(long, default_value_t = 600)]
    timeout: u32,
    /// Also append one CSV line per run to this file (header written when it is new)
    #[arg(long, value_name = "PATH")]
    csv: Option<std::path::PathBuf>,
    /// Internal: the role of a spawned process
    #[arg(long, hide = true)]
    role: Option<Role>,
    /// Internal: the loopback port a spawned sender/forwarder connects to
    #[arg(long, hide = true, default_value_t = 0)]
    port: u16,
}

/// How the forwarder moves bytes (or `direct`: no forwarder).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Sender → sink, no forwarder.
    Direct,
    /// recv into a user buffer, send it.
    Copy,
    /// socket → pipe → socket with splice(2).
    Splice,
    /// recv into a ring of buffers, send with MSG_ZEROCOPY.
    Zerocopy,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Direct => "direct",
            Mode::Copy => "copy",
            Mode::Splice => "splice",
            Mode::Zerocopy => "zerocopy",
        }
    }
}

/// The role of a spawned process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Role {
    Send,
    Forward,
    Sink,
}

/// `123`, `64K`, `1M`, `2G` (powers of two).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mul) = match s.char_indices().last() {
        Some((i, 'K' | 'k')) => (&s[..i], 1u64 << 10),
        Some((i, 'M' | 'm')) => (&s[..i], 1 << 20),
        Some((i, 'G' | 'g')) => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a byte count (e.g. 65536, 64K, 1M, 2G)"))?;
    n.checked_mul(mul)
        .filter(|&v| v > 0)
        .ok_or_else(|| format!("{s:?}: give a count above 0 and below 2^64"))
}

/// The payload byte at offset `j` of every frame (the sink checks a sample).
fn pattern(j: usize) -> u8 {
    (j as u64).wrapping_mul(0x9E37_79B9).rotate_right(13) as u8
}

/// The forwarder's read size for a message size (see `--chunk`).
fn chunk_for(msg: usize, chunk: Option<u64>) -> usize {
    match chunk {
        Some(c) => c as usize,
        None => msg.clamp(64 << 10, 1 << 20),
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let Some(role) = args.role else {
        return driver(&args);
    };
    // A hung process of a run must not outlive it.
    // SAFETY: alarm(2) has no memory effects; SIGALRM's default action ends the process.
    unsafe { libc::alarm(args.timeout) };
    let msg = *args.sizes.first().context("no --sizes")? as usize;
    let cc = args.congestion.first().context("no --congestion")?;
    let mode = *args.modes.first().context("no --modes")?;
    let out = std::io::stdout();
    match role {
        Role::Sink => {
            let l = listen(cc)?;
            say(&out, &format!("port {}", l.local_addr()?.port()))?;
            let (s, _) = l.accept().context("sink: accepting")?;
            prepare(&s, cc)?;
            let r = if args.pingpong > 0 {
                echo(&s, msg)?
            } else {
                sink(&s, msg)?
            };
            let seg = Segs::of(s.as_raw_fd()).words();
            say(
                &out,
                &format!("end {} {} {} {seg}", r.end_ns, r.bytes, r.frames),
            )
        }
        Role::Forward => {
            let l = listen(cc)?;
            say(&out, &format!("port {}", l.local_addr()?.port()))?;
            let down = connect(args.port, cc)?;
            let (up, _) = l.accept().context("forwarder: accepting")?;
            prepare(&up, cc)?;
            let chunk = chunk_for(msg, args.chunk);
            // Ping-pong: the echoes come back on the same sockets, the other way.
            let back = if args.pingpong > 0 {
                let (u2, d2) = (up.try_clone()?, down.try_clone()?);
                Some(std::thread::spawn(move || forward(mode, &d2, &u2, chunk)))
            } else {
                None
            };
            let mut st = forward(mode, &up, &down, chunk)?;
            if let Some(t) = back {
                let b = t
                    .join()
                    .map_err(|_| anyhow::anyhow!("forwarder: the echo thread panicked"))??;
                st.calls += b.calls;
                st.zc_sends += b.zc_sends;
                st.zc_copied += b.zc_copied;
            }
            let (u, d) = (Segs::of(up.as_raw_fd()), Segs::of(down.as_raw_fd()));
            say(
                &out,
                &format!(
                    "fwd {} {} {} {} {}",
                    st.calls,
                    st.zc_sends,
                    st.zc_copied,
                    u.words(),
                    d.words()
                ),
            )
        }
        Role::Send => {
            let s = connect(args.port, cc)?;
            let frames = args.bytes.div_ceil(msg as u64);
            if args.pingpong > 0 {
                let (start, mut rtt) = pingpong(&s, msg, frames)?;
                say(
                    &out,
                    &format!("start {start} {}", Segs::of(s.as_raw_fd()).words()),
                )?;
                // Statistics over the last 90% (the first round trips warm up).
                let mut rtt = rtt.split_off(rtt.len() / 10);
                rtt.sort_unstable();
                let q = |f: f64| rtt[((rtt.len() - 1) as f64 * f) as usize];
                say(&out, &format!("rtt {} {} {}", q(0.5), q(0.0), q(0.9)))
            } else {
                let start = send(&s, msg, frames)?;
                say(
                    &out,
                    &format!("start {start} {}", Segs::of(s.as_raw_fd()).words()),
                )
            }
        }
    }
}

/// One line to the parent, flushed.
fn say(out: &std::io::Stdout, line: &str) -> anyhow::Result<()> {
    let mut o = out.lock();
    writeln!(o, "{line}")?;
    o.flush()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Sockets

/// A loopback listener on port 0 with the congestion control set (accepted sockets inherit it).
fn listen(cc: &str) -> anyhow::Result<TcpListener> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("binding a loopback port")?;
    hypercube_bench::set_congestion(l.as_raw_fd(), cc)?;
    Ok(l)
}

/// Connect to a loopback port; the socket prepared as the runtime's links are.
fn connect(port: u16, cc: &str) -> anyhow::Result<TcpStream> {
    let s = TcpStream::connect(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .with_context(|| format!("connecting to 127.0.0.1:{port}"))?;
    prepare(&s, cc)?;
    Ok(s)
}

/// `TCP_NODELAY` and the congestion control, as the runtime's links.
fn prepare(s: &TcpStream, cc: &str) -> anyhow::Result<()> {
    s.set_nodelay(true).context("setting TCP_NODELAY")?;
    hypercube_bench::set_congestion(s.as_raw_fd(), cc)
}

/// The system's congestion control (what `system` means), for the report.
fn system_congestion() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `recv(2)` once, retrying on EINTR; 0 = end of stream.
fn recv(fd: RawFd, buf: &mut [u8], flags: libc::c_int) -> std::io::Result<usize> {
    loop {
        // SAFETY: recv writes at most buf.len() bytes into the live buffer.
        let r = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `send(2)` everything in `buf` (blocking socket), with `flags` on every call.
fn send_all(fd: RawFd, mut buf: &[u8], flags: libc::c_int) -> std::io::Result<u64> {
    let mut calls = 0;
    while !buf.is_empty() {
        // SAFETY: send reads at most buf.len() bytes from the live buffer.
        let r = unsafe { libc::send(fd, buf.as_ptr().cast(), buf.len(), flags) };
        calls += 1;
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        buf = &buf[r as usize..];
    }
    Ok(calls)
}

/// Per-socket TCP counters (`TCP_INFO`), read at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Segs {
    /// Segments with data received (a loopback skb counts as one per MSS it carries).
    data_in: u64,
    /// Segments with data sent.
    data_out: u64,
    /// All segments sent (data and pure ACKs).
    all_out: u64,
    /// Retransmitted segments.
    retrans: u64,
}

impl Segs {
    /// The counters of a TCP socket; all zero if the kernel does not give them.
    fn of(fd: RawFd) -> Segs {
        // SAFETY: a zeroed tcp_info is valid; getsockopt writes at most `len` bytes into it.
        let mut ti: libc::tcp_info = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
        // SAFETY: as above, on our own socket.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_INFO,
                (&mut ti as *mut libc::tcp_info).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Segs::default();
        }
        Segs {
            data_in: u64::from(ti.tcpi_data_segs_in),
            data_out: u64::from(ti.tcpi_data_segs_out),
            all_out: u64::from(ti.tcpi_segs_out),
            retrans: u64::from(ti.tcpi_total_retrans),
        }
    }

    /// The four numbers, for a report line.
    fn words(&self) -> String {
        format!(
            "{} {} {} {}",
            self.data_in, self.data_out, self.all_out, self.retrans
        )
    }

    /// Back from four numbers of a report line.
    fn from_words(v: &[u64]) -> Segs {
        Segs {
            data_in: v.first().copied().unwrap_or(0),
            data_out: v.get(1).copied().unwrap_or(0),
            all_out: v.get(2).copied().unwrap_or(0),
            retrans: v.get(3).copied().unwrap_or(0),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Frames

/// Reads a byte stream of frames incrementally and checks every header (and, in the sink,
/// a sample of the payload).
#[derive(Debug)]
struct Framer {
    hdr: [u8; HEADER],
    have: usize,
    left: usize,
    off: usize,
    next_seq: u64,
    msg: usize,
    frames: u64,
    bytes: u64,
}

impl Framer {
    fn new(msg: usize) -> Framer {
        Framer {
            hdr: [0; HEADER],
            have: 0,
            left: 0,
            off: 0,
            next_seq: 0,
            msg,
            frames: 0,
            bytes: 0,
        }
    }

    /// Check a complete header; returns its payload length.
    fn check_header(&self, h: &[u8; HEADER]) -> anyhow::Result<usize> {
        let len = u32::from_le_bytes(h[4..8].try_into().expect("4 bytes")) as usize;
        let seq = u64::from_le_bytes(h[8..16].try_into().expect("8 bytes"));
        if h[..4] != MAGIC || len == 0 || len > self.msg || seq != self.next_seq {
            bail!(
                "bad frame header after {} frames: {:02x?} (want magic {MAGIC:?}, length 1..={}, \
                 sequence {}) — bytes lost, reordered or corrupted on the way",
                self.frames,
                h,
                self.msg,
                self.next_seq
            );
        }
        Ok(len)
    }

    /// Take the next bytes of the stream.
    fn feed(&mut self, mut data: &[u8], sample: bool) -> anyhow::Result<()> {
        self.bytes += data.len() as u64;
        while !data.is_empty() {
            if self.left == 0 {
                let k = (HEADER - self.have).min(data.len());
                self.hdr[self.have..self.have + k].copy_from_slice(&data[..k]);
                self.have += k;
                data = &data[k..];
                if self.have == HEADER {
                    self.left = self.check_header(&self.hdr)?;
                    self.next_seq += 1;
                    self.off = 0;
                    self.have = 0;
                }
            } else {
                let k = self.left.min(data.len());
                if sample {
                    let mut j = self.off.next_multiple_of(SAMPLE_EVERY);
                    while j < self.off + k {
                        if data[j - self.off] != pattern(j) {
                            bail!(
                                "payload byte {j} of frame {} is {:#04x}, sent {:#04x} — the \
                                 forwarder corrupted the stream",
                                self.frames,
                                data[j - self.off],
                                pattern(j)
                            );
                        }
                        j += SAMPLE_EVERY;
                    }
                }
                self.off += k;
                self.left -= k;
                data = &data[k..];
                if self.left == 0 {
                    self.frames += 1;
                }
            }
        }
        Ok(())
    }

    /// The stream ended: it must end on a frame boundary.
    fn finish(&self) -> anyhow::Result<()> {
        if self.have != 0 || self.left != 0 {
            bail!(
                "stream ended inside a frame ({} header bytes, {} payload bytes missing) after \
                 {} whole frames",
                if self.have > 0 { HEADER - self.have } else { 0 },
                self.left,
                self.frames
            );
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// The three roles

/// Send `frames` frames of `msg` payload bytes (header and payload in one buffer, one
/// write each, as the runtime's vectored writes); returns the start time.
fn send(s: &TcpStream, msg: usize, frames: u64) -> anyhow::Result<u64> {
    let mut buf: Vec<u8> = (0..HEADER + msg)
        .map(|i| if i < HEADER { 0 } else { pattern(i - HEADER) })
        .collect();
    buf[..4].copy_from_slice(&MAGIC);
    buf[4..8].copy_from_slice(&(msg as u32).to_le_bytes());
    let start = hypercube_bench::monotonic_ns();
    for seq in 0..frames {
        buf[8..16].copy_from_slice(&seq.to_le_bytes());
        send_all(s.as_raw_fd(), &buf, 0).context("sender: writing")?;
    }
    s.shutdown(std::net::Shutdown::Write)
        .context("sender: closing")?;
    Ok(start)
}

/// `frames` round trips: write a frame, read its echo; returns the start time and the round
/// trip times in ns.
fn pingpong(s: &TcpStream, msg: usize, frames: u64) -> anyhow::Result<(u64, Vec<u64>)> {
    let mut buf: Vec<u8> = (0..HEADER + msg)
        .map(|i| if i < HEADER { 0 } else { pattern(i - HEADER) })
        .collect();
    buf[..4].copy_from_slice(&MAGIC);
    buf[4..8].copy_from_slice(&(msg as u32).to_le_bytes());
    let mut back = vec![0u8; HEADER + msg];
    let mut f = Framer::new(msg);
    let mut rtt = Vec::with_capacity(frames as usize);
    let start = hypercube_bench::monotonic_ns();
    for seq in 0..frames {
        buf[8..16].copy_from_slice(&seq.to_le_bytes());
        let t0 = hypercube_bench::monotonic_ns();
        send_all(s.as_raw_fd(), &buf, 0).context("sender: writing")?;
        read_full(s.as_raw_fd(), &mut back).context("sender: reading the echo")?;
        rtt.push(hypercube_bench::monotonic_ns() - t0);
        f.feed(&back, true)?;
    }
    s.shutdown(std::net::Shutdown::Write)
        .context("sender: closing")?;
    Ok((start, rtt))
}

/// Fill `buf` from the socket; the end of the stream before that is an error.
fn read_full(fd: RawFd, buf: &mut [u8]) -> anyhow::Result<()> {
    let mut off = 0;
    while off < buf.len() {
        let n = recv(fd, &mut buf[off..], 0)?;
        if n == 0 {
            bail!(
                "the stream ended {} bytes before the end of a frame",
                buf.len() - off
            );
        }
        off += n;
    }
    Ok(())
}

/// The ping-pong sink: read whole frames, check them, send each back.
fn echo(s: &TcpStream, msg: usize) -> anyhow::Result<SinkReport> {
    let mut buf = vec![0u8; HEADER + msg];
    let mut f = Framer::new(msg);
    let mut end = hypercube_bench::monotonic_ns();
    loop {
        let n = recv(s.as_raw_fd(), &mut buf, libc::MSG_WAITALL).context("sink: reading")?;
        if n == 0 {
            break;
        }
        if n < buf.len() {
            read_full(s.as_raw_fd(), &mut buf[n..]).context("sink: reading")?;
        }
        f.feed(&buf, true)?;
        send_all(s.as_raw_fd(), &buf, 0).context("sink: echoing")?;
        end = hypercube_bench::monotonic_ns();
    }
    f.finish()?;
    s.shutdown(std::net::Shutdown::Write)
        .context("sink: closing")?;
    Ok(SinkReport {
        end_ns: end,
        bytes: f.bytes,
        frames: f.frames,
    })
}

/// What the sink saw.
struct SinkReport {
    end_ns: u64,
    bytes: u64,
    frames: u64,
}

/// Read until the end of the stream, checking the frames; the time of the last read.
fn sink(s: &TcpStream, msg: usize) -> anyhow::Result<SinkReport> {
    let mut buf = vec![0u8; msg.clamp(64 << 10, 1 << 20)];
    let mut f = Framer::new(msg);
    let mut end = hypercube_bench::monotonic_ns();
    loop {
        let n = recv(s.as_raw_fd(), &mut buf, 0).context("sink: reading")?;
        if n == 0 {
            break;
        }
        end = hypercube_bench::monotonic_ns();
        f.feed(&buf[..n], true)?;
    }
    f.finish()?;
    Ok(SinkReport {
        end_ns: end,
        bytes: f.bytes,
        frames: f.frames,
    })
}

/// Forwarder counters.
#[derive(Debug, Default)]
struct FwdStats {
    /// Data-moving system calls (recv/send/splice).
    calls: u64,
    /// MSG_ZEROCOPY sends.
    zc_sends: u64,
    /// ... of which the kernel reported it copied after all.
    zc_copied: u64,
}

/// Move the frames from `up` to `down` by `mode` until `up` ends; then close `down`.
fn forward(mode: Mode, up: &TcpStream, down: &TcpStream, chunk: usize) -> anyhow::Result<FwdStats> {
    let st = match mode {
        Mode::Direct => bail!("mode direct has no forwarder"),
        Mode::Copy => forward_copy(up, down, chunk)?,
        Mode::Splice => forward_splice(up, down)?,
        Mode::Zerocopy => forward_zerocopy(up, down, chunk)?,
    };
    down.shutdown(std::net::Shutdown::Write)
        .context("forwarder: closing")?;
    Ok(st)
}

/// recv → walk the headers → send.
fn forward_copy(up: &TcpStream, down: &TcpStream, chunk: usize) -> anyhow::Result<FwdStats> {
    let mut buf = vec![0u8; chunk];
    let mut f = Framer::new(u32::MAX as usize);
    let mut st = FwdStats::default();
    loop {
        let n = recv(up.as_raw_fd(), &mut buf, 0).context("forwarder: reading")?;
        st.calls += 1;
        if n == 0 {
            break;
        }
        f.feed(&buf[..n], false)?;
        st.calls += send_all(down.as_raw_fd(), &buf[..n], 0).context("forwarder: writing")?;
    }
    f.finish()?;
    Ok(st)
}

/// A pipe, closed on drop.
struct Pipe {
    r: RawFd,
    w: RawFd,
    size: usize,
}

impl Pipe {
    /// A pipe enlarged to `/proc/sys/fs/pipe-max-size` (as far as the kernel allows).
    fn new() -> anyhow::Result<Pipe> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two fds into the live array.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error()).context("forwarder: creating a pipe");
        }
        let max: libc::c_int = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(1 << 20);
        // SAFETY: fcntl on our own pipe; F_SETPIPE_SZ/F_GETPIPE_SZ take/return an int.
        let size = unsafe {
            libc::fcntl(fds[1], libc::F_SETPIPE_SZ, max);
            libc::fcntl(fds[1], libc::F_GETPIPE_SZ)
        };
        let p = Pipe {
            r: fds[0],
            w: fds[1],
            size: size.max(4096) as usize,
        };
        Ok(p)
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        // SAFETY: closing the two fds this struct owns, once.
        unsafe {
            libc::close(self.r);
            libc::close(self.w);
        }
    }
}

/// `splice(2)` once, retrying on EINTR.
fn splice(from: RawFd, to: RawFd, len: usize, flags: libc::c_uint) -> std::io::Result<usize> {
    loop {
        // SAFETY: splice between two fds we own; null offsets (sockets and pipes).
        let r = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                flags,
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Per frame: recv the header and check it, send it with MSG_MORE, splice the payload
/// socket → pipe → socket.
fn forward_splice(up: &TcpStream, down: &TcpStream) -> anyhow::Result<FwdStats> {
    let pipe = Pipe::new()?;
    let mut f = Framer::new(u32::MAX as usize);
    let mut st = FwdStats::default();
    let (ufd, dfd) = (up.as_raw_fd(), down.as_raw_fd());
    let mut hdr = [0u8; HEADER];
    loop {
        // The header: recv until complete (MSG_WAITALL returns short only at the end).
        let mut have = 0;
        while have < HEADER {
            let n = recv(ufd, &mut hdr[have..], libc::MSG_WAITALL).context("forwarder: reading")?;
            st.calls += 1;
            if n == 0 {
                break;
            }
            have += n;
        }
        if have == 0 {
            break;
        }
        if have < HEADER {
            bail!("forwarder: the stream ended inside a frame header ({have} of {HEADER} bytes)");
        }
        let len = f.check_header(&hdr)?;
        f.next_seq += 1;
        st.calls += send_all(dfd, &hdr, libc::MSG_MORE).context("forwarder: writing a header")?;
        let mut left = len;
        while left > 0 {
            let n = splice(
                ufd,
                pipe.w,
                left.min(pipe.size),
                libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
            )
            .context("forwarder: splice socket → pipe")?;
            st.calls += 1;
            if n == 0 {
                bail!("forwarder: the stream ended inside a frame ({left} payload bytes missing)");
            }
            left -= n;
            let more = if left > 0 { libc::SPLICE_F_MORE } else { 0 };
            let mut m = n;
            while m > 0 {
                let k = splice(pipe.r, dfd, m, libc::SPLICE_F_MOVE | more)
                    .context("forwarder: splice pipe → socket")?;
                st.calls += 1;
                m -= k;
            }
        }
        f.frames += 1;
    }
    Ok(st)
}

/// recv into a ring of buffers, send each with MSG_ZEROCOPY; a buffer is reused only after
/// the kernel's completion notification for its last send.
fn forward_zerocopy(up: &TcpStream, down: &TcpStream, chunk: usize) -> anyhow::Result<FwdStats> {
    let (ufd, dfd) = (up.as_raw_fd(), down.as_raw_fd());
    let one: libc::c_int = 1;
    // SAFETY: setsockopt on our own socket with a live c_int.
    let rc = unsafe {
        libc::setsockopt(
            dfd,
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error())
            .context("forwarder: SO_ZEROCOPY refused (kernel older than 4.14?)");
    }
    let mut ring: Vec<Vec<u8>> = (0..ZC_RING).map(|_| vec![0u8; chunk]).collect();
    // The last send counter used by each buffer (None: free).
    let mut last: Vec<Option<u32>> = vec![None; ZC_RING];
    let mut zc = Completions::default();
    let mut f = Framer::new(u32::MAX as usize);
    let mut st = FwdStats::default();
    let mut i = 0;
    loop {
        if let Some(c) = last[i] {
            while !zc.done(c) {
                zc.wait(dfd, &mut st)?;
            }
            last[i] = None;
        }
        let n = recv(ufd, &mut ring[i], 0).context("forwarder: reading")?;
        st.calls += 1;
        if n == 0 {
            break;
        }
        f.feed(&ring[i][..n], false)?;
        let mut b = &ring[i][..n];
        while !b.is_empty() {
            // SAFETY: send reads at most b.len() bytes of the live buffer, which stays
            // untouched until its completion arrives (checked above before reuse).
            let r = unsafe { libc::send(dfd, b.as_ptr().cast(), b.len(), libc::MSG_ZEROCOPY) };
            st.calls += 1;
            if r < 0 {
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    // Out of option memory for pinned pages: let completions drain.
                    Some(libc::ENOBUFS) => {
                        zc.wait(dfd, &mut st)?;
                        continue;
                    }
                    _ => return Err(e).context("forwarder: zero-copy send"),
                }
            }
            last[i] = Some(zc.sent);
            zc.sent = zc.sent.wrapping_add(1);
            st.zc_sends += 1;
            b = &b[r as usize..];
        }
        i = (i + 1) % ZC_RING;
    }
    f.finish()?;
    // Every buffer must stay alive until the kernel is done with it.
    while zc.sent != zc.low {
        zc.wait(dfd, &mut st)?;
    }
    Ok(st)
}

/// The MSG_ZEROCOPY completion bookkeeping: sends are numbered 0, 1, … per socket; the
/// kernel reports finished ranges `[lo, hi]`.
#[derive(Debug, Default)]
struct Completions {
    /// The next send's number.
    sent: u32,
    /// All sends below this are complete.
    low: u32,
    /// Completed ranges above `low` (out of order).
    ahead: Vec<(u32, u32)>,
}

impl Completions {
    fn done(&self, c: u32) -> bool {
        c.wrapping_sub(self.low) >= self.sent.wrapping_sub(self.low)
    }

    fn complete(&mut self, lo: u32, hi: u32) {
        self.ahead.push((lo, hi));
        loop {
            let low = self.low;
            let Some(p) = self.ahead.iter().position(|&(l, _)| l == low) else {
                break;
            };
            let (_, h) = self.ahead.swap_remove(p);
            self.low = h.wrapping_add(1);
        }
    }

    /// Block until the error queue has notifications, and take them.
    fn wait(&mut self, fd: RawFd, st: &mut FwdStats) -> anyhow::Result<()> {
        let mut pfd = libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        };
        // SAFETY: poll on one live pollfd; POLLERR is always reported.
        let r = unsafe { libc::poll(&mut pfd, 1, 10_000) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == ErrorKind::Interrupted {
                return Ok(());
            }
            return Err(e).context("forwarder: waiting for zero-copy completions");
        }
        if r == 0 {
            bail!("forwarder: no zero-copy completion for 10 s (kernel did not report)");
        }
        loop {
            let mut ctrl = [0u64; 16];
            // SAFETY: zeroed msghdr is a valid "no name, no data" header.
            let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
            m.msg_control = ctrl.as_mut_ptr().cast();
            m.msg_controllen = std::mem::size_of_val(&ctrl) as _;
            // SAFETY: recvmsg with a msghdr pointing at our live control buffer.
            let r = unsafe { libc::recvmsg(fd, &mut m, libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                match e.kind() {
                    ErrorKind::WouldBlock => return Ok(()),
                    ErrorKind::Interrupted => continue,
                    _ => return Err(e).context("forwarder: reading the error queue"),
                }
            }
            // SAFETY: walking the control messages the kernel wrote into `ctrl`.
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&m);
                while !c.is_null() {
                    let level_ok = ((*c).cmsg_level == libc::SOL_IP
                        && (*c).cmsg_type == libc::IP_RECVERR)
                        || ((*c).cmsg_level == libc::SOL_IPV6
                            && (*c).cmsg_type == libc::IPV6_RECVERR);
                    if level_ok {
                        let ee = libc::CMSG_DATA(c) as *const libc::sock_extended_err;
                        let ee = std::ptr::read_unaligned(ee);
                        if ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY {
                            if ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0 {
                                st.zc_copied += u64::from(ee.ee_data.wrapping_sub(ee.ee_info)) + 1;
                            }
                            self.complete(ee.ee_info, ee.ee_data);
                        } else if ee.ee_errno != 0 {
                            bail!(
                                "forwarder: error on the socket: {}",
                                std::io::Error::from_raw_os_error(ee.ee_errno as i32)
                            );
                        }
                    }
                    c = libc::CMSG_NXTHDR(&m, c);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The driver

/// CPU and context switches of one process (wait4).
#[derive(Clone, Copy, Debug, Default)]
struct Usage {
    user: f64,
    sys: f64,
    vcs: u64,
    ivcs: u64,
}

impl Usage {
    fn cpu(&self) -> f64 {
        self.user + self.sys
    }
    fn add(&self, o: &Usage) -> Usage {
        Usage {
            user: self.user + o.user,
            sys: self.sys + o.sys,
            vcs: self.vcs + o.vcs,
            ivcs: self.ivcs + o.ivcs,
        }
    }
}

/// A spawned process of a run: killed and reaped if the run fails before it is waited for.
struct Kid {
    name: &'static str,
    child: Child,
    out: BufReader<ChildStdout>,
    reaped: bool,
}

impl Kid {
    fn spawn(name: &'static str, args: &[String]) -> anyhow::Result<Kid> {
        let exe = std::env::current_exe().context("finding this program")?;
        let mut child = Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("spawning the {name}"))?;
        let out = BufReader::new(child.stdout.take().context("child stdout")?);
        Ok(Kid {
            name,
            child,
            out,
            reaped: false,
        })
    }

    /// The next line the process prints: the numbers after the expected first word, at
    /// least `min` of them.
    fn line(&mut self, first: &str, min: usize) -> anyhow::Result<Vec<u64>> {
        let mut l = String::new();
        self.out.read_line(&mut l)?;
        let mut w = l.split_whitespace();
        if w.next() != Some(first) {
            bail!(
                "the {} printed {l:?} instead of a {first:?} line (it failed: see its error above)",
                self.name
            );
        }
        let v = w
            .map(|x| {
                x.parse::<u64>()
                    .with_context(|| format!("bad number in {l:?}"))
            })
            .collect::<anyhow::Result<Vec<u64>>>()?;
        if v.len() < min {
            bail!(
                "the {}'s line {l:?} has fewer than {min} numbers",
                self.name
            );
        }
        Ok(v)
    }

    /// Wait for the process; its rusage. A failure exit is an error.
    fn wait(&mut self) -> anyhow::Result<Usage> {
        let pid = self.child.id() as libc::pid_t;
        let mut status = 0;
        // SAFETY: a zeroed rusage is valid; wait4 fills it and status.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            // SAFETY: wait4 on our own child with live out-pointers.
            let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
            if r == pid {
                break;
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                return Err(e).with_context(|| format!("waiting for the {}", self.name));
            }
        }
        self.reaped = true;
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            bail!("the {} failed (wait status {status:#x})", self.name);
        }
        let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
        Ok(Usage {
            user: t(ru.ru_utime),
            sys: t(ru.ru_stime),
            vcs: ru.ru_nvcsw as u64,
            ivcs: ru.ru_nivcsw as u64,
        })
    }
}

impl Drop for Kid {
    fn drop(&mut self) {
        if !self.reaped {
            // Only this run's own child, by its handle (never reaped, so the pid is ours).
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One run's figures.
#[derive(Clone, Debug)]
struct Run {
    cc: String,
    mode: Mode,
    msg: u64,
    rep: u32,
    load: f64,
    bytes: u64,
    wall: f64,
    send: Usage,
    fwd: Usage,
    sink: Usage,
    fwd_calls: u64,
    zc_copied: u64,
    /// TCP counters: the sender's socket, the forwarder's two, the sink's.
    seg_send: Segs,
    seg_fwd_up: Segs,
    seg_fwd_down: Segs,
    seg_sink: Segs,
    /// CPU s of the ksoftirqd threads during the run (any process's, but mostly ours).
    softirqd: f64,
    /// Ping-pong: round trip µs (median, min, 90th percentile).
    rtt: Option<(f64, f64, f64)>,
    /// Frames sent (ping-pong: round trips).
    frames: u64,
}

impl Run {
    fn total(&self) -> Usage {
        self.send.add(&self.fwd).add(&self.sink)
    }
    fn gib(&self) -> f64 {
        self.bytes as f64 / (1u64 << 30) as f64
    }
}

/// CPU time (s) the kernel's softirq threads (`ksoftirqd/N`) have used so far: loopback
/// receive work deferred to them is nobody's rusage, so a run counts their share apart.
fn ksoftirqd_cpu() -> f64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0.0;
    };
    let mut ns = 0u64;
    for e in dir.flatten() {
        let p = e.path();
        let is_ksoftirqd = std::fs::read_to_string(p.join("comm"))
            .map(|c| c.starts_with("ksoftirqd/"))
            .unwrap_or(false);
        if is_ksoftirqd {
            // schedstat: time on the CPU (ns), wait time, timeslices.
            ns += std::fs::read_to_string(p.join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
                .unwrap_or(0);
        }
    }
    ns as f64 * 1e-9
}

/// The 1-minute load average.
fn load1() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(f64::NAN)
}

fn one_run(args: &Args, cc: &str, mode: Mode, msg: u64, rep: u32) -> anyhow::Result<Run> {
    let bytes = if args.pingpong > 0 {
        args.pingpong.saturating_mul(msg)
    } else {
        args.bytes
    };
    let base = |role: &str, port: u16| -> Vec<String> {
        let mut v = vec![
            format!("--role={role}"),
            format!("--port={port}"),
            format!("--modes={}", mode.name()),
            format!("--sizes={msg}"),
            format!("--bytes={bytes}"),
            format!("--pingpong={}", args.pingpong),
            format!("--congestion={cc}"),
            format!("--timeout={}", args.timeout),
        ];
        if let Some(c) = args.chunk {
            v.push(format!("--chunk={c}"));
        }
        v
    };
    let load = load1();
    let soft0 = ksoftirqd_cpu();
    let mut sink = Kid::spawn("sink", &base("sink", 0))?;
    let sink_port = sink.line("port", 1)?[0] as u16;
    let mut fwd = if mode == Mode::Direct {
        None
    } else {
        let mut k = Kid::spawn("forwarder", &base("forward", sink_port))?;
        let p = k.line("port", 1)?[0] as u16;
        Some((k, p))
    };
    let to = fwd.as_ref().map_or(sink_port, |(_, p)| *p);
    let mut sender = Kid::spawn("sender", &base("send", to))?;
    let sv = sender.line("start", 1)?;
    let start = sv[0];
    let rtt = if args.pingpong > 0 {
        let v = sender.line("rtt", 3)?;
        Some((v[0] as f64 * 1e-3, v[1] as f64 * 1e-3, v[2] as f64 * 1e-3))
    } else {
        None
    };
    let end = sink.line("end", 3)?;
    let (fwd_calls, zc_copied, seg_fwd_up, seg_fwd_down) = match &mut fwd {
        Some((k, _)) => {
            let v = k.line("fwd", 11)?;
            (
                v[0],
                v[2],
                Segs::from_words(&v[3..7]),
                Segs::from_words(&v[7..11]),
            )
        }
        None => (0, 0, Segs::default(), Segs::default()),
    };
    let send = sender.wait()?;
    let fwd_u = match &mut fwd {
        Some((k, _)) => k.wait()?,
        None => Usage::default(),
    };
    let sink_u = sink.wait()?;
    let softirqd = ksoftirqd_cpu() - soft0;
    let payload = bytes.div_ceil(msg) * msg;
    let frames = bytes.div_ceil(msg);
    if end[1] != payload + frames * HEADER as u64 || end[2] != frames {
        bail!(
            "the sink got {} bytes in {} frames, {} in {frames} were sent",
            end[1],
            end[2],
            payload + frames * HEADER as u64
        );
    }
    Ok(Run {
        cc: cc.to_string(),
        mode,
        msg,
        rep,
        load,
        bytes: payload,
        wall: end[0].saturating_sub(start) as f64 * 1e-9,
        send,
        fwd: fwd_u,
        sink: sink_u,
        fwd_calls,
        zc_copied,
        seg_send: Segs::from_words(&sv[1..]),
        seg_fwd_up,
        seg_fwd_down,
        seg_sink: Segs::from_words(&end[3..]),
        softirqd,
        rtt,
        frames,
    })
}

fn driver(args: &Args) -> anyhow::Result<()> {
    let sys_cc = system_congestion();
    // Check the names before any process is started, so a refusal is one clear error.
    for cc in &args.congestion {
        listen(cc)?;
    }
    println!(
        "# forward_probe: {} GiB per run, modes {:?}, sizes {:?}, congestion {:?} (system = {sys_cc}), \
         {} reps; CPU in s (user+sys from wait4), per GiB of payload; cs = context switches \
         voluntary/involuntary",
        args.bytes as f64 / (1u64 << 30) as f64,
        args.modes.iter().map(|m| m.name()).collect::<Vec<_>>(),
        args.sizes,
        args.congestion,
        args.reps
    );
    let mut csv = match &args.csv {
        Some(p) => {
            let new = !p.exists();
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("opening {}", p.display()))?;
            if new {
                writeln!(
                    f,
                    "cc,mode,msg,rep,load1,bytes,wall_s,send_user,send_sys,fwd_user,fwd_sys,\
                     sink_user,sink_sys,send_vcs,send_ivcs,fwd_vcs,fwd_ivcs,sink_vcs,sink_ivcs,\
                     fwd_calls,zc_copied,ksoftirqd_s,\
                     send_data_out,send_all_out,send_retrans,fwd_up_data_in,fwd_up_all_out,\
                     fwd_down_data_out,fwd_down_all_out,fwd_down_retrans,sink_data_in,sink_all_out"
                )?;
            }
            Some(f)
        }
        None => None,
    };
    let mut runs = Vec::new();
    for rep in 1..=args.reps {
        for cc in &args.congestion {
            for &msg in &args.sizes {
                if msg > u32::MAX as u64 {
                    bail!("message size {msg} is above the 4 GiB a frame header can carry");
                }
                for &mode in &args.modes {
                    let r = one_run(args, cc, mode, msg, rep).with_context(|| {
                        format!("run {rep}: {} with {msg}-byte messages, {cc}", mode.name())
                    })?;
                    let t = r.total();
                    println!(
                        "{:<6} {:<8} {:>8} rep {} load {:5.2} | {:6.3} s {:6.2} GB/s | CPU/GiB \
                         total {:.3} send {:.3} fwd {:.3} sink {:.3} (sys {:.0}%) ksoftirqd {:.3} | cs {}/{}",
                        r.cc,
                        r.mode.name(),
                        r.msg,
                        r.rep,
                        r.load,
                        r.wall,
                        r.bytes as f64 / r.wall / 1e9,
                        t.cpu() / r.gib(),
                        r.send.cpu() / r.gib(),
                        r.fwd.cpu() / r.gib(),
                        r.sink.cpu() / r.gib(),
                        100.0 * t.sys / t.cpu().max(1e-9),
                        r.softirqd / r.gib(),
                        t.vcs,
                        t.ivcs
                    );
                    if let Some((m, lo, p90)) = r.rtt {
                        println!(
                            "       ping-pong: one way (half round trip) median {:.1} µs, min \
                             {:.1}, p90 {:.1}; CPU per round trip {:.1} µs (forwarder {:.1})",
                            m / 2.0,
                            lo / 2.0,
                            p90 / 2.0,
                            t.cpu() * 1e6 / r.frames as f64,
                            r.fwd.cpu() * 1e6 / r.frames as f64
                        );
                    }
                    if let Some(f) = &mut csv {
                        writeln!(
                            f,
                            "{},{},{},{},{:.2},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{},{},{},{},{},{},{},{:.4},{},{},{},{},{},{},{},{},{},{}",
                            r.cc,
                            r.mode.name(),
                            r.msg,
                            r.rep,
                            r.load,
                            r.bytes,
                            r.wall,
                            r.send.user,
                            r.send.sys,
                            r.fwd.user,
                            r.fwd.sys,
                            r.sink.user,
                            r.sink.sys,
                            r.send.vcs,
                            r.send.ivcs,
                            r.fwd.vcs,
                            r.fwd.ivcs,
                            r.sink.vcs,
                            r.sink.ivcs,
                            r.fwd_calls,
                            r.zc_copied,
                            r.softirqd,
                            r.seg_send.data_out,
                            r.seg_send.all_out,
                            r.seg_send.retrans,
                            r.seg_fwd_up.data_in,
                            r.seg_fwd_up.all_out,
                            r.seg_fwd_down.data_out,
                            r.seg_fwd_down.all_out,
                            r.seg_fwd_down.retrans,
                            r.seg_sink.data_in,
                            r.seg_sink.all_out
                        )?;
                    }
                    runs.push(r);
                }
            }
        }
    }
    summary(args, &runs);
    summary_segments(args, &runs);
    if args.pingpong > 0 {
        summary_pingpong(args, &runs);
    }
    Ok(())
}

/// Median and range of `v` as "m [lo–hi]".
fn med(mut v: Vec<f64>, prec: usize) -> String {
    v.sort_by(f64::total_cmp);
    let m = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        (v[v.len() / 2 - 1] + v[v.len() / 2]) / 2.0
    };
    if v.len() == 1 {
        format!("{m:.prec$}")
    } else {
        format!("{m:.prec$} [{:.prec$}–{:.prec$}]", v[0], v[v.len() - 1])
    }
}

/// The Markdown table: per congestion control, size and mode, the median [min–max].
fn summary(args: &Args, runs: &[Run]) {
    println!();
    println!(
        "| cc | msg | mode | wall s | GB/s | CPU s/GiB total | send | forwarder | sink | \
         sys % | ksoftirqd s/GiB | cs/GiB vol | cs/GiB invol | load1 |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for cc in &args.congestion {
        for &msg in &args.sizes {
            for &mode in &args.modes {
                let rs: Vec<&Run> = runs
                    .iter()
                    .filter(|r| &r.cc == cc && r.msg == msg && r.mode == mode)
                    .collect();
                if rs.is_empty() {
                    continue;
                }
                let f = |g: &dyn Fn(&Run) -> f64, p| med(rs.iter().map(|r| g(r)).collect(), p);
                let cc_name = cc_label(cc);
                println!(
                    "| {cc_name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    size_name(msg),
                    mode.name(),
                    f(&|r| r.wall, 3),
                    f(&|r| r.bytes as f64 / r.wall / 1e9, 2),
                    f(&|r| r.total().cpu() / r.gib(), 3),
                    f(&|r| r.send.cpu() / r.gib(), 3),
                    f(&|r| r.fwd.cpu() / r.gib(), 3),
                    f(&|r| r.sink.cpu() / r.gib(), 3),
                    f(&|r| 100.0 * r.total().sys / r.total().cpu().max(1e-9), 0),
                    f(&|r| r.softirqd / r.gib(), 3),
                    f(&|r| r.total().vcs as f64 / r.gib(), 0),
                    f(&|r| r.total().ivcs as f64 / r.gib(), 0),
                    f(&|r| r.load, 1),
                );
            }
        }
    }
}

/// The ping-pong table: one-way time (half round trip) and CPU per round trip.
fn summary_pingpong(args: &Args, runs: &[Run]) {
    println!();
    println!(
        "| cc | msg | mode | one way µs (median of runs' medians) | runs' p90 µs | CPU µs per round \
         trip, total | forwarder | load1 |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for cc in &args.congestion {
        for &msg in &args.sizes {
            for &mode in &args.modes {
                let rs: Vec<&Run> = runs
                    .iter()
                    .filter(|r| &r.cc == cc && r.msg == msg && r.mode == mode && r.rtt.is_some())
                    .collect();
                if rs.is_empty() {
                    continue;
                }
                let f = |g: &dyn Fn(&Run) -> f64, p| med(rs.iter().map(|r| g(r)).collect(), p);
                let rtt = |r: &Run| r.rtt.unwrap_or_default();
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    cc_label(cc),
                    size_name(msg),
                    mode.name(),
                    f(&|r| rtt(r).0 / 2.0, 1),
                    f(&|r| rtt(r).2 / 2.0, 1),
                    f(&|r| r.total().cpu() * 1e6 / r.frames as f64, 1),
                    f(&|r| r.fwd.cpu() * 1e6 / r.frames as f64, 1),
                    f(&|r| r.load, 1),
                );
            }
        }
    }
}

/// The second table: segments and system calls, per MiB of payload, median [min–max].
fn summary_segments(args: &Args, runs: &[Run]) {
    println!();
    println!(
        "| cc | msg | mode | B/data seg hop 1 | B/data seg hop 2 | ACKs/MiB hop 1 | \
         ACKs/MiB hop 2 | retrans/GiB | forwarder syscalls/MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for cc in &args.congestion {
        for &msg in &args.sizes {
            for &mode in &args.modes {
                let rs: Vec<&Run> = runs
                    .iter()
                    .filter(|r| &r.cc == cc && r.msg == msg && r.mode == mode)
                    .collect();
                if rs.is_empty() {
                    continue;
                }
                let f = |g: &dyn Fn(&Run) -> f64, p| med(rs.iter().map(|r| g(r)).collect(), p);
                let mib = |r: &Run| r.bytes as f64 / (1u64 << 20) as f64;
                let wire = |r: &Run| (r.bytes + r.bytes / r.msg * HEADER as u64) as f64;
                let direct = mode == Mode::Direct;
                // Hop 1 ends at the forwarder (or the sink, direct); hop 2 at the sink.
                let hop1_in = |r: &Run| if direct { r.seg_sink } else { r.seg_fwd_up };
                let dash = |x: String| if direct { "–".to_string() } else { x };
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                    cc_label(cc),
                    size_name(msg),
                    mode.name(),
                    f(&|r| wire(r) / hop1_in(r).data_in.max(1) as f64, 0),
                    dash(f(&|r| wire(r) / r.seg_sink.data_in.max(1) as f64, 0)),
                    f(
                        &|r| {
                            let s = hop1_in(r);
                            s.all_out.saturating_sub(s.data_out) as f64 / mib(r)
                        },
                        1
                    ),
                    dash(f(
                        &|r| r.seg_sink.all_out.saturating_sub(r.seg_sink.data_out) as f64 / mib(r),
                        1
                    )),
                    f(
                        &|r| (r.seg_send.retrans + r.seg_fwd_down.retrans) as f64 / r.gib(),
                        0
                    ),
                    dash(f(&|r| r.fwd_calls as f64 / mib(r), 1)),
                );
            }
        }
    }
}

/// A congestion control as the tables name it (`system (bbr)`).
fn cc_label(cc: &str) -> String {
    if cc == "system" {
        format!("system ({})", system_congestion())
    } else {
        cc.to_string()
    }
}

/// `64 KiB`, `1 MiB`, or bytes.
fn size_name(b: u64) -> String {
    if b >= 1 << 20 && b % (1 << 20) == 0 {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b % (1 << 10) == 0 {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(msg: usize, n: u64) -> Vec<u8> {
        let mut v = Vec::new();
        for seq in 0..n {
            v.extend_from_slice(&MAGIC);
            v.extend_from_slice(&(msg as u32).to_le_bytes());
            v.extend_from_slice(&seq.to_le_bytes());
            v.extend((0..msg).map(pattern));
        }
        v
    }

    #[test]
    fn framer_takes_a_stream_in_any_pieces() {
        let s = frames(10_000, 5);
        for piece in [1, 7, 16, 4096, 100_000] {
            let mut f = Framer::new(10_000);
            for c in s.chunks(piece) {
                f.feed(c, true).unwrap();
            }
            f.finish().unwrap();
            assert_eq!((f.frames, f.bytes), (5, s.len() as u64));
        }
    }

    #[test]
    fn framer_refuses_corruption_and_truncation() {
        let mut s = frames(10_000, 2);
        let mut f = Framer::new(10_000);
        f.feed(&s[..s.len() - 1], true).unwrap();
        assert!(f
            .finish()
            .unwrap_err()
            .to_string()
            .contains("inside a frame"));
        s[HEADER + SAMPLE_EVERY] ^= 1;
        let e = Framer::new(10_000).feed(&s, true).unwrap_err();
        assert!(e.to_string().contains("corrupted"), "{e}");
        let mut s = frames(100, 2);
        s[HEADER + 100 + 8] = 9; // second frame's sequence number
        let e = Framer::new(100).feed(&s, false).unwrap_err();
        assert!(e.to_string().contains("bad frame header"), "{e}");
    }

    #[test]
    fn completions_track_out_of_order_ranges() {
        let mut c = Completions {
            sent: 5,
            ..Completions::default()
        };
        assert!(!c.done(0));
        c.complete(2, 3);
        assert!(!c.done(2) && c.low == 0);
        c.complete(0, 1);
        assert!(c.done(3) && !c.done(4) && c.low == 4);
        c.complete(4, 4);
        assert_eq!(c.low, 5);
    }

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("64K"), Ok(65536));
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("100"), Ok(100));
        assert!(parse_bytes("0").is_err() && parse_bytes("x").is_err());
    }

    /// The ping-pong path: the sink echoes, the forwarder moves both directions.
    #[test]
    fn ping_pong_through_every_mode() {
        for mode in [Mode::Copy, Mode::Splice, Mode::Zerocopy] {
            let (msg, iters) = (100_000usize, 20u64);
            let ls = listen("system").unwrap();
            let lf = listen("system").unwrap();
            let (sp, fp) = (
                ls.local_addr().unwrap().port(),
                lf.local_addr().unwrap().port(),
            );
            let sink_t = std::thread::spawn(move || {
                let (s, _) = ls.accept().unwrap();
                echo(&s, msg).unwrap()
            });
            let fwd_t = std::thread::spawn(move || {
                let down = connect(sp, "system").unwrap();
                let (up, _) = lf.accept().unwrap();
                let (u2, d2) = (up.try_clone().unwrap(), down.try_clone().unwrap());
                let back = std::thread::spawn(move || forward(mode, &d2, &u2, 65536));
                let there = forward(mode, &up, &down, 65536);
                (there, back.join().unwrap())
            });
            let s = connect(fp, "system").unwrap();
            let pp = pingpong(&s, msg, iters);
            let (there, back) = fwd_t.join().unwrap();
            if let (Err(e), Mode::Zerocopy) = (&there, mode) {
                // A kernel without SO_ZEROCOPY: nothing to test there.
                assert!(e.to_string().contains("SO_ZEROCOPY"), "{e:#}");
                continue;
            }
            there.unwrap();
            assert_eq!(pp.unwrap().1.len() as u64, iters);
            back.unwrap();
            let r = sink_t.join().unwrap();
            assert_eq!((r.frames, r.bytes), (iters, iters * (msg + HEADER) as u64));
        }
    }

    /// Every forwarder mode moves every byte intact (threads instead of processes).
    #[test]
    fn every_mode_forwards_the_stream_intact() {
        for mode in [Mode::Copy, Mode::Splice, Mode::Zerocopy] {
            for msg in [1000usize, 65536, 300_000] {
                let frames = 40;
                let ls = listen("system").unwrap();
                let lf = listen("system").unwrap();
                let (sp, fp) = (
                    ls.local_addr().unwrap().port(),
                    lf.local_addr().unwrap().port(),
                );
                let sink_t = std::thread::spawn(move || {
                    let (s, _) = ls.accept().unwrap();
                    sink(&s, msg).unwrap()
                });
                let fwd_t = std::thread::spawn(move || {
                    let down = connect(sp, "system").unwrap();
                    let (up, _) = lf.accept().unwrap();
                    forward(mode, &up, &down, chunk_for(msg, None))
                });
                let s = connect(fp, "system").unwrap();
                let sent = send(&s, msg, frames);
                let st = fwd_t.join().unwrap();
                let st = match st {
                    Ok(st) => st,
                    // A kernel without SO_ZEROCOPY: nothing to test there.
                    Err(e) if mode == Mode::Zerocopy && e.to_string().contains("SO_ZEROCOPY") => {
                        continue
                    }
                    Err(e) => panic!("{mode:?} {msg}: {e:#}"),
                };
                sent.unwrap();
                let r = sink_t.join().unwrap();
                assert_eq!(r.frames, frames, "{mode:?} {msg}");
                assert_eq!(r.bytes, frames * (msg + HEADER) as u64, "{mode:?} {msg}");
                assert!(st.calls > 0);
            }
        }
    }
}
