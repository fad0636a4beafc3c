//! The example problem of the iPSC communication utilities (Moler & Scott 1986, §10): a
//! vector `X(N)`, `N = P·M`, is distributed over the `P` nodes (node `k` holds elements
//! `k·M .. (k+1)·M`); it is normalized and then gathered, whole and in order, at the root.
//!
//! As the seed advises, the norm is computed without overflow or underflow: first the
//! largest magnitude `s` (GOP `'M'`), then `s·sqrt(Σ (x/s)²)` (GOP `'+'`), so elements near
//! `1e300` work (`--huge`) where the seed's `DSQRT(DOT)` would give infinity.
//!
//! ```text
//! cargo run --release -p launcher -- --dim 3 --example normalize -- --m 4 --root 5 --huge
//! ```
//!
//! The root prints `norm <value>`, one `x <index> <value>` line per element (up to 4096
//! elements) and `checksum <sum of the elements>`.

use anyhow::{bail, ensure, Context, Result};
use hypercube::ipsc::Op;

/// Element `i` of the example vector (the same formula the integration test uses).
fn element(i: usize, huge: bool) -> f64 {
    let scale = if huge { 1e300 } else { 1.0 };
    (((i * 37 + 5) % 23) as f64 - 11.0) * scale
}

struct Args {
    m: usize,
    root: u32,
    huge: bool,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        m: 3,
        root: 0,
        huge: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--m" => args.m = it.next().context("--m needs a value")?.parse()?,
            "--root" => args.root = it.next().context("--root needs a value")?.parse()?,
            "--huge" => args.huge = true,
            other => bail!("unknown argument {other:?}; use --m M, --root R, --huge"),
        }
    }
    Ok(args)
}

/// GSENDW `value` at the root, GRECVW elsewhere; everybody returns the root's value.
fn broadcast_f64(node: &hypercube::Node, root: u32, value: f64) -> Result<f64> {
    let d = node.cubedim();
    if node.mynode() == root {
        node.gsend(value.to_le_bytes().to_vec(), d)?;
        return Ok(value);
    }
    let b = node.grecv(d)?;
    Ok(f64::from_le_bytes(
        b[..].try_into().context("a broadcast f64 is 8 bytes")?,
    ))
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let node = hypercube::init()?;
    let (me, p, d) = (node.mynode(), node.numnodes(), node.cubedim());
    ensure!(
        args.root < p,
        "--root {} is not a node of the {d}-cube",
        args.root
    );
    let (m, root) = (args.m, args.root);

    // This node's part of X.
    let mut x: Vec<f64> = (0..m)
        .map(|i| element(me as usize * m + i, args.huge))
        .collect();

    // The largest magnitude: GOP 'M' into the root, which broadcasts it.
    let mut scale = [x.iter().fold(0.0f64, |a, v| a.max(v.abs()))];
    node.gop(&mut scale, Op::Max, root, d)?;
    let s = broadcast_f64(&node, root, scale[0])?;

    // The scaled sum of squares: GOP '+' into the root.
    let mut dot = [if s > 0.0 {
        x.iter().map(|v| (v / s) * (v / s)).sum::<f64>()
    } else {
        0.0
    }];
    node.gop(&mut dot, Op::Sum, root, d)?;

    // The root computes the norm and distributes it (GSENDW / GRECVW).
    let norm = broadcast_f64(&node, root, s * dot[0].sqrt())?;

    // Local normalization (a zero vector stays zero).
    if norm > 0.0 {
        for v in &mut x {
            *v /= norm;
        }
    }

    // Concatenate at the root: block k of the result belongs to node k XOR root.
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let all = node.gcat(bytes, root, d)?;
    if me == root {
        ensure!(
            all.len() == 8 * m * p as usize,
            "GCAT returned {} bytes",
            all.len()
        );
        let mut y = vec![0.0f64; m * p as usize];
        for (k, block) in all.chunks_exact(8 * m).enumerate() {
            let owner = k ^ root as usize;
            for (i, b) in block.chunks_exact(8).enumerate() {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                y[owner * m + i] = f64::from_le_bytes(a);
            }
        }
        println!("norm {norm:e}");
        if y.len() <= 4096 {
            for (i, v) in y.iter().enumerate() {
                println!("x {i} {v:e}");
            }
        }
        println!("checksum {:e}", y.iter().sum::<f64>());
    }
    Ok(())
}
