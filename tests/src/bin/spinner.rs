//! Node program: rank 0 polls with `iprobe` for a message nobody sends, the others wait in
//! `recv` for rank 0. `spinner spin`: rank 0 does nothing but poll — a deadlock the
//! launcher must name. `spinner compute MS`: rank 0 computes for MS milliseconds, looking
//! at `iprobe` every 5 ms, then sends to everyone — a slow rank, not a deadlock.

use anyhow::Result;
use hypercube::{MsgType, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "spin".into());
    let ms: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(4000);
    println!("PID {}", std::process::id());
    if node.mynode() != 0 {
        node.recv(Select::from_node(0, TypeSel::Is(1)))?;
        println!("OK");
        return Ok(());
    }
    let start = std::time::Instant::now();
    let limit = std::time::Duration::from_millis(ms);
    let mut x = 1u64;
    while start.elapsed() < limit || mode == "spin" {
        if node.iprobe(TypeSel::Is(2))?.is_some() {
            break;
        }
        if mode == "compute" {
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_millis(5) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
        }
    }
    std::hint::black_box(x);
    for r in 1..node.numnodes() {
        node.send(r, MsgType(1), b"done")?;
    }
    println!("OK");
    Ok(())
}
