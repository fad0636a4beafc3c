//! Node program for the cross-process test of collectives called with lengths the members
//! disagree on (`hypercube_tests::suites::mismatch`), with blocks below the eager limit
//! (above it a failed call can still leave a sender waiting: `docs/reliability.md`). Prints
//! `OK <check>` per check; a wrong result, another error than `InvalidArgument` or a slow
//! failure exits non-zero.

use anyhow::Result;

fn main() -> Result<()> {
    let node = hypercube::init()?;
    for check in hypercube_tests::suites::mismatch::run_sizes(&node, &[4, 1000])? {
        println!("OK {check}");
    }
    node.finalize()?;
    Ok(())
}
