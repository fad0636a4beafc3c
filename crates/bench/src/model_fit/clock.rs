//! The virtual clock: an operation run in process on the virtual-clock transport with the
//! fitted cost model.

use crate::Bench;
use anyhow::bail;
use bytes::Bytes;
use hypercube::collectives::select::CostModel;
use hypercube::collectives::{Algorithm, Op, ShiftOrder};
use hypercube::local::{now, run_local_timed_links, Links};
use hypercube::Node;

/// One call of `bench` with the inputs `osu` gives it at SIZE `s` (bytes form, f32 sums).
pub(super) fn one_call(node: &Node, bench: Bench, alg: Algorithm, s: usize) -> anyhow::Result<()> {
    let p = node.numnodes() as usize;
    let me = node.mynode();
    let c = node.cube().with(alg);
    let block = Bytes::from(vec![me as u8; s]);
    let blocks: Vec<Bytes> = (0..p).map(|_| block.clone()).collect();
    let floats = vec![1.0f32; s / 4];
    match bench {
        Bench::Bcast => {
            c.bcast(0, if me == 0 { block } else { Bytes::new() }, s)?;
        }
        Bench::Reduce => {
            c.reduce(0, &floats, Op::Sum)?;
        }
        Bench::Allreduce => {
            c.allreduce(&floats, Op::Sum)?;
        }
        Bench::Allgather => {
            c.allgather(block)?;
        }
        Bench::ReduceScatter => {
            c.reduce_scatter(&vec![1.0f32; s / 4 * p], Op::Sum)?;
        }
        Bench::Alltoall => {
            c.alltoall(&blocks)?;
        }
        Bench::Scatter => {
            c.scatter(0, if me == 0 { &blocks } else { &[] }, s)?;
        }
        Bench::Gather => {
            c.gather(0, block)?;
        }
        Bench::Scan => {
            c.scan(&floats, Op::Sum)?;
        }
        Bench::Shift => {
            c.shift(block, 1, ShiftOrder::Rank)?;
        }
        b => bail!("{b} is not one of the operations of the model"),
    }
    Ok(())
}

/// The virtual-clock transport's time of one call of `bench` with algorithm `alg` at SIZE
/// `s` on a `dim`-cube under `model`: `(mean, slowest)` of the nodes' final clocks, in the
/// model's units; single-port nodes (`run_local_timed`), or with `all_port` a port per
/// dimension (`run_local_timed_all_port`).
pub fn virtual_clock(
    bench: Bench,
    alg: Algorithm,
    dim: u32,
    s: usize,
    model: CostModel,
    all_port: bool,
) -> anyhow::Result<(f64, f64)> {
    let call = |node: Node| one_call(&node, bench, alg, s).map_err(|e| format!("{e:#}"));
    let links = Links { all_port, burst: 0 };
    let out = run_local_timed_links(dim, model, links, call);
    mean_and_slowest(
        out.into_iter().map(|(r, t)| r.map(|()| t)),
        format_args!("virtual clock, {bench} {alg:?} at {s} B"),
    )
}

/// `(mean, slowest)` of the nodes' times, or the first node's error, as `what`'s.
fn mean_and_slowest(
    per_node: impl Iterator<Item = Result<f64, String>>,
    what: std::fmt::Arguments<'_>,
) -> anyhow::Result<(f64, f64)> {
    let mut times = Vec::new();
    for r in per_node {
        match r {
            Ok(t) => times.push(t),
            Err(e) => bail!("{what}: {e}"),
        }
    }
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    Ok((mean, times.iter().copied().fold(0.0, f64::max)))
}

/// Calls of [`shaped_clock`]'s loop before it starts timing: enough for a link's bucket to
/// reach the state that calls right behind one another keep it in.
const SHAPED_WARMUP: usize = 3;
/// Calls [`shaped_clock`] times.
const SHAPED_CALLS: usize = 8;

/// The emulated network's virtual clock: the all-port clock with every directed link a
/// token bucket of `burst` bytes ([`Links`]), running `osu`'s loop — a barrier, then one
/// timed call, [`SHAPED_WARMUP`] untimed and [`SHAPED_CALLS`] timed — so the buckets are
/// in the state a run of calls leaves them in rather than full. `(mean, slowest)` over the
/// nodes of each node's mean time per call, in the model's units.
pub fn shaped_clock(
    bench: Bench,
    alg: Algorithm,
    dim: u32,
    s: usize,
    model: CostModel,
    burst: usize,
) -> anyhow::Result<(f64, f64)> {
    let links = Links {
        all_port: true,
        burst,
    };
    let out = run_local_timed_links(dim, model, links, |node: Node| {
        let mut total = 0.0;
        // The barrier `osu` separates the calls it measures with.
        let sync = crate::osu::between_calls(&node, bench);
        for i in 0..SHAPED_WARMUP + SHAPED_CALLS {
            sync.barrier().map_err(|e| e.to_string())?;
            let t0 = now().unwrap_or(0.0);
            one_call(&node, bench, alg, s).map_err(|e| format!("{e:#}"))?;
            if i >= SHAPED_WARMUP {
                total += now().unwrap_or(0.0) - t0;
            }
        }
        Ok::<f64, String>(total / SHAPED_CALLS as f64)
    });
    mean_and_slowest(
        out.into_iter().map(|(r, _)| r),
        format_args!("shaped virtual clock, {bench} {alg:?} at {s} B"),
    )
}
