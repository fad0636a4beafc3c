//! Node program: once the job is wired, rank 0 opens `N` connections (argument 1, default
//! 200) to the launcher's control listener, one after the other, and waits for each to be
//! dropped — a stranger flooding hcrun, which must carry on and not print a line per
//! connection.

use std::io::Read;
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, Result};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let n: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(200);
    if node.mynode() == 0 {
        let addr = std::env::var(hypercube::wire::control::ENV_CONTROL)
            .context("the launcher's control address")?;
        for _ in 0..n {
            let mut s = TcpStream::connect(&addr)?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            // hcrun rejects the connection by closing it.
            let mut buf = [0u8; 16];
            let got = s.read(&mut buf).context("waiting for hcrun to close")?;
            anyhow::ensure!(got == 0, "hcrun answered a stranger");
        }
        println!("OK {n} connections rejected");
    }
    Ok(())
}
