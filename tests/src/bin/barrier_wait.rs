//! Node program: the last rank sleeps for the given milliseconds before a barrier; every
//! rank checks that it left the barrier no earlier than most of that time after it
//! entered — whatever barrier algorithm its automatic choice takes. Prints `OK barrier`
//! per rank; a rank that left early exits non-zero. Run with a different
//! `HYPERCUBE_MODEL_CORES` per rank (a launcher that does not set it alike), it checks that
//! every member chooses alike: node 0's count of cores is the job's.

use std::time::{Duration, Instant};

use anyhow::{ensure, Result};

fn main() -> Result<()> {
    let ms: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500);
    let node = hypercube::init()?;
    let last = node.numnodes() - 1;
    for round in 0..3 {
        let t0 = Instant::now();
        if node.mynode() == last {
            std::thread::sleep(Duration::from_millis(ms));
        }
        node.cube().barrier()?;
        let waited = t0.elapsed();
        ensure!(
            waited >= Duration::from_millis(ms * 4 / 5),
            "round {round}: rank {} left the barrier after {waited:?}, before rank {last} \
             entered it ({ms} ms)",
            node.mynode()
        );
    }
    println!("OK barrier");
    Ok(())
}
