//! One call of each collective and iPSC utility the benchmark times.

use bytes::Bytes;
use hypercube::collectives::{Op, ShiftOrder, Subcube};
use hypercube::{MsgType, Node};
use hypercube_bench::Bench;

use crate::buffers::Buffers;
use crate::typed::typed_call;
use crate::Form;

/// One call of the collective (or iPSC utility) under test.
pub(crate) fn call(
    node: &Node,
    c: Subcube<'_>,
    bench: Bench,
    s: usize,
    buf: &mut Buffers,
    scratch: &mut [f32],
) -> anyhow::Result<()> {
    let me = node.mynode();
    let d = node.cubedim();
    let typed = matches!(
        bench,
        Bench::Bcast | Bench::Allgather | Bench::Alltoall | Bench::Allreduce | Bench::ReduceScatter
    );
    match bench {
        _ if typed && buf.form != Form::Bytes => typed_call(c, bench, s, me, buf)?,
        Bench::Bcast => {
            let data = if me == 0 {
                buf.block.clone()
            } else {
                Bytes::new()
            };
            c.bcast(0, data, s)?;
        }
        Bench::Reduce => {
            c.reduce(0, &buf.floats, Op::Sum)?;
        }
        Bench::Allreduce => {
            c.allreduce(&buf.floats, Op::Sum)?;
        }
        Bench::Allgather => {
            c.allgather(buf.block.clone())?;
        }
        Bench::ReduceScatter => {
            c.reduce_scatter(&buf.floats, Op::Sum)?;
        }
        Bench::Alltoall => {
            c.alltoall(&buf.blocks)?;
        }
        Bench::Scatter => {
            let blocks: &[Bytes] = if me == 0 { &buf.blocks } else { &[] };
            c.scatter(0, blocks, s)?;
        }
        Bench::Gather => {
            c.gather(0, buf.block.clone())?;
        }
        Bench::Scan => {
            c.scan(&buf.floats, Op::Sum)?;
        }
        Bench::Barrier => c.barrier()?,
        Bench::Shift => {
            c.shift(buf.block.clone(), 1, ShiftOrder::Rank)?;
        }
        Bench::Gsendw => {
            if me == 0 {
                node.gsend(buf.block.clone(), d)?;
            } else {
                node.grecv(d)?;
            }
        }
        Bench::Gop => {
            // GOP works in place; `scratch` was refilled before the timer started.
            node.gop(scratch, hypercube::ipsc::Op::Sum, 0, d)?;
        }
        Bench::Gcat => {
            node.gcat(buf.block.clone(), 0, d)?;
        }
        Bench::Spgsnw => {
            let ty = MsgType(7);
            if me == 0 {
                let targets: Vec<u32> = (1..node.numnodes()).collect();
                node.spgsend(ty, buf.block.clone(), &targets)?;
            } else {
                node.spgrecv(ty)?;
            }
        }
        Bench::Latency | Bench::Bw => unreachable!("point-to-point tests are not collectives"),
    }
    Ok(())
}
