//! Node program: rank 0 computes for the given milliseconds (no library calls), then sends
//! to every other rank, which waits for it meanwhile. A slow rank is not a deadlock.
//!
//! `slow_root MS threads`: every rank instead waits on a thread of its own for a message
//! from its neighbour across dimension 0 while its main thread computes for MS, then sends
//! that neighbour its message: every wait sees nothing for MS, and still no rank is
//! blocked (a background receiver beside a computation).

use anyhow::Result;
use hypercube::{MsgType, Node, Select, TypeSel};

/// Compute for `ms` milliseconds without a library call.
fn compute(ms: u64) {
    let t = std::time::Instant::now();
    let mut x = 1u64;
    while t.elapsed() < std::time::Duration::from_millis(ms) {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    std::hint::black_box(x);
}

/// The threaded mode (module documentation).
fn beside(node: &Node, ms: u64) -> Result<()> {
    let peer = node.mynode() ^ 1;
    std::thread::scope(|s| {
        let waiter = s.spawn(|| node.recv(Select::from_node(peer, TypeSel::Is(1))));
        compute(ms);
        node.send(peer, MsgType(1), b"done")?;
        let got = waiter
            .join()
            .map_err(|_| anyhow::anyhow!("the waiting thread panicked"))??;
        anyhow::ensure!(&got.data()[..] == b"done", "wrong message");
        Ok(())
    })
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let ms: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3000);
    if args.next().as_deref() == Some("threads") {
        beside(&node, ms)?;
    } else if node.mynode() == 0 {
        compute(ms);
        for r in 1..node.numnodes() {
            node.send(r, MsgType(1), b"done")?;
        }
    } else {
        node.recv(Select::from_node(0, TypeSel::Is(1)))?;
    }
    println!("OK");
    Ok(())
}
