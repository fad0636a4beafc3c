//! How the report writes numbers: byte sizes (in tables and on plot axes), figures,
//! ratios and their marks.

/// Byte size for tables: `8 B`, `64 KiB`, `1 MiB`.
pub fn size_text(s: u64) -> String {
    if s >= 1 << 20 && s % (1 << 20) == 0 {
        format!("{} MiB", s >> 20)
    } else if s >= 1 << 10 && s % (1 << 10) == 0 {
        format!("{} KiB", s >> 10)
    } else {
        format!("{s} B")
    }
}

pub(super) fn num(v: Option<f64>) -> String {
    match v {
        Some(v) if v >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
        None => "—".into(),
    }
}

pub(super) fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// A ratio with a mark: ✓ when it meets `limit` (≤ for times, ≥ for bandwidths).
pub(super) fn rtext(r: Option<f64>, limit: f64, higher_better: bool) -> String {
    match r {
        Some(r) => {
            let ok = if higher_better {
                r >= limit
            } else {
                r <= limit
            };
            format!("{r:.2}{}", if ok { " ✓" } else { "" })
        }
        None => "—".into(),
    }
}

/// A ratio as `0.85×`.
pub(super) fn xtext(r: Option<f64>) -> String {
    r.map_or("—".into(), |r| format!("{r:.2}×"))
}

/// Byte sizes as plot ticks: `8`, `64`, `1K`, `64K`, `1M`.
pub fn size_tick(x: f64) -> String {
    let v = x.round() as u64;
    if v >= 1 << 20 && v % (1 << 20) == 0 {
        format!("{}M", v >> 20)
    } else if v >= 1 << 10 && v % (1 << 10) == 0 {
        format!("{}K", v >> 10)
    } else {
        v.to_string()
    }
}
