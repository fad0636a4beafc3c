//! `relay_floor`: the floor for a message that crosses relay processes over loopback TCP —
//! what forwarding costs when every hop ends a TCP connection, with no library in between.
//!
//! A ring of `2 · HOPS` processes joined by loopback TCP connections (`TCP_NODELAY`, the
//! congestion control hypercube's links ask for): process 0 sends SIZE bytes, `HOPS - 1`
//! relays pass them on, the echo process (number `HOPS`) sends them back through
//! `HOPS - 1` other relays to process 0, which reports half the round trip in µs, in the
//! OSU format. `--hops 1` is a direct ping-pong (over two connections, one per
//! direction); `--hops 2` is the path of a hypercube message between nodes two links
//! apart, each forwarded by one node (`osu latency --peer 3` on a 2-cube).
//!
//! A relay passes bytes on either through its own memory (`--relay copy`: `read(2)` into a
//! 1 MiB buffer, `write(2)` out, as a runtime's forwarding thread does) or without them
//! entering user space (`--relay splice`: `splice(2)` socket → pipe → socket, the pipe
//! 1 MiB). Every process blocks in the kernel while it waits. The processes are `fork(2)`ed
//! copies sharing the sockets the first one made, so nothing listens once the ring is up.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::{Parser, ValueEnum};
use hypercube_bench::osu;

/// Loopback TCP through relay processes: the floor under forwarding by processes that end
/// a TCP connection at every hop.
#[derive(Parser, Debug)]
#[command(name = "relay_floor", version)]
struct Args {
    /// Links each way between the measuring process and its echo (1 = direct, 2 = one
    /// relay each way, …; at most 8)
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=8))]
    hops: u32,
    /// How a relay passes the bytes on
    #[arg(long, value_enum, default_value_t = Relay::Copy)]
    relay: Relay,
    /// Sizes MIN:MAX in bytes, doubling (as OSU's -m)
    #[arg(short = 'm', value_name = "MIN:MAX", value_parser = osu::parse_range, default_value = "65536:4194304")]
    range: (u64, u64),
    /// Iterations per size (0 = 10000 up to 8 KiB, 1000 above); sizes above 8 KiB use ITERS/10
    #[arg(short = 'i', value_name = "ITERS", default_value_t = 0)]
    iters: u64,
    /// TCP congestion control of every connection, the first of these the kernel accepts,
    /// or `system` (default: what hypercube's links ask for)
    #[arg(long, value_name = "NAMES", default_value_t = hypercube_bench::links_congestion())]
    congestion: String,
}

/// How a relay passes bytes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Relay {
    /// `read(2)` into a buffer, `write(2)` it out.
    Copy,
    /// `splice(2)` from the socket into a pipe and from the pipe into the next socket.
    Splice,
}

/// The largest block a relay moves at once (its buffer, or its pipe's size).
const BLOCK: usize = 1 << 20;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let plan: Vec<(u64, u64)> = osu::sizes(args.range.0, args.range.1)
        .into_iter()
        .map(|s| (s, osu::iters_for(s, args.iters, 10000, 1000).max(1)))
        .collect();
    let n = 2 * args.hops as usize;
    // Edge k carries bytes from process k to process k + 1 (mod n): (its writer's end,
    // its reader's end).
    let listener = TcpListener::bind("127.0.0.1:0").context("binding a loopback port")?;
    hypercube_bench::set_congestion(listener.as_raw_fd(), &args.congestion)?;
    let addr = listener.local_addr()?;
    let mut edges = Vec::with_capacity(n);
    for _ in 0..n {
        let w = TcpStream::connect(addr).context("connecting on loopback")?;
        let (r, _) = listener.accept().context("accepting on loopback")?;
        for s in [&w, &r] {
            s.set_nodelay(true)?;
            hypercube_bench::set_congestion(s.as_raw_fd(), &args.congestion)?;
        }
        edges.push((w, r));
    }
    drop(listener);
    println!(
        "{}",
        osu::title_line(&format!(
            "Loopback TCP relay floor: ping-pong over {} hop(s) each way, relay by {}",
            args.hops,
            match args.relay {
                Relay::Copy => "read/write",
                Relay::Splice => "splice",
            }
        ))
    );
    println!("{}", osu::header_line(osu::COL_LATENCY));
    std::io::stdout().flush()?;
    let mut children = Vec::new();
    for k in 1..n {
        // SAFETY: this process has one thread; the child only runs this file's code
        // (reads, writes, splices) and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = std::io::Error::last_os_error();
            kill_all(&children);
            return Err(e).context("fork");
        }
        if pid == 0 {
            let run = |edges: Vec<(TcpStream, TcpStream)>| -> anyhow::Result<()> {
                // Keep this process's two ends only, so that a closed ring reads as the end.
                let (input, output) = ends(edges, k - 1, k)?;
                if k == args.hops as usize {
                    echo(&input, &output, &plan)
                } else {
                    relay(&input, &output, args.relay)
                }
            };
            let code = match run(std::mem::take(&mut edges)) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("relay_floor: process {k}: {e:#}");
                    1
                }
            };
            // SAFETY: leaves the child without running the parent's destructors.
            unsafe { libc::_exit(code) };
        }
        children.push(pid);
    }
    let (input, out) = ends(edges, n - 1, 0)?;
    let result = measure(&out, &input, &plan);
    // Closing the ring's sockets ends every relay (end of file), and the echo after its plan.
    drop((out, input));
    let mut failed = 0;
    for pid in &children {
        let mut status = 0;
        // SAFETY: waits for a child this process forked.
        unsafe { libc::waitpid(*pid, &mut status, 0) };
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failed += 1;
        }
    }
    result?;
    if failed > 0 {
        bail!("{failed} of the ring's processes failed (see above)");
    }
    Ok(())
}

/// Of the ring's connections, keep the reading end of edge `from` and the writing end of
/// edge `to`; close every other socket.
fn ends(
    edges: Vec<(TcpStream, TcpStream)>,
    from: usize,
    to: usize,
) -> anyhow::Result<(TcpStream, TcpStream)> {
    let (mut input, mut out) = (None, None);
    for (k, (w, r)) in edges.into_iter().enumerate() {
        if k == from {
            input = Some(r);
        }
        if k == to {
            out = Some(w);
        }
    }
    match (input, out) {
        (Some(i), Some(o)) => Ok((i, o)),
        _ => bail!("the ring has no edge {from} or {to}"),
    }
}

/// Process 0: time each size's ping-pongs, print half the round trip.
fn measure(mut out: &TcpStream, mut input: &TcpStream, plan: &[(u64, u64)]) -> anyhow::Result<()> {
    for &(size, iters) in plan {
        let warm = iters / 10;
        let mut buf = vec![1u8; size.max(1) as usize];
        let b = &mut buf[..size as usize];
        let mut t0 = Instant::now();
        for i in 0..iters + warm {
            if i == warm {
                t0 = Instant::now();
            }
            out.write_all(b).context("sending")?;
            input.read_exact(b).context("receiving")?;
        }
        let us = t0.elapsed().as_secs_f64() * 1e6 / (2.0 * iters as f64);
        println!("{}", osu::row_line(size, us));
        std::io::stdout().flush()?;
    }
    Ok(())
}

/// The echo process: receive each message whole, send it back.
fn echo(mut input: &TcpStream, mut out: &TcpStream, plan: &[(u64, u64)]) -> anyhow::Result<()> {
    for &(size, iters) in plan {
        let mut buf = vec![0u8; size.max(1) as usize];
        let b = &mut buf[..size as usize];
        for _ in 0..iters + iters / 10 {
            input.read_exact(b).context("receiving")?;
            out.write_all(b).context("echoing")?;
        }
    }
    Ok(())
}

/// A relay: pass on what comes until the end of the input.
fn relay(mut input: &TcpStream, mut out: &TcpStream, how: Relay) -> anyhow::Result<()> {
    match how {
        Relay::Copy => {
            let mut buf = vec![0u8; BLOCK];
            loop {
                match input.read(&mut buf) {
                    Ok(0) => return Ok(()),
                    Ok(k) => out.write_all(&buf[..k]).context("relaying")?,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(e).context("relay read"),
                }
            }
        }
        Relay::Splice => {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors.
            if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
                return Err(std::io::Error::last_os_error()).context("pipe");
            }
            let (rd, wr) = (fds[0], fds[1]);
            // A 1 MiB pipe (the system's usual ceiling); a smaller one if refused.
            // SAFETY: fcntl on a pipe this process owns.
            unsafe { libc::fcntl(wr, libc::F_SETPIPE_SZ, BLOCK as libc::c_int) };
            let (src, dst) = (input.as_raw_fd(), out.as_raw_fd());
            loop {
                let got = splice(src, wr, BLOCK)?;
                if got == 0 {
                    return Ok(());
                }
                let mut left = got;
                while left > 0 {
                    left -= splice(rd, dst, left)?;
                }
            }
        }
    }
}

/// One `splice(2)` of up to `len` bytes from `from` to `to`, retried on `EINTR`.
fn splice(from: i32, to: i32, len: usize) -> anyhow::Result<usize> {
    loop {
        // SAFETY: both descriptors are open; null offsets (sockets and pipes have none).
        let r = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE,
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != ErrorKind::Interrupted {
            return Err(e).context("splice");
        }
    }
}

/// Kill the children forked so far (after a failed fork).
fn kill_all(children: &[libc::pid_t]) {
    for pid in children {
        // SAFETY: signals and reaps a child this process forked.
        unsafe {
            libc::kill(*pid, libc::SIGKILL);
            libc::waitpid(*pid, std::ptr::null_mut(), 0);
        }
    }
}
