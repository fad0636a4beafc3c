//! Node program: a large message (default 64 MiB) from node 0 to the antipode and back,
//! checked byte for byte.

use anyhow::{ensure, Result};
use hypercube::{MsgType, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let len: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(64 << 20);
    let (me, p) = (node.mynode(), node.numnodes());
    let far = p - 1;
    let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
    if me == 0 {
        node.send(far, MsgType(1), data.clone())?;
        let m = node.recv(Select::from_node(far, TypeSel::Is(2)))?;
        ensure!(m.len() == len && m.data()[..] == data[..], "echo corrupted");
        println!("OK big {len}");
    }
    if me == far {
        let m = node.recv(Select::from_node(0, TypeSel::Is(1)))?;
        ensure!(
            m.len() == len && m.data()[..] == data[..],
            "message corrupted"
        );
        node.send(0, MsgType(2), m.into_data())?;
    }
    Ok(())
}
