//! The page's figures: the medians of the rows (the average and the slowest rank) and the
//! comparisons of ours with Open MPI and the link bound.

use std::collections::BTreeMap;

use crate::compare::Record;
use crate::report;
use crate::Bench;

use super::rows::{Row, OMPI, OURS};

/// Human names of the implementations.
pub(super) fn imp_label(imp: &str) -> &'static str {
    match imp {
        OURS => "hypercube",
        OMPI => "Open MPI",
        _ => "other",
    }
}

/// Medians over repetitions of one (d, rate, impl, bench, size): the average and the
/// slowest rank.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Figures {
    /// Median of the OSU average.
    pub avg: f64,
    /// Median of the slowest rank's time.
    pub max: f64,
    /// Median of rank 0's time per call and barrier ([`Row::loop_us`]); NaN where not
    /// measured.
    pub lp: f64,
}

/// Key of [`medians`]: (d, rate, impl, bench, size).
pub type Key = (u32, String, String, String, u64);

/// Medians over repetitions of every (d, rate, impl, bench, size), of the average and of
/// the slowest rank separately ([`report::medians`]).
pub fn medians(rows: &[Row]) -> BTreeMap<Key, Figures> {
    let rec = |r: &Row, what: &str, value: f64| Record {
        imp: format!("{}|{}|{}|{what}", r.dim, r.rate, r.imp),
        np: 1 << r.dim,
        bench: r.bench.clone(),
        size: r.size,
        rep: r.rep,
        value,
        unit: r.unit.clone(),
    };
    let recs: Vec<Record> = rows
        .iter()
        .flat_map(|r| {
            let lp = r.loop_us.map(|l| rec(r, "loop", l));
            [Some(rec(r, "avg", r.avg)), Some(rec(r, "max", r.max)), lp]
        })
        .flatten()
        .collect();
    let mut out: BTreeMap<Key, Figures> = BTreeMap::new();
    for ((imp, _, bench, size), v) in report::medians(&recs) {
        let f: Vec<&str> = imp.split('|').collect();
        let (Some(d), Some(rate), Some(i), Some(what)) = (f.first(), f.get(1), f.get(2), f.get(3))
        else {
            continue;
        };
        let Ok(d) = d.parse() else { continue };
        let e = out
            .entry((d, rate.to_string(), i.to_string(), bench, size))
            .or_insert(Figures {
                avg: f64::NAN,
                max: f64::NAN,
                lp: f64::NAN,
            });
        match *what {
            "avg" => e.avg = v,
            "loop" => e.lp = v,
            _ => e.max = v,
        }
    }
    out
}

/// A time in µs for a table: `0.07 µs`, `85.3 µs`, `4567 µs`, `12.3 ms`, `705 ms`,
/// `1.32 s`.
pub fn time_text(us: f64) -> String {
    if !us.is_finite() {
        "—".into()
    } else if us < 1.0 {
        format!("{us:.2} µs")
    } else if us < 100.0 {
        format!("{us:.1} µs")
    } else if us < 10_000.0 {
        format!("{us:.0} µs")
    } else if us < 100_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else if us < 1_000_000.0 {
        format!("{:.0} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

pub(super) fn x(r: Option<f64>) -> String {
    match r.filter(|v| v.is_finite()) {
        None => "—".into(),
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 10.0 => format!("{r:.1}×"),
        Some(r) => format!("{r:.2}×"),
    }
}

pub(super) fn div(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() => Some(a / b),
        _ => None,
    }
}

/// The (d, rate) cases of the results, in the order measured.
pub(super) fn cases(rows: &[Row]) -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = Vec::new();
    for r in rows {
        if !v.iter().any(|c| c.0 == r.dim && c.1 == r.rate) {
            v.push((r.dim, r.rate.clone()));
        }
    }
    v
}

pub(super) struct View {
    pub(super) m: BTreeMap<Key, Figures>,
    /// Bound (µs) per (d, rate, bench, size), from the rows.
    pub(super) bound: BTreeMap<(u32, String, String, u64), f64>,
}

impl View {
    pub(super) fn of(rows: &[Row]) -> View {
        let mut bound = BTreeMap::new();
        for r in rows {
            if let Some(b) = r.bound_us {
                bound.insert((r.dim, r.rate.clone(), r.bench.clone(), r.size), b);
            }
        }
        View {
            m: medians(rows),
            bound,
        }
    }
    /// The figures of `imp`'s `bench` at `size` — for Open MPI of the collective that does
    /// the job where `bench` is an iPSC utility ([`Bench::mpi_peer`]), which only ours runs.
    pub(super) fn get(
        &self,
        d: u32,
        rate: &str,
        imp: &str,
        bench: &str,
        size: u64,
    ) -> Option<Figures> {
        let bench = match bench.parse::<Bench>().ok().and_then(Bench::mpi_peer) {
            Some(p) if imp == OMPI => p.name(),
            _ => bench,
        };
        self.m
            .get(&(
                d,
                rate.to_string(),
                imp.to_string(),
                bench.to_string(),
                size,
            ))
            .copied()
    }
    pub(super) fn bound(&self, d: u32, rate: &str, bench: &str, size: u64) -> Option<f64> {
        self.bound
            .get(&(d, rate.to_string(), bench.to_string(), size))
            .copied()
    }
    pub(super) fn sizes(&self, d: u32, rate: &str, bench: &str) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .m
            .keys()
            .filter(|k| k.0 == d && k.1 == rate && k.3 == bench)
            .map(|k| k.4)
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// One compared case of the tables: ours and Open MPI's figures and the bound.
pub(super) struct Cmp {
    pub(super) ours: Option<Figures>,
    pub(super) mpi: Option<Figures>,
    pub(super) bound: Option<f64>,
}

impl Cmp {
    /// The nine figures of a table row: ours and Open MPI's avg and slowest, their
    /// ratios, each one's ratio to the link bound, and the ratio of the times per call and
    /// barrier.
    pub(super) fn cells(&self) -> [String; 9] {
        [
            t(self.ours, false),
            t(self.ours, true),
            t(self.mpi, false),
            t(self.mpi, true),
            x(self.ratio_avg()),
            x(self.ratio_max()),
            x(self.ours_bound()),
            x(self.mpi_bound()),
            x(self.ratio_loop()),
        ]
    }

    /// `bench` at `size`: ours, Open MPI's ([`View::get`]) and the bound.
    pub(super) fn of(v: &View, d: u32, rate: &str, bench: &str, size: u64) -> Cmp {
        Cmp {
            ours: v.get(d, rate, OURS, bench, size),
            mpi: v.get(d, rate, OMPI, bench, size),
            bound: v.bound(d, rate, bench, size),
        }
    }
    pub(super) fn ratio_avg(&self) -> Option<f64> {
        div(self.ours.map(|f| f.avg), self.mpi.map(|f| f.avg))
    }
    pub(super) fn ratio_max(&self) -> Option<f64> {
        div(self.ours.map(|f| f.max), self.mpi.map(|f| f.max))
    }
    /// Ours / Open MPI's time per call and barrier (rank 0's loop), where both have one.
    pub(super) fn ratio_loop(&self) -> Option<f64> {
        let lp = |f: Option<Figures>| f.map(|f| f.lp).filter(|v| v.is_finite());
        div(lp(self.ours), lp(self.mpi))
    }
    pub(super) fn ours_bound(&self) -> Option<f64> {
        div(self.ours.map(|f| f.max), self.bound)
    }
    pub(super) fn mpi_bound(&self) -> Option<f64> {
        div(self.mpi.map(|f| f.max), self.bound)
    }
}

pub(super) fn t(f: Option<Figures>, max: bool) -> String {
    f.map_or("—".into(), |f| time_text(if max { f.max } else { f.avg }))
}
