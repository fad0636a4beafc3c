//! Three of Grama's collectives, once each on the whole cube, for pictures of their steps
//! (`docs/tracing.md`): a one-to-all broadcast of 8 bytes from node 0, an all-reduce
//! (sum) of one `u64`, an all-to-all personalized exchange of one 8-byte block per pair.
//!
//! ```text
//! cargo run --release -p launcher -- --dim 3 --trace t.json --example grama
//! hctrace steps t.json --call 0 -o bcast.svg     # 1: allreduce, 2: alltoall
//! ```

use bytes::Bytes;
use hypercube::collectives::Op;

fn main() -> anyhow::Result<()> {
    let node = hypercube::init()?;
    let (me, p) = (node.mynode(), node.numnodes());
    let data = if me == 0 {
        Bytes::from_static(b"hypercub")
    } else {
        Bytes::new()
    };
    let got = node.cube().bcast(0, data, 8)?;
    anyhow::ensure!(&got[..] == b"hypercub", "bcast gave {got:?}");
    let sum = node.cube().allreduce(&[u64::from(me)], Op::Sum)?;
    let want = u64::from(p) * u64::from(p - 1) / 2;
    anyhow::ensure!(sum[0] == want, "allreduce gave {} not {want}", sum[0]);
    let blocks: Vec<Bytes> = (0..p)
        .map(|to| Bytes::from((u64::from(me) << 32 | u64::from(to)).to_le_bytes().to_vec()))
        .collect();
    let got = node.cube().alltoall(&blocks)?;
    for (from, b) in got.iter().enumerate() {
        let want = (from as u64) << 32 | u64::from(me);
        anyhow::ensure!(b[..] == want.to_le_bytes(), "alltoall block from {from}");
    }
    if me == 0 {
        println!("bcast, allreduce ({sum:?}) and alltoall on {p} nodes: ok");
    }
    Ok(())
}
