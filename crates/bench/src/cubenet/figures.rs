//! The page's plots: one SVG per benchmark, ours and Open MPI against the link bound.

use hypercube_plot::{Axis, Figure, Legend, Panel, Series};

use crate::report::size_tick;
use crate::Bench;

use super::medians::{cases, View};
use super::rows::{Row, OMPI, OURS};

/// The figure of one benchmark: a panel per (d, rate), ours and Open MPI's avg (solid) and
/// slowest rank (dashed; for an iPSC utility Open MPI's run of its peer collective:
/// `View::get`), and the link bound; barrier: time against the ranks, a panel per
/// rate.
pub fn figure(rows: &[Row], bench: Bench) -> Option<Figure> {
    let v = View::of(rows);
    let cs = cases(rows);
    if !rows.iter().any(|r| r.bench == bench.name()) {
        return None;
    }
    let styles = [
        (OURS, false, 0xd62728u32, "hypercube avg"),
        (OURS, true, 0xd62728, "hypercube slowest"),
        (OMPI, false, 0x1f77b4, "Open MPI avg"),
        (OMPI, true, 0x1f77b4, "Open MPI slowest"),
    ];
    let mk = |label: &str, color: u32, dashed: bool, points: Vec<(f64, f64)>| {
        (!points.is_empty()).then(|| Series {
            label: label.to_string(),
            color,
            dashed,
            points,
        })
    };
    if bench == Bench::Barrier {
        let mut rates: Vec<String> = Vec::new();
        for c in &cs {
            if !rates.contains(&c.1) {
                rates.push(c.1.clone());
            }
        }
        let panels = rates
            .iter()
            .map(|rate| Panel {
                title: rate.clone(),
                series: styles
                    .iter()
                    .filter_map(|&(imp, max, color, label)| {
                        let pts = cs
                            .iter()
                            .filter(|c| &c.1 == rate)
                            .filter_map(|c| {
                                let f = v.get(c.0, rate, imp, "barrier", 0)?;
                                Some((f64::from(1u32 << c.0), if max { f.max } else { f.avg }))
                            })
                            .collect();
                        mk(label, color, max, pts)
                    })
                    .collect(),
            })
            .collect::<Vec<_>>();
        return Some(Figure {
            title: "barrier on the emulated network: time against the ranks".into(),
            x: Axis::log2("ranks", hypercube_plot::number),
            y: Axis::log10("µs"),
            columns: panels.len().clamp(1, 2),
            panels,
            panel_size: (440, 300),
            legend: Legend::Top,
        });
    }
    let panels: Vec<Panel> = cs
        .iter()
        .map(|(d, rate)| {
            let sizes = v.sizes(*d, rate, bench.name());
            let mut series: Vec<Series> = styles
                .iter()
                .filter_map(|&(imp, max, color, label)| {
                    let pts = sizes
                        .iter()
                        .filter(|&&s| s > 0)
                        .filter_map(|&s| {
                            let f = v.get(*d, rate, imp, bench.name(), s)?;
                            Some((s as f64, if max { f.max } else { f.avg }))
                        })
                        .collect();
                    mk(label, color, max, pts)
                })
                .collect();
            let bound: Vec<(f64, f64)> = sizes
                .iter()
                .filter_map(|&s| Some((s as f64, v.bound(*d, rate, bench.name(), s)?)))
                .filter(|p| p.0 > 0.0)
                .collect();
            if let Some(s) = mk("link bound", 0x777777, true, bound) {
                series.push(s);
            }
            Panel {
                title: format!("d = {d} ({} ranks), {rate}", 1u32 << d),
                series,
            }
        })
        .collect();
    Some(Figure {
        title: format!(
            "{} — {} on the emulated network",
            bench.name(),
            bench.what()
        ),
        x: Axis::log2("message size (bytes)", size_tick),
        y: Axis::log10("µs"),
        columns: if panels.len() > 1 { 2 } else { 1 },
        panels,
        panel_size: (440, 300),
        legend: Legend::Top,
    })
}
