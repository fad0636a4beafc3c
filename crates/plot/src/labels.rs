//! Tick labels: plain numbers and the decades of a logarithmic axis.

/// Numbers as plain as they are: `3`, `0.25`, `146`.
pub fn number(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{}", x.round() as i64)
    } else {
        format!("{x:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// Ticks of a decade axis: `0.10`, `1`, `20`, `5000`, `10k`, `1M`.
pub fn decade(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", (v / 1e6 * 100.0).round() / 100.0)
    } else if v >= 1e4 {
        format!("{}k", (v / 1e3).round())
    } else if v >= 1.0 {
        format!("{}", v.round())
    } else {
        format!("{v:.2}")
    }
}
