//! Node program: steady traffic on every link, checked.
//! `linkload ROUNDS BYTES [PAUSE_MS [alltoall]]`.
//!
//! Each round, every rank exchanges BYTES with its neighbor across each dimension in turn
//! (`sendrecv`, so every link carries data both ways), checks what came (its sender, round
//! and dimension, and a checksum of the bytes), then joins an allreduce of the round
//! number; then it sleeps PAUSE_MS (default 0). With `alltoall`, each round also runs a
//! typed all-to-all of BYTES per block into the caller's memory (`alltoall_into`) by e-cube
//! routes with every block in flight — blocks that neighbours pass on as they arrive and
//! that are read straight into the result — and checks every element. Prints `PID n` first
//! (for tests that take a link down under it), then `OK linkload <rounds> <bytes received>`.

use anyhow::{ensure, Context, Result};
use hypercube::collectives::Op;
use hypercube::{MsgType, Select, TypeSel};
use hypercube_tests::SplitMix64 as Rng;

const TY: u32 = 11;

/// BYTES of a sender's round and dimension: a 16-byte header (sender, round, dimension,
/// checksum of the rest), then pseudo-random bytes.
fn fill(src: u32, round: u32, dim: u32, len: usize) -> Vec<u8> {
    let len = len.max(16);
    let mut rng = Rng(u64::from(src) << 40 ^ u64::from(round) << 8 ^ u64::from(dim));
    let mut v = vec![0u8; len];
    for b in v[16..].iter_mut() {
        *b = rng.next_u64() as u8;
    }
    v[0..4].copy_from_slice(&src.to_le_bytes());
    v[4..8].copy_from_slice(&round.to_le_bytes());
    v[8..12].copy_from_slice(&dim.to_le_bytes());
    let sum = v[16..]
        .iter()
        .fold(0u32, |h, &x| h.rotate_left(5) ^ u32::from(x));
    v[12..16].copy_from_slice(&sum.to_le_bytes());
    v
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let usage = "usage: linkload ROUNDS BYTES [PAUSE_MS [alltoall]]";
    let rounds: u32 = args.next().context(usage)?.parse().context(usage)?;
    let bytes: usize = args.next().context(usage)?.parse().context(usage)?;
    let pause: u64 = args
        .next()
        .map(|s| s.parse())
        .transpose()
        .context(usage)?
        .unwrap_or(0);
    let alltoall = match args.next().as_deref() {
        None => false,
        Some("alltoall") => true,
        Some(other) => anyhow::bail!("{usage} (not {other:?})"),
    };
    println!("PID {}", std::process::id());
    let (me, d) = (node.mynode(), node.cube().dim());
    let mut got = 0u64;
    for round in 0..rounds {
        for k in 0..d {
            let peer = me ^ (1 << k);
            let m = node.sendrecv(
                peer,
                MsgType(TY),
                fill(me, round, k, bytes),
                Select::from_node(peer, TypeSel::Is(TY)),
            )?;
            ensure!(
                m.data()[..] == fill(peer, round, k, bytes)[..],
                "round {round}, dimension {k}: the message from node {peer} is not what it sent"
            );
            got += m.data().len() as u64;
        }
        let sum = node.cube().allreduce(&[u64::from(round)], Op::Sum)?;
        ensure!(
            sum[0] == u64::from(round) << d,
            "round {round}: the allreduce gave {}",
            sum[0]
        );
        if alltoall {
            got += all_to_all(&node, round, bytes)?;
        }
        if pause > 0 {
            std::thread::sleep(std::time::Duration::from_millis(pause));
        }
    }
    println!("OK linkload {rounds} {got}");
    Ok(())
}

/// Element `j` of the block from `src` to `dest` in round `round`.
fn element(src: u32, dest: u32, round: u32, j: usize) -> u64 {
    u64::from(src) << 48 ^ u64::from(dest) << 32 ^ u64::from(round) << 20 ^ j as u64
}

/// One round's all-to-all into the caller's memory by e-cube routes (`alltoall/ecube.rs`),
/// every element checked; returns the bytes received.
fn all_to_all(node: &hypercube::Node, round: u32, bytes: usize) -> Result<u64> {
    let (me, p) = (node.mynode(), node.numnodes());
    let n = (bytes / 8).max(1);
    let data: Vec<u64> = (0..p)
        .flat_map(|t| (0..n).map(move |j| element(me, t, round, j)))
        .collect();
    let mut out = vec![0u64; data.len()];
    node.cube()
        .with(hypercube::collectives::Algorithm::Ecube)
        .alltoall_into(&data, &mut out)?;
    for (s, block) in out.chunks(n).enumerate() {
        let s = s as u32;
        if let Some(j) = (0..n).find(|&j| block[j] != element(s, me, round, j)) {
            anyhow::bail!(
                "round {round}: all-to-all element {j} of the block from node {s} is {:#x}, \
                 not {:#x}",
                block[j],
                element(s, me, round, j)
            );
        }
    }
    Ok((out.len() * 8) as u64)
}
