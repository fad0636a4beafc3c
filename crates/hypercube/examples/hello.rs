//! Every rank says hello; rank 0 then greets the antipodal node, d hops away (forwarded).
//!
//! `cargo run --release -p launcher -- --dim 3 --example hello`
use hypercube::{MsgType, TypeSel};

fn main() -> anyhow::Result<()> {
    let node = hypercube::init()?;
    let (me, dim) = (node.mynode(), node.cubedim());
    println!("hello from node {me} of {} (a {dim}-cube)", node.numnodes());
    let far = node.numnodes() - 1;
    if me == 0 && far != 0 {
        node.send(far, MsgType(10), b"hi")?;
    }
    if me == far && far != 0 {
        let m = node.recv(TypeSel::Is(10))?;
        println!(
            "node {me} got {:?} from node {} ({} hops away)",
            String::from_utf8_lossy(m.data()),
            m.source(),
            dim
        );
    }
    Ok(())
}
