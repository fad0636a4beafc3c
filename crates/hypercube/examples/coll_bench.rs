//! Times every collective algorithm at 8 B and 1 MiB on the whole cube, over the real
//! transport: `cargo run --release -p launcher -- --dim 3 --example coll_bench`.
//! Rank 0 prints one line per (operation, algorithm, size): the median of the iterations'
//! slowest-rank times (each iteration starts after a barrier and ends with an allreduce of
//! the per-rank maximum, which is not timed).

use std::time::Instant;

use bytes::Bytes;
use hypercube::collectives::{Algorithm, Op, ShiftOrder};
use hypercube::Node;

fn time(node: &Node, iters: usize, mut f: impl FnMut()) -> f64 {
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        node.cube().barrier().expect("barrier");
        let t = Instant::now();
        f();
        let dt = t.elapsed().as_secs_f64();
        let worst = node.cube().allreduce(&[dt], Op::Max).expect("allreduce");
        samples.push(worst[0]);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() -> hypercube::Result<()> {
    let node = hypercube::init()?;
    let p = node.numnodes() as usize;
    let c = node.cube();
    for size in [8usize, 1 << 20] {
        let iters = if size > 1024 { 5 } else { 50 };
        let bytes = Bytes::from(vec![1u8; size]);
        let floats = vec![1.0f64; size / 8];
        let block = Bytes::from(vec![1u8; size]);
        let blocks: Vec<Bytes> = (0..p).map(|_| Bytes::from(vec![1u8; size])).collect();
        let mut rows: Vec<(String, f64)> = Vec::new();
        for alg in [Algorithm::Hypercube, Algorithm::ScatterAllgather] {
            let t = time(&node, iters, || {
                drop(c.with(alg).bcast(0, bytes.clone(), size).unwrap())
            });
            rows.push((format!("bcast {alg:?}"), t));
        }
        for alg in [Algorithm::Hypercube, Algorithm::ReduceScatterGather] {
            let t = time(&node, iters, || {
                drop(c.with(alg).reduce(0, &floats, Op::Sum).unwrap())
            });
            rows.push((format!("reduce {alg:?}"), t));
        }
        for alg in [
            Algorithm::Hypercube,
            Algorithm::ReduceScatterAllgather,
            Algorithm::Ring,
        ] {
            let t = time(&node, iters, || {
                drop(c.with(alg).allreduce(&floats, Op::Sum).unwrap())
            });
            rows.push((format!("allreduce {alg:?}"), t));
        }
        for alg in [Algorithm::Hypercube, Algorithm::Ring] {
            let t = time(&node, iters, || {
                drop(c.with(alg).reduce_scatter(&floats, Op::Sum).unwrap())
            });
            rows.push((format!("reduce_scatter {alg:?}"), t));
        }
        for alg in [Algorithm::Hypercube, Algorithm::Ring, Algorithm::Mesh] {
            let t = time(&node, iters, || {
                drop(c.with(alg).allgather(block.clone()).unwrap())
            });
            rows.push((format!("allgather {alg:?}"), t));
        }
        let t = time(&node, iters, || drop(c.scan(&floats, Op::Sum).unwrap()));
        rows.push(("scan Hypercube".into(), t));
        let t = time(&node, iters, || {
            drop(
                c.scatter(0, if node.mynode() == 0 { &blocks } else { &[] }, size)
                    .unwrap(),
            )
        });
        rows.push(("scatter Hypercube".into(), t));
        let t = time(&node, iters, || drop(c.gather(0, block.clone()).unwrap()));
        rows.push(("gather Hypercube".into(), t));
        for alg in [
            Algorithm::StoreForward,
            Algorithm::Pairwise,
            Algorithm::Ring,
            Algorithm::Mesh,
        ] {
            let t = time(&node, iters, || {
                drop(c.with(alg).alltoall(&blocks).unwrap())
            });
            rows.push((format!("alltoall {alg:?}"), t));
        }
        for alg in [Algorithm::Ecube, Algorithm::GrayRing] {
            let t = time(&node, iters, || {
                drop(
                    c.with(alg)
                        .shift(block.clone(), 3, ShiftOrder::Ring)
                        .unwrap(),
                )
            });
            rows.push((format!("shift(q=3) {alg:?}"), t));
        }
        let t = time(&node, iters, || c.barrier().unwrap());
        rows.push(("barrier Hypercube".into(), t));
        if node.mynode() == 0 {
            for (name, t) in rows {
                println!("p={p} size={size} {name}: {:.1} us", t * 1e6);
            }
        }
    }
    Ok(())
}
