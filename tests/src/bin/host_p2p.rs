//! Host and node program in one: started as the host (`hcrun --host`), it collects a
//! message from every node, answers each, and checks that a node outside the cube is an
//! error; started as a node, it greets the host and checks the answer.

use anyhow::{ensure, Result};
use hypercube::{MsgType, Select, TypeSel, HOST};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let p = node.numnodes();
    if node.is_host() {
        let mut seen = vec![false; p as usize];
        for _ in 0..p {
            let m = node.recv(TypeSel::Is(5))?;
            let r = m.source();
            ensure!(r < p && !seen[r as usize], "unexpected source {r}");
            ensure!(m.data()[..] == format!("hello host from {r}").into_bytes()[..]);
            seen[r as usize] = true;
            node.send(r, MsgType(6), format!("hello node {r}").into_bytes())?;
        }
        // The host is not a member of any subcube.
        ensure!(
            node.cube().barrier().is_err(),
            "host took part in a collective"
        );
        ensure!(node.send(p, MsgType(1), b"x").is_err());
        println!("OK host talked to {p} nodes");
    } else {
        let me = node.mynode();
        node.send(
            HOST,
            MsgType(5),
            format!("hello host from {me}").into_bytes(),
        )?;
        let m = node.recv(Select::from_node(HOST, TypeSel::Is(6)))?;
        ensure!(m.data()[..] == format!("hello node {me}").into_bytes()[..]);
        println!("OK node {me} heard from the host");
    }
    Ok(())
}
