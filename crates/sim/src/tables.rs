//! The thesis's Tables 5.1–5.8 (chapter 5), written down as data.
//!
//! Tables 5.1–5.3 compare ALG II, ALG I and RBF on all-to-all communication;
//! Tables 5.4–5.6 compare ALG II, ALG I and brute force on many-to-many
//! communication; Tables 5.7–5.8 give ALG II's `com_time` as a function of
//! the threshold for rows 5.4a and 5.5a. ALG II is reported at its best
//! threshold.

use crate::workload::Params;

/// Which existing algorithm a table compares against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Johnsson–Ho RBF (Tables 5.1–5.3).
    Rbf,
    /// Brute force, `BR_FC` (Tables 5.4–5.6).
    BruteForce,
}

/// One row of Tables 5.1–5.6.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperRow {
    /// Row label (`a` … `e`).
    pub label: char,
    /// Workload parameters.
    pub params: Params,
    /// Published `com_time` of ALG II (best threshold).
    pub alg2: u32,
    /// Published `com_time` of ALG I.
    pub alg1: u32,
    /// Published `com_time` of the baseline (RBF or BR_FC).
    pub baseline: u32,
}

/// One of Tables 5.1–5.6.
#[derive(Clone, Copy, Debug)]
pub struct PaperTable {
    /// `"5.1"` … `"5.6"`.
    pub id: &'static str,
    /// Caption.
    pub title: &'static str,
    /// Baseline column.
    pub baseline: Baseline,
    /// Rows.
    pub rows: &'static [PaperRow],
}

/// One of the threshold sweeps, Tables 5.7–5.8.
#[derive(Clone, Copy, Debug)]
pub struct ThresholdTable {
    /// `"5.7"` or `"5.8"`.
    pub id: &'static str,
    /// Caption.
    pub title: &'static str,
    /// Workload parameters.
    pub params: Params,
    /// `(threshold, com_time)` as published.
    pub points: &'static [(f64, u32)],
}

const fn p(n: u32, lnom1: u32, lnom2: u32, senders_pct: f64, dest_pct: f64) -> Params {
    Params {
        n,
        lnom1,
        lnom2,
        senders_pct,
        dest_pct,
    }
}

const fn r(label: char, params: Params, alg2: u32, alg1: u32, baseline: u32) -> PaperRow {
    PaperRow {
        label,
        params,
        alg2,
        alg1,
        baseline,
    }
}

/// Tables 5.1–5.6.
pub const TABLES: &[PaperTable] = &[
    PaperTable {
        id: "5.1",
        title: "6-cube, all-to-all communication",
        baseline: Baseline::Rbf,
        rows: &[
            r('a', p(6, 1, 1, 100.0, 100.0), 201, 205, 213),
            r('b', p(6, 2, 2, 100.0, 100.0), 405, 409, 422),
            r('c', p(6, 3, 3, 100.0, 100.0), 609, 613, 623),
            r('d', p(6, 4, 4, 100.0, 100.0), 814, 819, 831),
            r('e', p(6, 5, 5, 100.0, 100.0), 1018, 1022, 1043),
        ],
    },
    PaperTable {
        id: "5.2",
        title: "5-cube, all-to-all communication",
        baseline: Baseline::Rbf,
        rows: &[
            r('a', p(5, 1, 1, 100.0, 100.0), 84, 85, 103),
            r('b', p(5, 2, 2, 100.0, 100.0), 167, 170, 179),
            r('c', p(5, 3, 3, 100.0, 100.0), 252, 255, 262),
            r('d', p(5, 4, 4, 100.0, 100.0), 337, 340, 348),
            r('e', p(5, 5, 5, 100.0, 100.0), 421, 425, 436),
        ],
    },
    PaperTable {
        id: "5.3",
        title: "4-cube, all-to-all communication",
        baseline: Baseline::Rbf,
        rows: &[
            r('a', p(4, 1, 1, 100.0, 100.0), 33, 34, 37),
            r('b', p(4, 2, 2, 100.0, 100.0), 67, 68, 68),
            r('c', p(4, 3, 3, 100.0, 100.0), 100, 102, 105),
            r('d', p(4, 4, 4, 100.0, 100.0), 133, 135, 141),
            r('e', p(4, 5, 5, 100.0, 100.0), 167, 168, 169),
        ],
    },
    PaperTable {
        id: "5.4",
        title: "6-cube, many-to-many communication",
        baseline: Baseline::BruteForce,
        rows: &[
            r('a', p(6, 3, 7, 90.0, 20.0), 149, 155, 215),
            r('b', p(6, 1, 9, 40.0, 80.0), 237, 241, 384),
            r('c', p(6, 1, 5, 20.0, 90.0), 127, 127, 160),
            r('d', p(6, 2, 8, 50.0, 70.0), 267, 267, 369),
            // The scan reads "5 1 7": lnom2 = 7 (with 17 the lower bound alone
            // would be ≈ 480 > 287; see docs/simulator.md).
            r('e', p(6, 5, 7, 50.0, 50.0), 287, 287, 421),
        ],
    },
    PaperTable {
        id: "5.5",
        title: "5-cube, many-to-many communication",
        baseline: Baseline::BruteForce,
        rows: &[
            r('a', p(5, 5, 10, 90.0, 20.0), 111, 113, 147),
            r('b', p(5, 2, 15, 90.0, 40.0), 207, 207, 314),
            r('c', p(5, 1, 9, 30.0, 80.0), 100, 100, 135),
            r('d', p(5, 2, 10, 90.0, 10.0), 52, 53, 83),
            r('e', p(5, 2, 15, 20.0, 90.0), 173, 173, 215),
        ],
    },
    PaperTable {
        id: "5.6",
        title: "4-cube, many-to-many communication",
        baseline: Baseline::BruteForce,
        rows: &[
            r('a', p(4, 1, 8, 90.0, 40.0), 43, 44, 59),
            r('b', p(4, 2, 8, 20.0, 90.0), 39, 39, 40),
            r('c', p(4, 1, 10, 80.0, 80.0), 68, 68, 97),
            r('d', p(4, 3, 23, 50.0, 90.0), 196, 196, 234),
            r('e', p(4, 3, 9, 90.0, 10.0), 15, 15, 19),
        ],
    },
];

/// Tables 5.7 and 5.8.
pub const THRESHOLD_TABLES: &[ThresholdTable] = &[
    ThresholdTable {
        id: "5.7",
        title: "com_time vs threshold, 6-cube: lnom1 = 3, lnom2 = 7, %senders = 90, %dest = 20",
        params: p(6, 3, 7, 90.0, 20.0),
        points: &[(0.2, 153), (0.4, 153), (0.6, 151), (0.8, 149), (1.0, 149)],
    },
    ThresholdTable {
        id: "5.8",
        title: "com_time vs threshold, 5-cube: lnom1 = 5, lnom2 = 10, %senders = 90, %dest = 20",
        params: p(5, 5, 10, 90.0, 20.0),
        points: &[(0.2, 113), (0.4, 113), (0.6, 112), (0.8, 112), (1.0, 111)],
    },
];

/// All table identifiers, in order.
pub fn ids() -> Vec<&'static str> {
    TABLES
        .iter()
        .map(|t| t.id)
        .chain(THRESHOLD_TABLES.iter().map(|t| t.id))
        .collect()
}
