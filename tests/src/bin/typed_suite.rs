//! Node program for the cross-process test of the typed and serde collectives and of
//! `Node::sendrecv`: over TCP, where a message above the eager limit waits for its
//! receive. Prints `OK <check>` per check; any mismatch exits non-zero.
//!
//! With the argument `send-send`, ranks 0 and 1 instead both `send` 8 MiB to each other
//! before receiving: a deadlock (a cycle of rendezvous sends) that hcrun must name.

use anyhow::Result;
use hypercube::{MsgType, Node, TypeSel};

/// Ranks 0 and 1 both send 8 MiB to each other, then receive: deadlocked on purpose.
fn send_send(node: &Node) -> Result<()> {
    let me = node.mynode();
    if me < 2 {
        node.send(me ^ 1, MsgType(5), vec![0u8; 8 << 20])?;
        node.recv(TypeSel::Is(5))?;
    }
    Ok(())
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let r = if std::env::args().nth(1).as_deref() == Some("send-send") {
        send_send(&node)
    } else {
        hypercube_tests::suites::typed::run(&node).map(|done| {
            for check in done {
                println!("OK {check}");
            }
        })
    };
    if let Err(e) = r {
        node.abort(&format!("{e:#}"));
    }
    node.finalize()?;
    Ok(())
}
