//! Node program: rank 0 computes for the given milliseconds (no library calls), then sends
//! to every other rank, which waits for it meanwhile. A slow rank is not a deadlock.

use anyhow::Result;
use hypercube::{MsgType, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let ms: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(3000);
    if node.mynode() == 0 {
        let t = std::time::Instant::now();
        let mut x = 1u64;
        while t.elapsed() < std::time::Duration::from_millis(ms) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
        }
        std::hint::black_box(x);
        for r in 1..node.numnodes() {
            node.send(r, MsgType(1), b"done")?;
        }
    } else {
        node.recv(Select::from_node(0, TypeSel::Is(1)))?;
    }
    println!("OK");
    Ok(())
}
