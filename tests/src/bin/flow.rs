//! Node program: node 0 sends far more than the receiver takes; the receiver sleeps, then
//! reports its resident memory before receiving everything in order.

use anyhow::{ensure, Result};
use hypercube::{MsgType, Select, TypeSel};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let count: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(2000);
    let len: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(256 << 10);
    let me = node.mynode();
    if me == 0 {
        for i in 0..count {
            let mut v = vec![(i % 251) as u8; len];
            v[..4].copy_from_slice(&i.to_le_bytes());
            node.send(1, MsgType(1), v)?;
        }
        println!("SENT {count}");
    }
    if me == 1 {
        std::thread::sleep(std::time::Duration::from_millis(1500));
        println!("RSS_KIB {}", rss_kib());
        for i in 0..count {
            let m = node.recv(Select::from_node(0, TypeSel::Is(1)))?;
            let got = u32::from_le_bytes(m.data()[..4].try_into()?);
            ensure!(got == i && m.len() == len, "message {got} arrived as #{i}");
        }
        println!("RECEIVED {count}");
    }
    Ok(())
}
