//! The fits of a run (one per rate) and the rows of the per-operation table.

use crate::linkbound::link_bound_secs;
use crate::Bench;
use anyhow::Context;
use hypercube::transport::Forwarding;

use super::cases::{cases, default_burst, parse_rate, Case, Raw};
use super::clock::{shaped_clock, virtual_clock};
use super::fit::{fit_link, LinkFit, PingPong};
use super::grama::{grama_time, tbf_time};

/// The fits of one rate: `(dim, regime) → fit`, with and without `t_h`.
#[derive(Clone, Debug)]
pub struct Fits {
    /// Link rate as given to hcrun.
    pub rate: String,
    /// Its bytes per second.
    pub bytes_per_sec: f64,
    /// hcrun's bucket depth at that rate (bytes).
    pub nominal_burst: u64,
    /// `(dim, fit with t_h, fit without t_h)`.
    pub fits: Vec<(u32, LinkFit, Option<LinkFit>)>,
}

impl Fits {
    /// Fit every (dim, regime) of `raw` at `rate`.
    pub fn from_raw(raw: &[Raw], rate: &str) -> anyhow::Result<Fits> {
        let bytes_per_sec = parse_rate(rate)?;
        let nominal_burst = default_burst(bytes_per_sec);
        let mut dims: Vec<u32> = raw
            .iter()
            .filter(|r| r.rate == rate && r.bench == Bench::Latency)
            .map(|r| r.dim)
            .collect();
        dims.sort_unstable();
        dims.dedup();
        let mut fits = Vec::new();
        for d in dims {
            for f in [Forwarding::CutThrough, Forwarding::StoreAndForward] {
                let s = pingpongs(raw, rate, d, f);
                if s.is_empty() {
                    continue;
                }
                let with = fit_link(&s, f, nominal_burst, true)
                    .with_context(|| format!("fitting d = {d}, {f}, {rate}"))?;
                let without = fit_link(&s, f, nominal_burst, false).ok();
                fits.push((d, with, without));
            }
        }
        Ok(Fits {
            rate: rate.to_string(),
            bytes_per_sec,
            nominal_burst,
            fits,
        })
    }

    /// The fit (with `t_h`) of a dimension and regime.
    pub fn get(&self, dim: u32, f: Forwarding) -> Option<&LinkFit> {
        self.fits
            .iter()
            .find(|(d, x, _)| *d == dim && x.forwarding == f)
            .map(|(_, x, _)| x)
    }
}

/// The ping-pongs of `raw` at one rate, dimension and regime.
pub(super) fn pingpongs(raw: &[Raw], rate: &str, dim: u32, f: Forwarding) -> Vec<PingPong> {
    raw.iter()
        .filter(|r| {
            r.rate == rate && r.dim == dim && r.forwarding == f && r.bench == Bench::Latency
        })
        .map(|r| PingPong {
            bytes: r.size,
            hops: r.hops,
            secs: r.avg_us * 1e-6,
        })
        .collect()
}

/// One row of the per-operation table, computed from a measurement and the fits.
#[derive(Clone, Debug)]
pub struct OpRow {
    /// The case.
    pub case: Case,
    /// Cube dimension.
    pub dim: u32,
    /// SIZE in bytes.
    pub size: u64,
    /// Measured mean and slowest rank (s).
    pub measured: (f64, f64),
    /// Grama's formula with the fitted parameters (s).
    pub grama: Option<f64>,
    /// The same with the token bucket (s).
    pub tbf: Option<f64>,
    /// The virtual clock's mean and slowest node (s).
    pub virtual_clock: Option<(f64, f64)>,
    /// The same on the all-port virtual clock (s).
    pub all_port: Option<(f64, f64)>,
    /// The all-port virtual clock with the fitted burst on every link, over `osu`'s loop
    /// of calls (s; `clock::shaped_clock`).
    pub shaped: Option<(f64, f64)>,
    /// The all-port link bound at the fitted payload rate (s).
    pub link_bound: Option<f64>,
}

/// Compute the rows of the per-operation table (runs the virtual clock).
pub fn op_rows(raw: &[Raw], fits: &Fits, notes: &mut Vec<String>) -> Vec<OpRow> {
    let mut rows = Vec::new();
    for r in raw
        .iter()
        .filter(|r| r.rate == fits.rate && r.bench != Bench::Latency)
    {
        let Some(case) = cases().into_iter().find(|c| {
            c.bench == r.bench
                && c.alg == r.alg
                && c.forwarding == r.forwarding
                && c.eager == r.eager
        }) else {
            continue;
        };
        let Some(fit) = fits.get(r.dim, r.forwarding) else {
            notes.push(format!(
                "no {} fit for d = {}: {} {} not modelled",
                r.forwarding, r.dim, r.bench, r.alg
            ));
            continue;
        };
        let alg = case.algorithm();
        let m = r.size as f64;
        let model = fit.cost_model();
        // A clock's time, or its error noted.
        let mut noted =
            |t: anyhow::Result<(f64, f64)>| t.map_err(|e| notes.push(format!("{e:#}"))).ok();
        let s = r.size as usize;
        let vc = noted(virtual_clock(r.bench, alg, r.dim, s, model, false));
        let ap = noted(virtual_clock(r.bench, alg, r.dim, s, model, true));
        let burst = fit.burst.max(0.0) as usize;
        let shaped = noted(shaped_clock(r.bench, alg, r.dim, s, model, burst));
        rows.push(OpRow {
            case,
            dim: r.dim,
            size: r.size,
            measured: (r.avg_us * 1e-6, r.max_us * 1e-6),
            grama: grama_time(r.bench, alg, r.dim, m, &model),
            tbf: tbf_time(r.bench, alg, r.dim, m, fit),
            virtual_clock: vc,
            all_port: ap,
            shaped,
            link_bound: link_bound_secs(r.bench, r.dim, m, 1.0 / fit.t_w),
        });
    }
    // An eager row right after its default-protocol twin.
    let order = |c: &Case| {
        cases()
            .iter()
            .position(|x| (x.bench, x.alg, x.forwarding) == (c.bench, c.alg, c.forwarding))
            .unwrap_or(usize::MAX)
    };
    rows.sort_by_key(|r| (r.dim, order(&r.case), r.size, r.case.eager));
    rows
}

/// `(min, median, max)` of some ratios (`None` when there are none).
pub fn spread(mut v: Vec<f64>) -> Option<(f64, f64, f64)> {
    v.retain(|x| x.is_finite());
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let med = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some((v[0], med, v[n - 1]))
}
