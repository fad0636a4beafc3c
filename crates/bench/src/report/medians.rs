//! The medians over repetitions (the floors: their best repetition), and the report's
//! view of them.

use std::collections::{BTreeMap, BTreeSet};

use crate::compare::{imp, Record};
use crate::Bench;

/// Key of one median: (implementation, np, benchmark, size).
pub type Key = (String, u32, String, u64);

/// Medians over repetitions of every (implementation, np, benchmark, size) — except the
/// floors, which take their best repetition (the least time, the most bandwidth): a floor
/// is what the machine can do, and a floor's pair of processes sometimes runs a whole sweep
/// in a mode about 5× slower (a 1 MiB spinning ping-pong at 517 and 527 µs in two
/// repetitions of one run and 94 µs in the third, while ours measured 111–113 µs in the
/// same minutes), which a median would report as the floor. Taking the best makes the
/// floor lower, so the targets against it harder, never easier.
pub fn medians(recs: &[Record]) -> BTreeMap<Key, f64> {
    let mut all: BTreeMap<Key, Vec<f64>> = BTreeMap::new();
    for r in recs {
        all.entry((r.imp.clone(), r.np, r.bench.clone(), r.size))
            .or_default()
            .push(r.value);
    }
    all.into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let higher_better = k.2.parse::<Bench>().is_ok_and(Bench::higher_is_better);
            let m = if imp::is_floor(&k.0) {
                if higher_better {
                    v[n - 1]
                } else {
                    v[0]
                }
            } else {
                median_of_sorted(&v)
            };
            (k, m)
        })
        .collect()
}

/// The median of sorted values (the mean of the middle two for an even count); `NaN` for
/// none.
pub fn median_of_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Sizes shown in the collective tables (when measured).
pub const KEY_SIZES: [u64; 3] = [8, 65536, 1048576];
/// Sizes shown in the point-to-point tables (when measured).
pub const P2P_KEY_SIZES: [u64; 4] = [8, 65536, 1048576, 4194304];

/// The report's view of the medians.
pub(super) struct View<'a> {
    pub(super) m: &'a BTreeMap<Key, f64>,
}

impl View<'_> {
    pub(super) fn get(&self, imp: &str, np: u32, bench: &str, size: u64) -> Option<f64> {
        self.m
            .get(&(imp.to_string(), np, bench.to_string(), size))
            .copied()
    }
    pub(super) fn nps(&self, bench: &str) -> Vec<u32> {
        let s: BTreeSet<u32> = self
            .m
            .keys()
            .filter(|k| k.2 == bench)
            .map(|k| k.1)
            .collect();
        s.into_iter().collect()
    }
    pub(super) fn has(&self, bench: &str) -> bool {
        self.m.keys().any(|k| k.2 == bench)
    }
    pub(super) fn sizes(&self, bench: &str, keys: &[u64]) -> Vec<u64> {
        keys.iter()
            .copied()
            .filter(|&s| self.m.keys().any(|k| k.2 == bench && k.3 == s))
            .collect()
    }
}
