//! The link model of the emulated network (a `tbf` token bucket per link) and its weighted
//! least-squares fit to the ping-pongs.

use anyhow::{bail, Context};
use hypercube::collectives::select::CostModel;
use hypercube::transport::Forwarding;

/// Bytes on the wire per payload byte of a full TCP segment through `tbf` on a veth:
/// 1448 payload bytes (MSS with timestamps) travel as a 1514-byte Ethernet frame, and `tbf`
/// charges the frame.
pub const FRAMING: f64 = 1514.0 / 1448.0;

/// The least-squares solution `β` of `X β ≈ y` (rows of `X` in `rows`), by the normal
/// equations on columns scaled to unit maximum, solved with partial pivoting. `None` when
/// the rows do not determine every coefficient (fewer rows than columns, a zero or
/// dependent column).
pub fn least_squares(rows: &[Vec<f64>], y: &[f64]) -> Option<Vec<f64>> {
    let n = rows.first()?.len();
    if n == 0 || rows.len() < n || rows.len() != y.len() || rows.iter().any(|r| r.len() != n) {
        return None;
    }
    let scale: Vec<f64> = (0..n)
        .map(|j| rows.iter().map(|r| r[j].abs()).fold(0.0, f64::max))
        .collect();
    if scale.iter().any(|&s| s == 0.0 || !s.is_finite()) {
        return None;
    }
    // A = XᵀX, v = Xᵀy over the scaled columns; augmented matrix [A | v].
    let mut a = vec![vec![0.0; n + 1]; n];
    for (r, &yi) in rows.iter().zip(y) {
        for i in 0..n {
            let xi = r[i] / scale[i];
            for j in 0..n {
                a[i][j] += xi * r[j] / scale[j];
            }
            a[i][n] += xi * yi;
        }
    }
    let norm = a
        .iter()
        .map(|r| r[..n].iter().map(|x| x.abs()).fold(0.0, f64::max))
        .fold(0.0, f64::max);
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() <= 1e-12 * norm {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (i, row) in a.iter_mut().enumerate() {
            if i != col {
                let f = row[col] / pivot_row[col];
                for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i] / scale[i]).collect())
}

/// One ping-pong measurement: the one-way time (half the round trip) of `bytes` over
/// `hops` links.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PingPong {
    /// Message size in bytes.
    pub bytes: u64,
    /// Links between the two ranks (the hamming distance).
    pub hops: u32,
    /// One-way time in seconds.
    pub secs: f64,
}

/// Which regime of the token bucket a ping-pong size is fitted in (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeClass {
    /// A few bytes: start-up and hops only.
    Small,
    /// Between: the duty-cycle regime (not fitted).
    Mid,
    /// Every message drains a full bucket: the link rate.
    Large,
}

/// The regime a ping-pong of `bytes` is fitted in, for a bucket of `burst` bytes: small up
/// to `burst / 512` (128 B at hcrun's 96 KiB: the duty cycle's `t_w m / 2` stays below
/// the start-up on links of up to ~1 Gbit/s), large from `2.5 burst` (above `2 burst` the
/// bucket is full when a message starts), mid between.
pub fn size_class(bytes: u64, burst: u64) -> SizeClass {
    let (m, b) = (bytes as f64, burst as f64);
    if m <= b / 512.0 {
        SizeClass::Small
    } else if m >= 2.5 * b {
        SizeClass::Large
    } else {
        SizeClass::Mid
    }
}

/// What a message over `hops` links pays per byte in units of one link's time: 1 under
/// cut-through (the links carry it at once), `hops` under store-and-forward (in turn).
pub fn hop_factor(forwarding: Forwarding, hops: u32) -> f64 {
    match forwarding {
        Forwarding::CutThrough => 1.0,
        Forwarding::StoreAndForward => f64::from(hops.max(1)),
    }
}

/// Grama's parameters fitted to ping-pongs in one routing regime, with the token bucket's
/// effect (seconds, seconds per byte, bytes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkFit {
    /// The routing regime of the ping-pongs.
    pub forwarding: Forwarding,
    /// Start-up time of a message between neighbours (the model's `t_s`, which holds the
    /// first link's header time).
    pub t_s: f64,
    /// Time of every link beyond the first (0 when fitted without it).
    pub t_h: f64,
    /// Link time per payload byte (drained bucket).
    pub t_w: f64,
    /// The bucket's effective depth in payload bytes: `c / t_w`.
    pub burst: f64,
    /// Whether `t_h` was fitted.
    pub with_hop: bool,
    /// Root mean square of the relative residuals of the fitted points.
    pub rms_rel: f64,
    /// Largest relative residual of the fitted points.
    pub max_rel: f64,
    /// Number of fitted points.
    pub points: usize,
}

impl LinkFit {
    /// The model's steady-state one-way ping-pong time of `bytes` over `hops` links: the
    /// largest of the three regimes' times (each is the binding constraint in its range,
    /// and they meet where the regime changes):
    ///
    /// - start-up: `t_s + (l − 1) t_h`;
    /// - duty cycle: every link of the route carries `m` once per round trip `2T` and, as
    ///   long as its bucket does not fill up in between, passes exactly the tokens the rate
    ///   makes in `2T`: `m = 2T / t_w`, so `T = t_w m / 2` whatever `l` and the regime;
    /// - drained: the bucket is full (`b`) when the message starts and the rest goes at
    ///   the rate, on each of the `k` links in turn: `t_s + (l − 1) t_h + k t_w (m − b)`.
    ///
    /// A run shorter than the bucket is faster than this steady state: sizes of a few
    /// hundred bytes to ~2 KiB, whose whole run fits in the bucket, go at core speed.
    pub fn predict(&self, bytes: u64, hops: u32) -> f64 {
        let m = bytes as f64;
        let k = hop_factor(self.forwarding, hops);
        let base = self.t_s + self.t_h * f64::from(hops.max(1) - 1);
        let duty = self.t_w * m / 2.0;
        let drained = base + k * self.t_w * (m - self.burst);
        base.max(duty).max(drained)
    }

    /// Which term of [`LinkFit::predict`] decides at `bytes` over `hops` links:
    /// `start-up`, `duty cycle` or `drained`.
    pub fn regime(&self, bytes: u64, hops: u32) -> &'static str {
        let m = bytes as f64;
        let k = hop_factor(self.forwarding, hops);
        let base = self.t_s + self.t_h * f64::from(hops.max(1) - 1);
        let duty = self.t_w * m / 2.0;
        let drained = base + k * self.t_w * (m - self.burst);
        if base >= duty && base >= drained {
            "start-up"
        } else if duty >= drained {
            "duty cycle"
        } else {
            "drained"
        }
    }

    /// The virtual-clock transport's cost model with these parameters (no bucket).
    pub fn cost_model(&self) -> CostModel {
        CostModel::new(self.t_s, self.t_w)
            .with_hop(self.t_h)
            .with_forwarding(self.forwarding)
    }
}

/// One row of the fit: the design row (columns `t_s, t_h, t_w, c`, without `t_h` when
/// `with_hop` is false) of a sample, `None` for the sizes that are not fitted.
pub(super) fn design_row(
    s: &PingPong,
    f: Forwarding,
    nominal_burst: u64,
    with_hop: bool,
) -> Option<Vec<f64>> {
    let m = s.bytes as f64;
    let k = hop_factor(f, s.hops);
    let extra = f64::from(s.hops.max(1) - 1);
    let mut row = match size_class(s.bytes, nominal_burst) {
        SizeClass::Small => vec![1.0, extra, 0.0, 0.0],
        SizeClass::Large => vec![1.0, extra, k * m, -k],
        SizeClass::Mid => return None,
    };
    if !with_hop {
        row.remove(1);
    }
    Some(row)
}

/// Fit [`LinkFit`] to ping-pongs in the regime `forwarding`, by least squares on the
/// relative error (every row divided by its measured time), over the small and large sizes
/// of [`size_class`] for a bucket of `nominal_burst` bytes. `with_hop = false` fits
/// without the per-hop time.
pub fn fit_link(
    samples: &[PingPong],
    forwarding: Forwarding,
    nominal_burst: u64,
    with_hop: bool,
) -> anyhow::Result<LinkFit> {
    let mut rows = Vec::new();
    let mut y = Vec::new();
    let mut used = Vec::new();
    for s in samples
        .iter()
        .filter(|s| s.secs > 0.0 && s.secs.is_finite())
    {
        if let Some(r) = design_row(s, forwarding, nominal_burst, with_hop) {
            rows.push(r.iter().map(|x| x / s.secs).collect::<Vec<f64>>());
            y.push(1.0);
            used.push(*s);
        }
    }
    let has = |c: SizeClass| used.iter().any(|s| size_class(s.bytes, nominal_burst) == c);
    if !has(SizeClass::Small) || !has(SizeClass::Large) {
        bail!("the fit needs small (≤ burst/64) and large (≥ 2.5 burst) sizes");
    }
    let beta = least_squares(&rows, &y).context(
        "the ping-pongs do not determine the parameters (several hop counts and sizes needed)",
    )?;
    let (t_s, t_h, rest) = if with_hop {
        (beta[0], beta[1], &beta[2..])
    } else {
        (beta[0], 0.0, &beta[1..])
    };
    let (t_w, c) = (rest[0], rest[1]);
    let mut fit = LinkFit {
        forwarding,
        t_s,
        t_h,
        t_w,
        burst: if t_w != 0.0 { c / t_w } else { 0.0 },
        with_hop,
        rms_rel: 0.0,
        max_rel: 0.0,
        points: used.len(),
    };
    let rel: Vec<f64> = used
        .iter()
        .map(|s| fit.predict(s.bytes, s.hops) / s.secs - 1.0)
        .collect();
    fit.rms_rel = (rel.iter().map(|r| r * r).sum::<f64>() / rel.len() as f64).sqrt();
    fit.max_rel = rel.iter().map(|r| r.abs()).fold(0.0, f64::max);
    Ok(fit)
}
