//! `osu`: the OSU Micro-Benchmarks method on the hypercube runtime, with the command line
//! and output format of the crate's MPI benchmark (`crates/bench/c/osu_mpi.c`). A node
//! program: run it through the launcher,
//!
//! ```text
//! cargo run --release -p launcher -- --dim 3 --no-prefix -- target/release/osu allreduce -m 8:1048576
//! ```
//!
//! Only rank 0 prints. `main.rs` holds the command line and the collectives' timing loop;
//! `p2p.rs` the point-to-point benchmarks, `buffers.rs` the inputs of one size, `calls.rs`
//! one call per benchmark, `typed.rs` the typed forms.

mod buffers;
mod calls;
mod p2p;
mod typed;

use std::time::Instant;

use anyhow::{bail, Context};
use bytes::Bytes;
use clap::Parser;
use hypercube::collectives::{Algorithm, Op};
use hypercube::Node;
use hypercube_bench::osu;
use hypercube_bench::Bench;

use buffers::Buffers;
use calls::call;
use p2p::{bw, latency};
use typed::{codec_cost, copy_cost};

/// OSU-style benchmarks of the hypercube runtime (run through hcrun; only rank 0 prints).
///
/// Same method and output as osu_mpi.c (the MPI peer): `latency` is half the round trip of a ping-pong
/// between ranks 0 and 1; `bw` sends 64 messages in flight, then waits for a 4-byte ack
/// (MB/s = 10^6 bytes/s); a collective reports the per-rank mean time of one call (a
/// barrier between calls, not timed), averaged over ranks. Reductions sum f32 vectors;
/// SIZE is the per-rank message in bytes (reduce_scatter: the per-rank result).
/// The iPSC utilities: gsendw (GSENDW/GRECVW from node 0), gop (GOP sum at node 0), gcat
/// (GCAT at node 0), spgsnw (SPGSNW from node 0 to all others).
#[derive(Parser, Debug)]
#[command(name = "osu", version)]
struct Args {
    /// latency | bw | bcast | reduce | allreduce | allgather | reduce_scatter | alltoall |
    /// scatter | gather | scan | barrier | shift | gsendw | gop | gcat | spgsnw
    bench: Bench,
    /// Size range MIN:MAX in bytes, doubling from MIN (as OSU's -m)
    #[arg(short = 'm', value_name = "MIN:MAX", default_value = "4:1048576", value_parser = osu::parse_range)]
    range: (u64, u64),
    /// Iterations (0 = OSU's defaults); sizes above 8 KiB use ITERS/10
    #[arg(short = 'i', value_name = "ITERS", default_value_t = 0)]
    iters: u64,
    /// Warm-up iterations per size (-1 = OSU's defaults: 100 small / 10 large; bw 10 / 2)
    #[arg(short = 'x', value_name = "WARMUP", default_value_t = -1, allow_negative_numbers = true)]
    warmup: i64,
    /// Force a collective algorithm (auto, hypercube, ring, mesh, scatter-allgather,
    /// reduce-scatter-gather, reduce-scatter-allgather, store-forward, pairwise, ecube,
    /// gray-ring, chain, all-port, planned, tree); the barrier between timed calls is the
    /// exchange (as Open MPI's recursive doubling) unless `HYPERCUBE_ALG_BARRIER` is set
    /// (`barrier` itself: the automatic choice, back to back)
    #[arg(short = 'a', long = "alg", value_name = "ALG", default_value = "auto")]
    alg: String,
    /// Collectives: also print each rank's own mean time (a `# per rank:` line after each
    /// row), to see where the average comes from (e.g. a broadcast's root vs. its leaves),
    /// each rank's barrier exit after rank 0's, and rank 0's time per call and the barrier
    /// after it (`# loop:`, the rate of back-to-back calls)
    #[arg(long)]
    per_rank: bool,
    /// bcast, allgather, alltoall: call the typed form (`*_slice` over f32, SIZE bytes per
    /// rank or block) instead of the byte form, to compare the two (= `--form slice`)
    #[arg(long)]
    typed: bool,
    /// latency, bw: rank 0's partner (default 1, its neighbour). A partner h links away
    /// (e.g. 3 on a 2-cube, 7 on a 3-cube) measures messages forwarded by h - 1 nodes, to
    /// compare HYPERCUBE_FORWARDING=cut-through with store-and-forward
    #[arg(long, value_name = "RANK", default_value_t = 1)]
    peer: u32,
    /// bcast, allgather, alltoall: which form to call, SIZE bytes per rank or block:
    /// `bytes` (the default), `slice` (`*_slice(&[f32])`), `vec` (`*_vec(Vec<f32>)`, the
    /// vector built before the timer starts, as the byte form's buffer is), `bytes-to-vec`
    /// (the byte form, then the result turned into a `Vec<f32>`, as a caller of the byte form
    /// who needs numbers does), `serde` (`bcast_value`, `allgather_value`,
    /// `alltoall_values` of a `Vec<f32>`; also prints the codec's in-process cost per value),
    /// `into` (`*_into(&[f32], &mut [f32])`, the result copied into a buffer allocated
    /// once per size, as MPI's receive buffer is; also allreduce and reduce_scatter, whose
    /// default is the slice form returning a `Vec<f32>`), `buf` (`*_buf(Vec<f32>)`: the
    /// owned input of `vec`, the result a `TypedBuf<f32>` viewing the message buffers in
    /// place),
    /// `in-place` (allgather only: `allgather_in_place(&mut [f32])`, the rank's block
    /// already in its place in the result, as with `MPI_IN_PLACE`)
    #[arg(long, value_enum, default_value = "bytes")]
    form: Form,
    /// Collectives: also call the form VS in the same job, one call of each in turn (which
    /// first varies without a short period; both after the same barriers), each timed apart, and print
    /// `# vs VS:` with VS's average, the ratio of the two, and the ratio of the slowest
    /// ranks' means (judge by that one: an average hides a root that finishes last;
    /// `# loop:` then covers both). Both forms then run on the same processes, placed alike, through
    /// the same moments of the machine's load: a ratio from two jobs varies with where the
    /// scheduler put the ranks (identical jobs of 8 ranks on 2 cores differ by up to 2×),
    /// a ratio from one job much less
    #[arg(long, value_enum, value_name = "VS")]
    vs: Option<Form>,
    /// Collectives: as `--vs`, but the second run's algorithm is ALG (with `--vs`'s form if
    /// given, else `--form`'s): two algorithms compared in one job, e.g. `--alg pairwise
    /// --vs-alg ecube`. Two algorithms in turn also change each other's conditions (the
    /// sockets' congestion state, the memory they leave): check a ratio that decides a rule
    /// with separate jobs as well (the all-port reduce-scatter on 8 ranks, 1 MiB: 0.91–0.94×
    /// the halving's time in one job, 1.22× in jobs of its own)
    #[arg(long, value_name = "ALG")]
    vs_alg: Option<String>,
}

/// How `--form` calls bcast, allgather and alltoall.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// The byte form.
    Bytes,
    /// `*_slice` over a borrowed `&[f32]`.
    Slice,
    /// `*_vec` over an owned `Vec<f32>`.
    Vec,
    /// The byte form, then the result as one `Vec<f32>`.
    BytesToVec,
    /// The serde form over a `Vec<f32>` value.
    Serde,
    /// `*_into` from a borrowed `&[f32]` into a caller's `&mut [f32]` allocated once.
    Into,
    /// `*_buf` over an owned `Vec<f32>`, the result viewed in place (`TypedBuf<f32>`).
    Buf,
    /// allgather only: `allgather_in_place(&mut [f32])`, the rank's block already at its
    /// place in the result buffer (`MPI_IN_PLACE`; allocated once per size, as `into`'s).
    InPlace,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let alg: Algorithm = args
        .alg
        .parse()
        .map_err(|e| anyhow::anyhow!("-a {}: {e}", args.alg))?;
    let node = hypercube::init()?;
    if let Err(e) = run(&node, &args, alg) {
        node.abort(&format!("osu {}: {e:#}", args.bench));
    }
    node.finalize()?;
    Ok(())
}

/// Print one line on rank 0 (and flush, as the C peer does).
fn say(node: &Node, line: &str) {
    if node.mynode() == 0 {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }
}

fn run(node: &Node, args: &Args, alg: Algorithm) -> anyhow::Result<()> {
    let (lo, hi) = args.range;
    let p = node.numnodes() as usize;
    let me = node.mynode();
    let cap = (hi.max(4) as usize)
        .checked_mul(p)
        .context("buffer size overflows")?;
    // Rank-dependent contents, a[k] = k*7 + rank.
    let a: Bytes = (0..cap)
        .map(|k| (k.wrapping_mul(7) as u8).wrapping_add(me as u8))
        .collect::<Vec<u8>>()
        .into();
    match args.bench {
        Bench::Latency | Bench::Bw => {
            if p < 2 {
                bail!(
                    "{} needs at least 2 ranks (run with --dim 1 or more)",
                    args.bench
                );
            }
            if args.peer == 0 || args.peer as usize >= p {
                bail!(
                    "--peer {}: the partner of rank 0 must be a rank from 1 to {}",
                    args.peer,
                    p - 1
                );
            }
            if args.bench == Bench::Latency {
                latency(node, lo, hi, args, &a)
            } else {
                bw(node, lo.max(1), hi, args, &a)
            }
        }
        b => collective(node, b, lo, hi, args, alg, &a),
    }
}

fn collective(
    node: &Node,
    bench: Bench,
    lo: u64,
    hi: u64,
    args: &Args,
    alg: Algorithm,
    a: &Bytes,
) -> anyhow::Result<()> {
    let p = node.numnodes() as usize;
    let me = node.mynode();
    let forced = if alg == Algorithm::Auto {
        String::new()
    } else {
        format!(" [alg={}]", args.alg)
    };
    say(
        node,
        &osu::title_line(&format!(
            "OSU-style hypercube {} Latency Test (np={p}){forced}",
            bench.name()
        )),
    );
    say(node, &osu::header_line(osu::COL_AVG_LATENCY));
    let cube = node.cube();
    let sync = osu::between_calls(node, bench);
    let (lo, hi) = if bench == Bench::Barrier {
        (0, 0)
    } else {
        (lo, hi)
    };
    let form = if args.typed { Form::Slice } else { args.form };
    // The (form, algorithm) pairs timed in turn: `--form`'s with `--alg`, then the one
    // `--vs` and `--vs-alg` make of it.
    let vs_alg: Option<Algorithm> = match &args.vs_alg {
        Some(a) => Some(
            a.parse()
                .map_err(|e| anyhow::anyhow!("--vs-alg {a}: {e}"))?,
        ),
        None => None,
    };
    let second = (args.vs.is_some() || vs_alg.is_some())
        .then(|| (args.vs.unwrap_or(form), vs_alg.unwrap_or(alg)));
    let forms: Vec<(Form, Algorithm)> = std::iter::once((form, alg)).chain(second).collect();
    for s in osu::sizes(lo, hi) {
        let n = osu::iters_for(s, args.iters, 1000, 100);
        let skip = osu::warmup_for(s, args.warmup, 100, 10);
        let mut runs: Vec<(Buffers, Vec<f32>)> = forms
            .iter()
            .map(|&(f, _)| {
                let mut buf = Buffers::new(bench, s as usize, p, a, me);
                buf.form = f;
                let scratch = buf.floats.clone();
                (buf, scratch)
            })
            .collect();
        let mut totals = vec![0.0f64; forms.len()];
        // With --per-rank: the sum of this rank's barrier exit times (CLOCK_MONOTONIC, one
        // clock for every process on a machine), µs after the first timed exit.
        let mut exits = 0.0f64;
        let mut exit0 = None;
        // The untimed input of the next call is made between two barriers, so that no rank
        // makes it while another is inside its timed call (with more ranks than cores, a
        // rank copying p MiB takes a core from the timed ones): after the one that every
        // rank enters once its call is over — only where a form consumes a fresh input, the
        // same on every rank — and before the one that precedes the next call. (Before the
        // first barrier, a rank that had finished its call early made its input while
        // the others were still in theirs: the 1 MiB `buf` all-to-all on 4 ranks took
        // 1.08–1.23× the byte form's time, and the whole job 10–20 % more CPU;
        // `docs/perf/typed.md`, "The forms that consume their input".)
        let prepare = |buf: &mut Buffers, scratch: &mut Vec<f32>| {
            if bench == Bench::Gop {
                scratch.copy_from_slice(&buf.floats);
            }
            buf.refill(bench, p, me);
        };
        // (With `--vs`, both forms' calls follow the same barriers: what precedes a call —
        // the order in which the ranks left the barrier — changes a short call's time more
        // than the form does: a 8 B `bcast` of bytes took 18 or 43 µs after one or two.)
        let fresh_input = runs.iter().any(|(buf, _)| buf.consumes_input(bench));
        for (buf, scratch) in &mut runs {
            prepare(buf, scratch);
        }
        sync.barrier()?;
        // When the first timed call began on this rank: the whole loop's time, barriers
        // included, printed as `# loop:` with --per-rank.
        let mut loop0 = None;
        for i in 0..n + skip {
            // Which form goes first: by a sequence with no short period (the top bit of
            // i · 2^64/φ), so that neither always follows the other, and no periodic work of
            // the transport falls on one form: with "first every other iteration" the
            // byte form against itself measured 1.02–1.11 (an acknowledgement every
            // 256 KiB a link reads: every fourth 64 KiB call).
            let k = runs.len();
            let swap = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63 == 1;
            for j in 0..k {
                let f = if swap { k - 1 - j } else { j };
                let (buf, scratch) = &mut runs[f];
                let t0 = Instant::now();
                if i == skip && j == 0 {
                    loop0 = Some(t0);
                }
                call(node, cube.with(forms[f].1), bench, s as usize, buf, scratch)
                    .with_context(|| format!("size {s}, iteration {i}, {:?}", buf.form))?;
                let t = t0.elapsed().as_secs_f64();
                if i >= skip {
                    totals[f] += t;
                }
                if i + 1 < n + skip {
                    if fresh_input {
                        sync.barrier()?;
                    }
                    prepare(buf, scratch);
                }
                sync.barrier()?;
            }
            if args.per_rank && i >= skip {
                let t = hypercube_bench::monotonic_ns() as f64 / 1e3;
                exits += t - *exit0.get_or_insert(t);
            }
        }
        let looped = loop0.map_or(0.0, |t| t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64);
        let means: Vec<f64> = totals.iter().map(|t| t * 1e6 / n.max(1) as f64).collect();
        let mine = means[0];
        let sums = cube.reduce(0, &means, Op::Sum)?;
        // The slowest rank's mean of each form: an average can favour the form whose root
        // finishes last (a rule checked by averages kept a chain scan whose slowest rank
        // took 1.75× as long: `docs/perf/analysis.md`, "The scan rule on wires, on 16 ranks").
        let slowest = if forms.len() > 1 {
            cube.reduce(0, &means, Op::Max)?
        } else {
            None
        };
        if let Some(sums) = sums {
            let avg: Vec<f64> = sums.iter().map(|t| t / p as f64).collect();
            say(node, &osu::row_line(s, avg[0]));
            if let (Some(&(vf, va)), Some(&other)) = (forms.get(1), avg.get(1)) {
                let name = |(f, a): (Form, Algorithm)| {
                    if vs_alg.is_some() {
                        format!("{f:?}/{a:?}")
                    } else {
                        format!("{f:?}")
                    }
                };
                let (first, vs) = (name(forms[0]), name((vf, va)));
                let slow = match slowest.as_deref() {
                    Some([a, b, ..]) => {
                        format!("; slowest rank {a:.2} / {b:.2} us = {:.3}", a / b)
                    }
                    _ => String::new(),
                };
                say(
                    node,
                    &format!(
                        "# vs {vs}: {other:.2} us; {first} / {vs} = {:.3}{slow}",
                        avg[0] / other
                    ),
                );
            }
        }
        let buf = &runs[0].0;
        if matches!(buf.form, Form::Slice | Form::Vec | Form::BytesToVec)
            && matches!(bench, Bench::Bcast | Bench::Allgather | Bench::Alltoall)
            && me == 0
        {
            let out = if bench == Bench::Bcast {
                s
            } else {
                s * p as u64
            };
            let us = copy_cost(out as usize, p, n);
            say(
                node,
                &format!(
                    "# one copy of the {out}-byte result into a Vec<f32>, in-process on rank 0: \
                     {us:.2} us"
                ),
            );
        }
        if buf.form == Form::Serde && me == 0 {
            let (e, d) = codec_cost(s as usize, n)?;
            say(
                node,
                &format!(
                    "# codec, in-process on rank 0: encode {e:.2} us, decode {d:.2} us per value \
                     of {s} bytes"
                ),
            );
        }
        if args.per_rank {
            // Each rank's mean time, and its mean barrier exit relative to rank 0's (how
            // much later than rank 0 it starts the next call).
            let first = exit0.unwrap_or(0.0);
            let exit = first + exits / n.max(1) as f64;
            let mut mine_b = mine.to_le_bytes().to_vec();
            mine_b.extend_from_slice(&exit.to_le_bytes());
            if let Some(all) = cube.gather(0, bytes::Bytes::from(mine_b))? {
                let pair = |b: &bytes::Bytes| -> (f64, f64) {
                    let f = |k: usize| {
                        b.get(k..k + 8)
                            .and_then(|x| <[u8; 8]>::try_from(x).ok())
                            .map_or(f64::NAN, f64::from_le_bytes)
                    };
                    (f(0), f(8))
                };
                let vals: Vec<(f64, f64)> = all.iter().map(pair).collect();
                let t: Vec<String> = vals.iter().map(|v| format!("{:.2}", v.0)).collect();
                let e: Vec<String> = vals
                    .iter()
                    .map(|v| format!("{:+.2}", v.1 - vals[0].1))
                    .collect();
                say(node, &format!("# per rank: {}", t.join(" ")));
                say(node, &format!("# loop: {looped:.2}"));
                say(
                    node,
                    &format!("# per rank, barrier exit after rank 0's: {}", e.join(" ")),
                );
            }
        }
        if s == 0 {
            break;
        }
    }
    Ok(())
}
