//! Every node exchanges a message with its antipode (all bits flipped: d hops away, so
//! every message is forwarded by d-1 intermediate nodes).
//!
//! `cargo run --release -p launcher -- --dim 4 --example antipodal`
use hypercube::{MsgType, Select, TypeSel};

fn main() -> anyhow::Result<()> {
    let node = hypercube::init()?;
    let (me, p) = (node.mynode(), node.numnodes());
    let anti = me ^ (p - 1);
    let text = format!("greetings from node {me}");
    let req = node.isend(anti, MsgType(3), text.into_bytes())?;
    let m = node.recv(Select::from_node(anti, TypeSel::Is(3)))?;
    req.wait()?;
    let got = String::from_utf8_lossy(m.data());
    anyhow::ensure!(got == format!("greetings from node {anti}"), "got {got:?}");
    println!("node {me} <- node {anti} ({} hops): {got}", node.cubedim());
    Ok(())
}
