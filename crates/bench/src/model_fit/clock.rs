//! The virtual clock: an operation run in process on the virtual-clock transport with the
//! fitted cost model.

use crate::Bench;
use anyhow::bail;
use bytes::Bytes;
use hypercube::collectives::select::CostModel;
use hypercube::collectives::{Algorithm, Op, ShiftOrder};
use hypercube::local::{run_local_timed, run_local_timed_all_port};
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
    let out = if all_port {
        run_local_timed_all_port(dim, model, call)
    } else {
        run_local_timed(dim, model, call)
    };
    let mut times = Vec::with_capacity(out.len());
    for (r, t) in out {
        if let Err(e) = r {
            bail!("virtual clock, {bench} {alg:?} at {s} B: {e}");
        }
        times.push(t);
    }
    let mean = times.iter().sum::<f64>() / times.len().max(1) as f64;
    Ok((mean, times.iter().copied().fold(0.0, f64::max)))
}
