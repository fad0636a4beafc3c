//! Node program for the cross-process collective tests: runs
//! `hypercube_tests::suites::collectives` (every operation, every algorithm, the whole cube
//! and subcubes) across real processes. Prints `OK <op> <scope>` per passed check; any
//! mismatch exits non-zero.

use anyhow::Result;

fn main() -> Result<()> {
    let node = hypercube::init()?;
    for check in hypercube_tests::suites::collectives::run(&node)? {
        println!("OK {check}");
    }
    node.finalize()?;
    Ok(())
}
