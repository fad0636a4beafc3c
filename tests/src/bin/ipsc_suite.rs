//! Node program for the iPSC utility tests: runs `hypercube_tests::suites::ipsc` across real
//! processes and prints `OK <check>` as each check passes; any failure exits non-zero.
//! `ipsc_suite [check ...]` runs only the named checks.

use anyhow::Result;
use hypercube_tests::suites::ipsc;

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let only: Vec<String> = std::env::args().skip(1).collect();
    for name in ipsc::CHECK_NAMES {
        if only.is_empty() || only.iter().any(|o| o == name) {
            for passed in ipsc::run(&node, &[name.to_string()])? {
                println!("OK {passed}");
            }
        }
    }
    Ok(())
}
