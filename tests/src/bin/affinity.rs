//! Node program: prints the cores this rank may run on (`Cpus_allowed_list` of
//! `/proc/self/status`), as `rank R cpus LIST` — for the test of `hcrun --bind-to core`.

use anyhow::{Context, Result};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let status = std::fs::read_to_string("/proc/self/status").context("/proc/self/status")?;
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .context("no Cpus_allowed_list in /proc/self/status")?
        .trim()
        .to_string();
    println!("rank {} cpus {list}", node.mynode());
    node.cube().barrier()?;
    Ok(())
}
