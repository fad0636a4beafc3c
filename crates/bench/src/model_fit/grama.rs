//! Grama's formulas, step by step: the critical path of each operation's algorithm, its
//! time with the fitted parameters, and with the token bucket.

use crate::Bench;
use hypercube::collectives::select::CostModel;
use hypercube::collectives::Algorithm;

use super::fit::{hop_factor, LinkFit};

/// One message of an algorithm's critical path: its size and the links of its route.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// Payload bytes.
    pub bytes: f64,
    /// Links of the route (1 for a neighbour).
    pub links: u32,
}

/// The messages on the critical path of `alg` for `bench` on a `dim`-cube, one after the
/// other, with `m` as `osu` defines SIZE ([`Bench`]): the book's derivations of eq. 4.1
/// (broadcast, reduction, prefix sums, §4.3's all-reduce: log p messages of m), 4.4
/// (all-to-all broadcast: `2^i m` in step i), 4.6 (scatter, gather: `m p / 2^(i+1)`),
/// Alg. 4.8 (all-to-all reduction, whose per-node vector is `p m`: `p m / 2^(i+1)`), 4.9
/// (all-to-all personalized, store-and-forward: log p messages of `m p / 2`), 4.10
/// (pairwise: `m` to partner `j` over `popcount(j)` links, j = 1 … p − 1) and 4.12 (e-cube
/// shift by one in rank order: one message over the longest route, log p links). `None` if
/// the pair is not one of these.
pub fn critical_path(bench: Bench, alg: Algorithm, dim: u32, m: f64) -> Option<Vec<Step>> {
    let p = f64::from(1u32 << dim);
    let one = |bytes: f64| Step { bytes, links: 1 };
    let halving = |total: f64| {
        (0..dim)
            .map(|i| one(total / f64::from(2u32 << i)))
            .collect()
    };
    Some(match (bench, alg) {
        (Bench::Bcast | Bench::Reduce | Bench::Allreduce | Bench::Scan, Algorithm::Hypercube) => {
            (0..dim).map(|_| one(m)).collect()
        }
        (Bench::Allgather, Algorithm::Hypercube) => {
            (0..dim).map(|i| one(m * f64::from(1u32 << i))).collect()
        }
        (Bench::Scatter | Bench::Gather | Bench::ReduceScatter, Algorithm::Hypercube) => {
            halving(m * p)
        }
        (Bench::Alltoall, Algorithm::StoreForward) => (0..dim).map(|_| one(m * p / 2.0)).collect(),
        (Bench::Alltoall, Algorithm::Pairwise) => (1..1u32 << dim)
            .map(|j| Step {
                bytes: m,
                links: j.count_ones(),
            })
            .collect(),
        (Bench::Shift, Algorithm::Ecube) if dim > 0 => vec![Step {
            bytes: m,
            links: dim,
        }],
        _ => return None,
    })
}

/// Grama's time of `alg` for `bench` (see [`critical_path`]) under `model`: the sum of
/// [`CostModel::message_over`] over the critical path, which is the book's expression
/// (with `t_h` per link beyond the first, in the model's routing regime).
pub fn grama_time(
    bench: Bench,
    alg: Algorithm,
    dim: u32,
    m: f64,
    model: &CostModel,
) -> Option<f64> {
    let steps = critical_path(bench, alg, dim, m)?;
    Some(
        steps
            .iter()
            .map(|s| model.message_over(s.bytes.round() as usize, s.links))
            .sum(),
    )
}

/// The bytes the busiest directed link carries in one call of `alg` for `bench`: the
/// largest step for the algorithms whose steps each use another dimension, `m p / 2` for
/// the pairwise all-to-all (its `m p · (p/2) log p` link-bytes spread evenly over the
/// `p log p` directed links).
pub fn busiest_link_of(bench: Bench, alg: Algorithm, dim: u32, m: f64) -> Option<f64> {
    if (bench, alg) == (Bench::Alltoall, Algorithm::Pairwise) {
        return Some(m * f64::from(1u32 << dim) / 2.0);
    }
    let steps = critical_path(bench, alg, dim, m)?;
    Some(steps.iter().map(|s| s.bytes).fold(0.0, f64::max))
}

/// Grama's time with the token bucket of the emulated links, from the fit: each message of
/// the critical path starts on links with a full bucket, so only its bytes beyond `b` wait
/// for the rate (`t_s + (l − 1) t_h + k t_w max(0, x − b)`); and over many calls each
/// link passes no more than the rate, so a call takes at least its busiest link's bytes
/// ([`busiest_link_of`]) times `t_w`. The larger of the two. (Bytes within the bucket are
/// charged nothing: their core-speed time is below the noise of a collective.)
pub fn tbf_time(bench: Bench, alg: Algorithm, dim: u32, m: f64, fit: &LinkFit) -> Option<f64> {
    let steps = critical_path(bench, alg, dim, m)?;
    let path: f64 = steps
        .iter()
        .map(|s| {
            fit.t_s
                + fit.t_h * f64::from(s.links.max(1) - 1)
                + hop_factor(fit.forwarding, s.links) * fit.t_w * (s.bytes - fit.burst).max(0.0)
        })
        .sum();
    let rate = busiest_link_of(bench, alg, dim, m)? * fit.t_w;
    Some(path.max(rate))
}
