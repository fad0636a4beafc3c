//! The point-to-point benchmarks between rank 0 and its partner (`--peer`): `latency`,
//! half the round trip of a ping-pong, and `bw`, [`WINDOW`] messages in flight and then
//! a 4-byte acknowledgement — OSU's `osu_latency` and `osu_bw`, as `osu_mpi.c` runs them.

use std::time::Instant;

use bytes::Bytes;
use hypercube::{MsgType, Node, Select, TypeSel};
use hypercube_bench::osu::{self, WINDOW};

use super::{say, Args};

/// `latency`: for each size, the mean of half the round trip between rank 0 and its
/// partner; the other ranks wait.
pub(crate) fn latency(node: &Node, lo: u64, hi: u64, args: &Args, a: &Bytes) -> anyhow::Result<()> {
    say(node, &osu::title_line("OSU-style hypercube Latency Test"));
    say(node, &osu::header_line(osu::COL_LATENCY));
    let me = node.mynode();
    let peer = args.peer;
    let ty = MsgType(1);
    for s in osu::sizes(lo, hi) {
        let n = osu::iters_for(s, args.iters, 10000, 1000);
        let skip = osu::warmup_for(s, args.warmup, 100, 10);
        let msg = a.slice(..s as usize);
        let t = timed(node, n, skip, || {
            if me == 0 {
                node.send(peer, ty, msg.clone())?;
                node.recv(Select::from_node(peer, TypeSel::Is(ty.0)))?;
            } else if me == peer {
                node.recv(Select::from_node(0, TypeSel::Is(ty.0)))?;
                node.send(0, ty, msg.clone())?;
            }
            Ok(())
        })?;
        let us = t * 1e6 / (2.0 * n as f64);
        say(node, &osu::row_line(s, us));
    }
    Ok(())
}

/// `bw`: for each size, the bytes per second of [`WINDOW`] messages in flight from rank 0
/// to its partner, each window acknowledged.
pub(crate) fn bw(node: &Node, lo: u64, hi: u64, args: &Args, a: &Bytes) -> anyhow::Result<()> {
    say(node, &osu::title_line("OSU-style hypercube Bandwidth Test"));
    say(node, &osu::header_line(osu::COL_BANDWIDTH));
    let me = node.mynode();
    let peer = args.peer;
    let (data, ack) = (MsgType(100), MsgType(101));
    for s in osu::sizes(lo, hi) {
        let n = osu::iters_for(s, args.iters, 100, 20);
        let skip = osu::warmup_for(s, args.warmup, 10, 2);
        let msg = a.slice(..s as usize);
        let t = timed(node, n, skip, || {
            if me == 0 {
                let reqs = (0..WINDOW)
                    .map(|_| node.isend(peer, data, msg.clone()))
                    .collect::<hypercube::Result<Vec<_>>>()?;
                for r in reqs {
                    r.wait()?;
                }
                node.recv(Select::from_node(peer, TypeSel::Is(ack.0)))?;
            } else if me == peer {
                let reqs = (0..WINDOW)
                    .map(|_| node.irecv(Select::from_node(0, TypeSel::Is(data.0))))
                    .collect::<hypercube::Result<Vec<_>>>()?;
                for r in reqs {
                    r.wait()?;
                }
                node.send(0, ack, a.slice(..4))?;
            }
            Ok(())
        })?;
        let mbs = s as f64 / 1e6 * n as f64 * WINDOW as f64 / t;
        say(node, &osu::row_line(s, mbs));
    }
    Ok(())
}

/// After a barrier, `skip` untimed iterations of `iteration`, then `n` timed ones: their
/// seconds (each rank its own clock; rank 0 prints).
fn timed(
    node: &Node,
    n: u64,
    skip: u64,
    mut iteration: impl FnMut() -> hypercube::Result<()>,
) -> anyhow::Result<f64> {
    node.cube().barrier()?;
    let mut t0 = Instant::now();
    for i in 0..n + skip {
        if i == skip {
            t0 = Instant::now();
        }
        iteration()?;
    }
    Ok(t0.elapsed().as_secs_f64())
}
