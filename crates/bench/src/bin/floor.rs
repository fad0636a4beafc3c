//! `floor`: the floor for message passing over loopback TCP on this machine, in Rust —
//! two processes, one socket with `TCP_NODELAY`, no library in between. The twin of the C
//! floor `crates/bench/c/tcp_floor.c`: the process spawns itself as its peer.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use hypercube_bench::osu;

/// The environment variable that tells a spawned copy where its parent listens.
const PEER_ENV: &str = "HYPERCUBE_FLOOR_PEER";

/// Raw loopback TCP between two processes (this one and a copy of itself it spawns):
/// the floor under any message-passing runtime on this machine.
///
/// `floor MODE SIZE ITERS` prints one figure as the C floor does (`spin 8 4.05 us`);
/// `floor MODE -m MIN:MAX [-i ITERS] [-x WARMUP]` sweeps sizes in the OSU format;
/// `floor` alone prints the standard set (as `hypercube-bench c-floor` does for the C one).
///
/// Modes: spin = ping-pong with non-blocking reads polled in a loop (as MPI over TCP does);
/// pingpong = ping-pong with blocking reads (sleeping in the kernel); both report half the
/// round trip in µs. stream = one-way bandwidth in MB/s (10^6 bytes/s) with SIZE-byte
/// writes, ended by a 1-byte ack. Warm-up: ITERS/10 unless -x is given.
#[derive(Parser, Debug)]
#[command(name = "floor", version)]
struct Args {
    /// spin | pingpong | stream (omit for the standard set)
    mode: Option<Mode>,
    /// Message size in bytes (the C floor's form)
    size: Option<u64>,
    /// Iterations (the C floor's form)
    iters_pos: Option<u64>,
    /// Sweep sizes MIN:MAX, doubling (OSU form)
    #[arg(short = 'm', value_name = "MIN:MAX", value_parser = osu::parse_range)]
    range: Option<(u64, u64)>,
    /// Iterations per size in a sweep (0 = defaults: 10000 small / 1000 above 8 KiB for
    /// ping-pongs; about 2 GB of traffic for stream); sizes above 8 KiB use ITERS/10
    #[arg(short = 'i', value_name = "ITERS", default_value_t = 0)]
    iters: u64,
    /// Warm-up iterations per size in a sweep (-1 = a tenth of the iterations)
    #[arg(short = 'x', value_name = "WARMUP", default_value_t = -1, allow_negative_numbers = true)]
    warmup: i64,
    /// TCP congestion control of the socket, the first of these the kernel accepts, or
    /// `system` for the machine's default. The default is what hypercube's links ask for
    /// (`Tuning::default().congestion`), so that the floor stays a floor under them.
    #[arg(long, value_name = "NAMES", default_value_t = hypercube_bench::links_congestion())]
    congestion: String,
}

/// What is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Ping-pong, non-blocking reads polled in a loop.
    Spin,
    /// Ping-pong, blocking reads.
    Pingpong,
    /// One-way stream.
    Stream,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Spin => "spin",
            Mode::Pingpong => "pingpong",
            Mode::Stream => "stream",
        }
    }
}

/// One measurement: size, iterations, warm-up.
#[derive(Clone, Copy, Debug)]
struct Point {
    size: u64,
    iters: u64,
    warm: u64,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (mode, points, osu_form) = plan(&args)?;
    match std::env::var(PEER_ENV) {
        Ok(addr) => {
            let addr: SocketAddr = addr.parse().context("bad peer address")?;
            let s = TcpStream::connect(addr).context("connecting to the parent")?;
            set_congestion(&s, &args.congestion)?;
            for (m, p) in &points {
                peer(&s, *m, *p)?;
            }
            Ok(())
        }
        Err(_) => parent(&args, mode, &points, osu_form),
    }
}

/// The measurements to make (the same in both processes).
/// The plan: the sweep's mode (`None` for the standard set), the measurements, and
/// whether to print the OSU format.
type PlanOut = (Option<Mode>, Vec<(Mode, Point)>, bool);

fn plan(args: &Args) -> anyhow::Result<PlanOut> {
    let Some(mode) = args.mode else {
        // The standard set, shared with the C floor.
        let mut v = Vec::new();
        for (name, size, iters) in hypercube_bench::FLOOR_SET {
            let m = Mode::from_str(name, false).map_err(anyhow::Error::msg)?;
            v.push((m, point(size, iters, -1)));
        }
        return Ok((None, v, false));
    };
    if let Some((lo, hi)) = args.range {
        if args.size.is_some() {
            bail!("give either SIZE ITERS or -m MIN:MAX, not both");
        }
        let lo = if mode == Mode::Stream { lo.max(1) } else { lo };
        let v = osu::sizes(lo, hi)
            .into_iter()
            .map(|s| {
                let n = if mode == Mode::Stream && args.iters == 0 {
                    (2_000_000_000 / s.max(1)).clamp(100, 20000)
                } else {
                    osu::iters_for(s, args.iters, 10000, 1000)
                };
                (mode, point(s, n, args.warmup))
            })
            .collect();
        return Ok((Some(mode), v, true));
    }
    match (args.size, args.iters_pos) {
        (Some(size), Some(iters)) => Ok((Some(mode), vec![(mode, point(size, iters, -1))], false)),
        _ => bail!("give SIZE ITERS (e.g. `floor spin 8 20000`) or -m MIN:MAX"),
    }
}

fn point(size: u64, iters: u64, warmup: i64) -> Point {
    let iters = iters.max(1);
    let warm = if warmup >= 0 {
        warmup as u64
    } else {
        iters / 10
    };
    Point { size, iters, warm }
}

fn parent(
    args: &Args,
    mode: Option<Mode>,
    points: &[(Mode, Point)],
    osu_form: bool,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
    // Check the names before a peer is started, so a refusal is one clear error.
    hypercube_bench::set_congestion(listener.as_raw_fd(), &args.congestion)?;
    let addr = listener.local_addr()?;
    let exe = std::env::current_exe().context("finding this program")?;
    let mut child = Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(PEER_ENV, addr.to_string())
        .stdin(Stdio::null())
        .spawn()
        .context("spawning the peer process")?;
    let (s, _) = listener.accept().context("accepting the peer")?;
    set_congestion(&s, &args.congestion)?;
    if osu_form {
        let mode = mode.expect("a sweep has a mode");
        let (title, col) = match mode {
            Mode::Spin => (
                "Raw loopback TCP floor: ping-pong, spinning non-blocking reads",
                osu::COL_LATENCY,
            ),
            Mode::Pingpong => (
                "Raw loopback TCP floor: ping-pong, blocking reads",
                osu::COL_LATENCY,
            ),
            Mode::Stream => ("Raw loopback TCP floor: stream", osu::COL_BANDWIDTH),
        };
        println!("{}", osu::title_line(title));
        println!("{}", osu::header_line(col));
    }
    for (m, p) in points {
        let v = measure(&s, *m, *p)?;
        if osu_form {
            println!("{}", osu::row_line(p.size, v));
        } else {
            let unit = if *m == Mode::Stream { "MB/s" } else { "us" };
            println!("{} {} {v:.2} {unit}", m.name(), p.size);
        }
        std::io::stdout().flush()?;
    }
    drop(s);
    let st = child.wait()?;
    if !st.success() {
        bail!("the peer process failed ({st}); args {args:?}");
    }
    Ok(())
}

/// [`hypercube_bench::set_congestion`] on a connected socket.
fn set_congestion(s: &TcpStream, names: &str) -> anyhow::Result<()> {
    hypercube_bench::set_congestion(s.as_raw_fd(), names)
}

fn prepare(s: &TcpStream, mode: Mode) -> anyhow::Result<()> {
    s.set_nodelay(true)?;
    s.set_nonblocking(mode == Mode::Spin)?;
    Ok(())
}

/// The parent's side of one measurement: returns µs (half round trip) or MB/s.
fn measure(mut s: &TcpStream, mode: Mode, p: Point) -> anyhow::Result<f64> {
    prepare(s, mode)?;
    let mut buf = vec![1u8; p.size.max(1) as usize];
    let n = p.size as usize;
    let mut t0 = Instant::now();
    if mode == Mode::Stream {
        for i in 0..p.iters + p.warm {
            if i == p.warm {
                t0 = Instant::now();
            }
            full_write(&mut s, &buf[..n])?;
        }
        full_read(&mut s, &mut buf[..1])?;
        Ok(p.size as f64 * p.iters as f64 / t0.elapsed().as_secs_f64() / 1e6)
    } else {
        for i in 0..p.iters + p.warm {
            if i == p.warm {
                t0 = Instant::now();
            }
            full_write(&mut s, &buf[..n])?;
            full_read(&mut s, &mut buf[..n])?;
        }
        Ok(t0.elapsed().as_secs_f64() * 1e6 / (2.0 * p.iters as f64))
    }
}

/// The peer's side of one measurement.
fn peer(mut s: &TcpStream, mode: Mode, p: Point) -> anyhow::Result<()> {
    prepare(s, mode)?;
    let mut buf = vec![1u8; p.size.max(1) as usize];
    let n = p.size as usize;
    for _ in 0..p.iters + p.warm {
        full_read(&mut s, &mut buf[..n])?;
        if mode != Mode::Stream {
            full_write(&mut s, &buf[..n])?;
        }
    }
    if mode == Mode::Stream {
        full_write(&mut s, &buf[..1])?;
    }
    Ok(())
}

/// Write everything, retrying on `WouldBlock` (spinning when the socket is non-blocking).
fn full_write(s: &mut &TcpStream, mut b: &[u8]) -> anyhow::Result<()> {
    while !b.is_empty() {
        match s.write(b) {
            Ok(0) => bail!("connection closed while writing"),
            Ok(k) => b = &b[k..],
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e).context("write"),
        }
    }
    Ok(())
}

/// Read exactly `b.len()` bytes, retrying on `WouldBlock` (spinning when non-blocking).
fn full_read(s: &mut &TcpStream, b: &mut [u8]) -> anyhow::Result<()> {
    let mut off = 0;
    while off < b.len() {
        match s.read(&mut b[off..]) {
            Ok(0) => bail!("connection closed while reading"),
            Ok(k) => off += k,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {}
            Err(e) => return Err(e).context("read"),
        }
    }
    Ok(())
}
