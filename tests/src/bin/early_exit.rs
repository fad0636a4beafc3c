//! Node program: rank 1 returns an error from main early, while rank 0 waits for a message
//! from it (which will never come). The job must end by itself, with rank 0's receive
//! failing with "has finished", not hang. Rank 2 waits for any type from rank 1, rank 3
//! for anything from anyone (it fails once all others have finished).

use anyhow::{bail, Result};
use hypercube::{Error, Select, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    match node.mynode() {
        1 => bail!("rank 1 gives up on purpose"),
        0 => match node.recv(Select::from_node(1, TypeSel::Is(1))) {
            Err(e @ Error::PeerFinished { .. }) => {
                println!("OK receive failed: {e}");
                Err(e.into())
            }
            other => bail!("expected PeerFinished, got {other:?}"),
        },
        2 => match node.recv(Select::from_node(1, TypeSel::Any)) {
            Err(e @ Error::PeerFinished { .. }) => {
                println!("OK any-type receive failed: {e}");
                Ok(())
            }
            other => bail!("expected PeerFinished, got {other:?}"),
        },
        // Any source: fails once every other node has finished.
        _ => match node.recv(TypeSel::Any) {
            Err(e @ Error::PeerFinished { .. }) => {
                println!("OK any-source receive failed: {e}");
                Ok(())
            }
            other => bail!("expected PeerFinished, got {other:?}"),
        },
    }
}
