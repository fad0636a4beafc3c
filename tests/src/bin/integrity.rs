//! Node program: random traffic, checked end to end.
//! `integrity SEED MESSAGES [HOLD_MS [MAX_LEN [far] [for=SECS]]]`.
//!
//! Every rank derives the whole job's plan from SEED: each rank sends MESSAGES messages of
//! a random type (0..8), a random size (0 to MAX_LEN, default 256 KiB, log-uniform, so both
//! eager and rendezvous messages) to a random other rank — with `far`, only to ranks at
//! least two links away, so that every message is forwarded by other nodes. So every rank knows exactly what it will
//! receive. It posts all its sends at once (`isend`), receives from any source and any type
//! (every other message into one reused buffer, `Node::recv_into`) until everything planned
//! has come, and checks each message: its header (source, type,
//! sequence number per source and type) and a checksum of its bytes; per source and type
//! the sequence numbers must arrive in order (the runtime's ordering promise). Prints
//! `PID n` first (for fault tests), then `OK integrity <messages> <bytes>`.
//! With HOLD_MS, rank 0 then keeps the job alive that long (a window for fault tests).
//! With `for=SECS` (a soak), the whole of it — a new plan from SEED + round, every message
//! checked — repeats in rounds until SECS have passed (rank 0 decides, every rank follows);
//! the OK line counts all rounds, and each rank prints `RSS minute1=KB end=KB rounds=N`: its
//! resident memory, read after every round, as the median over the rounds that end in the
//! second minute (60–120 s) and over those that end in the last minute (a single reading
//! swings by ±10 % with the size of the round just done).

use anyhow::{bail, ensure, Context, Result};
use hypercube::{MsgType, TypeSel};
use hypercube_tests::SplitMix64 as Rng;

struct Planned {
    src: u32,
    dest: u32,
    ty: u32,
    len: usize,
}

const TYPES: u32 = 8;
const HEADER: usize = 24;

fn plan(seed: u64, p: u32, per_rank: u32, max_len: usize, far: bool) -> Vec<Planned> {
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    let max_bits = u64::from(usize::BITS - max_len.max(1).leading_zeros());
    for src in 0..p {
        let dests: Vec<u32> = (0..p)
            .filter(|&d| d != src && (!far || (d ^ src).count_ones() >= 2))
            .collect();
        for _ in 0..per_rank {
            let dest = if dests.is_empty() {
                src
            } else {
                dests[rng.below(dests.len() as u64) as usize]
            };
            let ty = rng.below(u64::from(TYPES)) as u32;
            // Log-uniform size up to MAX_LEN, at least the header.
            let bits = rng.below(max_bits);
            let len = HEADER + (rng.below(1 << bits) as usize).min(max_len);
            out.push(Planned { src, dest, ty, len });
        }
    }
    out
}

fn fill(src: u32, ty: u32, seq: u64, len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&src.to_le_bytes());
    v.extend_from_slice(&ty.to_le_bytes());
    v.extend_from_slice(&seq.to_le_bytes());
    let mut rng = Rng(u64::from(src) << 40 ^ u64::from(ty) << 32 ^ seq);
    while v.len() + 8 <= len {
        v.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    while v.len() < len {
        v.push(rng.next_u64() as u8);
    }
    // Last 8 bytes of the header: a checksum of the body (FNV-1a).
    let sum = fnv(&v[HEADER..]);
    v[16..24].copy_from_slice(&sum.to_le_bytes());
    v
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ u64::from(*x)).wrapping_mul(0x100_0000_01b3)
    })
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let seed: u64 = args
        .next()
        .context("usage: integrity SEED MESSAGES [HOLD_MS [MAX_LEN [far] [for=SECS]]]")?
        .parse()?;
    let per_rank: u32 = args.next().context("MESSAGES")?.parse()?;
    let hold_ms: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(0);
    let max_len: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(256 << 10);
    let (mut far, mut for_s) = (false, None);
    for a in args {
        match a.as_str() {
            "far" => far = true,
            _ => match a.strip_prefix("for=") {
                Some(v) => for_s = Some(v.parse::<u64>().context("for=SECS")?),
                None => bail!("after MAX_LEN: `far` or `for=SECS`, not {a:?}"),
            },
        }
    }
    println!("PID {}", std::process::id());
    let t0 = std::time::Instant::now();
    let (mut total, mut bytes, mut rounds) = (0u64, 0u64, 0u64);
    // (seconds since the start, resident KiB) after each round of a soak.
    let mut rss = Vec::new();
    loop {
        let (t, b) = round(&node, seed.wrapping_add(rounds), per_rank, max_len, far)?;
        (total, bytes, rounds) = (total + t, bytes + b, rounds + 1);
        let Some(secs) = for_s else { break };
        rss.push((t0.elapsed().as_secs(), rss_kb()?));
        // Every rank has all of this round before any sends the next one's (a receive of
        // any type would take a message of the next round); then rank 0's clock decides.
        node.cube().barrier()?;
        let more = u8::from(t0.elapsed().as_secs() < secs);
        let go = node.cube().bcast(0, bytes::Bytes::from(vec![more]), 1)?;
        if go.first() != Some(&1) {
            break;
        }
    }
    println!("OK integrity {total} {bytes}");
    if let Some(secs) = for_s {
        let m1 = median(&rss, 60..120);
        let end = median(&rss, secs.saturating_sub(60)..u64::MAX);
        println!("RSS minute1={m1} end={end} rounds={rounds}");
    }
    if hold_ms > 0 && node.mynode() == 0 {
        std::thread::sleep(std::time::Duration::from_millis(hold_ms));
    }
    Ok(())
}

/// The median of the readings taken at `secs` (0 if none).
fn median(readings: &[(u64, u64)], secs: std::ops::Range<u64>) -> u64 {
    let mut v: Vec<u64> = readings
        .iter()
        .filter(|(t, _)| secs.contains(t))
        .map(|r| r.1)
        .collect();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// This process's resident memory (VmRSS), in KiB.
fn rss_kb() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .context("no VmRSS in /proc/self/status")
}

/// One plan of the whole job from `seed`, sent, received and checked: the messages and
/// bytes this rank received.
fn round(
    node: &hypercube::Node,
    seed: u64,
    per_rank: u32,
    max_len: usize,
    far: bool,
) -> Result<(u64, u64)> {
    let (me, p) = (node.mynode(), node.numnodes());
    let all = plan(seed, p, per_rank, max_len, far);
    // Sends: sequence numbers per (source, type, dest) — what the receiver checks per
    // (source, type) since it is the only receiver of these.
    let mut seq = std::collections::HashMap::new();
    let mut sends = Vec::new();
    let mut expected = std::collections::HashMap::<(u32, u32), u64>::new();
    for m in &all {
        let s = seq.entry((m.src, m.ty, m.dest)).or_insert(0u64);
        if m.src == me {
            let data = fill(m.src, m.ty, *s, m.len);
            sends.push(node.isend(m.dest, MsgType(m.ty), data)?);
        }
        if m.dest == me {
            *expected.entry((m.src, m.ty)).or_default() += 1;
        }
        *s += 1;
    }
    let total: u64 = expected.values().sum();
    let mut next = std::collections::HashMap::<(u32, u32), u64>::new();
    let mut bytes = 0u64;
    // Every other message is received into this buffer (`Node::recv_into`: over TCP, one of
    // 32 KiB or more is read from the socket straight into it), the rest as messages.
    let mut buf = vec![0u8; HEADER + max_len];
    for i in 0..total {
        let (src, ty, m, d);
        if i % 2 == 0 {
            m = node.recv(TypeSel::Any)?;
            (src, ty) = (m.source(), m.msg_type().0);
            d = &m.data()[..];
        } else {
            let st = node.recv_into(TypeSel::Any, &mut buf)?;
            (src, ty) = (st.source, st.msg_type.0);
            d = &buf[..st.len as usize];
        }
        ensure!(
            d.len() >= HEADER,
            "a message of {} bytes from {src}",
            d.len()
        );
        let hsrc = u32::from_le_bytes(d[0..4].try_into()?);
        let hty = u32::from_le_bytes(d[4..8].try_into()?);
        let hseq = u64::from_le_bytes(d[8..16].try_into()?);
        let sum = u64::from_le_bytes(d[16..24].try_into()?);
        ensure!(
            (hsrc, hty) == (src, ty),
            "message from {src} type {ty} carries the header of {hsrc}/{hty}"
        );
        ensure!(
            fnv(&d[HEADER..]) == sum,
            "corrupted: from {src} type {ty} seq {hseq}"
        );
        let want = next.entry((src, ty)).or_default();
        if hseq != *want {
            bail!("out of order: from {src} type {ty} got seq {hseq}, expected {want}");
        }
        *want += 1;
        bytes += d.len() as u64;
    }
    for s in sends {
        s.wait()?;
    }
    for (k, n) in &expected {
        ensure!(
            next.get(k) == Some(n),
            "from {k:?}: {n} planned, {:?} came",
            next.get(k)
        );
    }
    Ok((total, bytes))
}
