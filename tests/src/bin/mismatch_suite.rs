//! Node program for the cross-process test of collectives called with lengths the members
//! disagree on (`hypercube_tests::suites::mismatch`): `mismatch_suite [ELEMENTS...]` runs
//! the suite with blocks of each number of elements in turn (default `4 1000`, below the
//! eager limit; `tests/tests/mismatch.rs` also runs `20000`, above it). Prints
//! `OK <check>` per check; a wrong result, another error than `InvalidArgument` or a slow
//! failure exits non-zero.

use anyhow::{Context, Result};

fn main() -> Result<()> {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .with_context(|| format!("{a:?} is not a number of elements"))
        })
        .collect::<Result<_>>()?;
    if sizes.is_empty() {
        sizes = vec![4, 1000];
    }
    let node = hypercube::init()?;
    for check in hypercube_tests::suites::mismatch::run_sizes(&node, &sizes)? {
        println!("OK {check}");
    }
    node.finalize()?;
    Ok(())
}
