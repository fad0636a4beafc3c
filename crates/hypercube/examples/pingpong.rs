//! Ping-pong between neighbors across dimension 0; prints the half round-trip time.
//!
//! `cargo run --release -p launcher -- --dim 1 --example pingpong -- [ROUNDS] [BYTES]`
use std::time::Instant;

use hypercube::{MsgType, Select, TypeSel};

fn main() -> anyhow::Result<()> {
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let bytes: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(8);
    let me = node.mynode();
    if node.cubedim() == 0 {
        println!("pingpong needs at least two nodes (--dim 1)");
        return Ok(());
    }
    let peer = me ^ 1;
    let payload = bytes::Bytes::from(vec![7u8; bytes]);
    let from_peer = Select::from_node(peer, TypeSel::Is(1));
    let t = Instant::now();
    for _ in 0..rounds {
        if me & 1 == 0 {
            node.send(peer, MsgType(1), payload.clone())?;
            let m = node.recv(from_peer)?;
            anyhow::ensure!(m.len() == bytes, "wrong length {}", m.len());
        } else {
            let m = node.recv(from_peer)?;
            node.send(peer, MsgType(1), m.into_data())?;
        }
    }
    if me & 1 == 0 {
        let half = t.elapsed().as_secs_f64() * 1e6 / (2 * rounds) as f64;
        println!("node {me} <-> {peer}: {rounds} round trips of {bytes} B, {half:.2} us one way");
    }
    Ok(())
}
