//! Node program: node 0 connects to node 1's link listener pretending to be node 0 with a
//! wrong secret; node 1 must reject it and the job must complete normally. `foreign N`:
//! node 0 then floods node 1's listener with N more connections of garbage.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{ensure, Context, Result};
use hypercube::{MsgType, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let me = node.mynode();
    if me == 0 {
        let addr = node.peer_address(1).context("no address for node 1")?;
        // 1. Garbage.
        let mut s = TcpStream::connect(addr)?;
        s.write_all(&[0xAB; 100])?;
        // 2. A well-formed hello for a wrong job, then silence.
        let mut s2 = TcpStream::connect(addr)?;
        let mut hello = [0u8; 40];
        hello[0..4].copy_from_slice(b"HCUB");
        hello[4] = 1;
        s2.write_all(&hello)?;
        s2.set_read_timeout(Some(Duration::from_secs(10)))?;
        let mut buf = [0u8; 56];
        let n = s2.read(&mut buf).unwrap_or(0);
        ensure!(n == 0, "node 1 answered a hello for a wrong job");
        // Other arguments are ignored (the launcher tests pass hyphenated ones through).
        let flood: usize = std::env::args()
            .nth(1)
            .and_then(|a| a.parse().ok())
            .unwrap_or(0);
        for _ in 0..flood {
            let mut s = TcpStream::connect(addr)?;
            s.write_all(&[0xCD; 64])?;
        }
        println!("OK foreign connections rejected");
    }
    // The job carries on: a message around the cube still works.
    let p = node.numnodes();
    node.send((me + 1) % p, MsgType(9), b"still here")?;
    let m = node.recv(Select::from_node((me + p - 1) % p, TypeSel::Is(9)))?;
    ensure!(&m.data()[..] == b"still here");
    println!("OK job carried on");
    Ok(())
}
