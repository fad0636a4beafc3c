//! Node program: a stream of large messages that other nodes forward. On a 2-cube, rank 0
//! sends `relay [MESSAGES [LEN]]` messages (default 1000 of 32 MiB) to rank 3, which e-cube
//! routing takes through rank 1 (0 → 1 → 3); rank 3 checks each and prints `got N` after
//! every one; ranks 1 and 2 only wait for the end. Every rank prints `PID n` first, so a
//! test can kill the forwarding rank while a frame passes through it.

use anyhow::{ensure, Context, Result};
use hypercube::{MsgType, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    println!("PID {}", std::process::id());
    let mut args = std::env::args().skip(1);
    let count: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let len: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(32 << 20);
    let (me, p) = (node.mynode(), node.numnodes());
    ensure!(p == 4, "relay runs on a 2-cube (--dim 2), not on {p} nodes");
    let data: Vec<u8> = (0..len).map(|i| (i % 253) as u8).collect();
    let data = hypercube::bytes::Bytes::from(data);
    match me {
        0 => {
            for _ in 0..count {
                node.send(3, MsgType(1), data.clone())?;
            }
        }
        3 => {
            for k in 0..count {
                let m = node
                    .recv(Select::from_node(0, TypeSel::Is(1)))
                    .with_context(|| format!("receiving message {k}"))?;
                ensure!(m.data() == &data, "message {k} corrupted");
                println!("got {}", k + 1);
            }
        }
        _ => {}
    }
    node.cube().barrier()?;
    node.finalize()?;
    Ok(())
}
