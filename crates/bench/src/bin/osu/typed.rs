//! The typed, converting and serde forms of bcast, allgather and alltoall (`--form`), the
//! `into` forms of allreduce and reduce-scatter, and what the forms pay on top of the byte
//! form's transfer, measured in-process on rank 0.

use std::time::Instant;

use anyhow::{bail, Context};
use bytes::Bytes;
use hypercube::collectives::{Op, Subcube};
use hypercube_bench::Bench;

use crate::buffers::Buffers;
use crate::Form;

/// The byte form's blocks as one `Vec<f32>` (what a caller who needs numbers does).
fn to_floats(blocks: &[Bytes]) -> Vec<f32> {
    let mut out = Vec::with_capacity(blocks.iter().map(Bytes::len).sum::<usize>() / 4);
    for b in blocks {
        out.extend(
            b.chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
        );
    }
    out
}

/// One call of the typed, converting or serde form of bcast, allgather or alltoall, or of
/// the `into` form of allreduce or reduce-scatter.
pub(crate) fn typed_call(
    c: Subcube<'_>,
    bench: Bench,
    s: usize,
    me: u32,
    buf: &mut Buffers,
) -> anyhow::Result<()> {
    let root = me == 0;
    let mut owned = || buf.owned.take().context("no owned input was prepared");
    match (buf.form, bench) {
        (Form::Slice, Bench::Bcast) => {
            let data: &[f32] = if root { &buf.floats } else { &[] };
            c.bcast_slice(0, data, s / 4)?;
        }
        (Form::Slice, Bench::Allgather) => drop(c.allgather_slice(&buf.floats)?),
        (Form::Slice, Bench::Alltoall) => drop(c.alltoall_slice(&buf.floats)?),
        (Form::Vec, Bench::Bcast) => {
            let data = if root { owned()? } else { Vec::new() };
            c.bcast_vec(0, data)?;
        }
        (Form::Into, Bench::Bcast) => {
            if root {
                buf.out.copy_from_slice(&buf.floats);
            }
            c.bcast_into(0, &mut buf.out)?;
        }
        (Form::Into, Bench::Allgather) => c.allgather_into(&buf.floats, &mut buf.out)?,
        (Form::Into, Bench::Alltoall) => c.alltoall_into(&buf.floats, &mut buf.out)?,
        (Form::Into, Bench::Allreduce) => c.allreduce_into(&buf.floats, &mut buf.out, Op::Sum)?,
        (Form::Into, Bench::ReduceScatter) => {
            // This rank's block of the reduction (`out` holds the whole input's length).
            let n = buf.floats.len() / c.size() as usize;
            c.reduce_scatter_into(&buf.floats, &mut buf.out[..n], Op::Sum)?
        }
        // The rank's block was put in its place once (`Buffers::new`); the call never
        // writes it.
        (Form::InPlace, Bench::Allgather) => c.allgather_in_place(&mut buf.out)?,
        (Form::Buf, Bench::Bcast) => {
            let data = if root { owned()? } else { Vec::new() };
            drop(c.bcast_buf(0, data, s / 4)?);
        }
        (Form::Buf, Bench::Allgather) => drop(c.allgather_buf(owned()?)?),
        (Form::Buf, Bench::Alltoall) => drop(c.alltoall_buf(owned()?)?),
        (Form::Vec, Bench::Allgather) => drop(c.allgather_vec(owned()?)?),
        (Form::Vec, Bench::Alltoall) => drop(c.alltoall_vec(owned()?)?),
        (Form::BytesToVec, Bench::Bcast) => {
            let data = if root {
                buf.block.clone()
            } else {
                Bytes::new()
            };
            let got = c.bcast(0, data, s)?;
            drop(to_floats(&[got]));
        }
        (Form::BytesToVec, Bench::Allgather) => drop(to_floats(&c.allgather(buf.block.clone())?)),
        (Form::BytesToVec, Bench::Alltoall) => drop(to_floats(&c.alltoall(&buf.blocks)?)),
        (Form::Serde, Bench::Bcast) => {
            let v: Vec<f32> = c.bcast_value(0, if root { Some(owned()?) } else { None })?;
            drop(v);
        }
        (Form::Serde, Bench::Allgather) => drop(c.allgather_value(&owned()?)?),
        (Form::Serde, Bench::Alltoall) => {
            let vs = buf
                .owned_values
                .take()
                .context("no owned values were prepared")?;
            drop(c.alltoall_values(vs)?);
        }
        (form, b) => bail!("--form {form:?} does not apply to {b}"),
    }
    Ok(())
}

/// The codec's in-process cost of one value of the serde form (a `Vec<f32>` of `s` bytes):
/// the mean µs to encode it and to decode it, over `n` rounds.
pub(crate) fn codec_cost(s: usize, n: u64) -> anyhow::Result<(f64, f64)> {
    let v: Vec<f32> = (0..s / 4).map(|k| (k % 7) as f32).collect();
    let n = n.max(1);
    let t0 = Instant::now();
    let mut enc = Vec::new();
    for _ in 0..n {
        enc = hypercube::codec::encode(std::hint::black_box(&v))?;
    }
    let e = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t0 = Instant::now();
    for _ in 0..n {
        let back: Vec<f32> = hypercube::codec::decode(std::hint::black_box(&enc))?;
        std::hint::black_box(back);
    }
    let d = t0.elapsed().as_secs_f64() * 1e6 / n as f64;
    Ok((e, d))
}

/// What the typed forms pay on top of the byte form's transfer: one copy of a result of
/// `bytes` bytes (in `p` blocks) from message buffers into a new `Vec<f32>`, in µs (mean
/// of `n` rounds, in-process). The sources rotate over 64 MiB, so that they are not in
/// the cache, as a message just received by another process's socket is not always.
pub(crate) fn copy_cost(bytes: usize, p: usize, n: u64) -> f64 {
    let p = p.max(1);
    let sets = ((64 << 20) / bytes.max(1)).clamp(1, 1024);
    let all: Vec<Vec<Bytes>> = (0..sets)
        .map(|_| (0..p).map(|_| Bytes::from(vec![1u8; bytes / p])).collect())
        .collect();
    let n = n.max(1);
    let t0 = Instant::now();
    for i in 0..n as usize {
        std::hint::black_box(to_floats(std::hint::black_box(&all[i % sets])));
    }
    t0.elapsed().as_secs_f64() * 1e6 / n as f64
}
