//! A token travels once around the Gray-code ring (every step is one cube link); each node
//! adds its number, and node 0 checks the sum.
//!
//! `cargo run --release -p launcher -- --dim 3 --example ring`
use hypercube::topology::{ring_predecessor, ring_successor};
use hypercube::{MsgType, Select, TypeSel};

fn main() -> anyhow::Result<()> {
    let node = hypercube::init()?;
    let (me, d, p) = (node.mynode(), node.cubedim(), node.numnodes());
    if p == 1 {
        println!("a ring of one: token = 0");
        return Ok(());
    }
    let next = ring_successor(me, d)?;
    let prev = ring_predecessor(me, d)?;
    let from_prev = Select::from_node(prev, TypeSel::Is(5));
    if me == 0 {
        node.send_value(next, MsgType(5), &0u64)?;
        let (sum, _) = node.recv_value::<u64>(from_prev)?;
        let want = (p as u64) * (p as u64 - 1) / 2;
        anyhow::ensure!(sum == want, "token sum {sum}, expected {want}");
        println!("the token went around {p} nodes: sum {sum}");
    } else {
        let (sum, _) = node.recv_value::<u64>(from_prev)?;
        node.send_value(next, MsgType(5), &(sum + me as u64))?;
    }
    Ok(())
}
