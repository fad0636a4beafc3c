//! The report's figures: one SVG plot per benchmark, latency (or bandwidth) against the
//! message size, one panel per np.

use std::collections::BTreeMap;

use hypercube_plot::{Axis, Figure, Legend, Panel, Series};

use crate::compare::{imp, Record};
use crate::Bench;

use super::medians::{medians, Key, View};
use super::text::size_tick;

fn series_style(imp_name: &str) -> (&'static str, u32, bool) {
    match imp_name {
        imp::OURS => ("hypercube", 0xd62728, false),
        imp::OMPI_TCP => ("Open MPI TCP", 0x1f77b4, false),
        imp::OMPI_SHM => ("Open MPI shm", 0x2ca02c, false),
        imp::FLOOR_SPIN => ("floor: spinning ping-pong", 0x555555, true),
        imp::FLOOR_BLOCK => ("floor: blocking ping-pong", 0xaaaaaa, true),
        imp::FLOOR_STREAM => ("floor: stream", 0x555555, true),
        _ => ("other", 0x9467bd, true),
    }
}

/// One series per implementation in `imps` that has points: the medians whose key `keep`
/// selects, at the x that `x` reads off the key, in the implementation's style.
fn series_of(
    m: &BTreeMap<Key, f64>,
    imps: &[&str],
    keep: impl Fn(&Key) -> bool,
    x: impl Fn(&Key) -> f64,
) -> Vec<Series> {
    imps.iter()
        .filter_map(|&i| {
            let pts: Vec<(f64, f64)> = m
                .iter()
                .filter(|(k, _)| k.0 == i && keep(k))
                .map(|(k, &val)| (x(k), val))
                .collect();
            let (name, color, dashed) = series_style(i);
            (!pts.is_empty()).then(|| Series {
                label: name.into(),
                color,
                dashed,
                points: pts,
            })
        })
        .collect()
}

/// A figure of the report: log–log axes, panels in `columns`, the legend on top.
fn report_figure(
    title: String,
    x: Axis,
    y_label: &str,
    panels: Vec<Panel>,
    columns: usize,
) -> Figure {
    Figure {
        title,
        x,
        y: Axis::log10(y_label),
        panels,
        columns,
        panel_size: (440, 300),
        legend: Legend::Top,
    }
}

/// The figure of one benchmark: panels per np (barrier: one panel against np).
pub fn figure(recs: &[Record], bench: Bench) -> Option<Figure> {
    let m = medians(recs);
    let v = View { m: &m };
    if !v.has(bench.name()) {
        return None;
    }
    let imps = [
        imp::OURS,
        imp::OMPI_TCP,
        imp::OMPI_SHM,
        imp::FLOOR_SPIN,
        imp::FLOOR_BLOCK,
        imp::FLOOR_STREAM,
    ];
    let y_label = if bench.higher_is_better() {
        "MB/s"
    } else {
        "µs"
    };
    if bench == Bench::Barrier {
        // Against np (a barrier has no message size).
        let series = series_of(&m, &imps, |k| k.2 == bench.name(), |k| k.1 as f64);
        return Some(report_figure(
            "barrier: time against the number of ranks".into(),
            Axis::log2("ranks (np)", hypercube_plot::number),
            y_label,
            vec![Panel {
                title: "barrier".into(),
                series,
            }],
            1,
        ));
    }
    let panels = v
        .nps(bench.name())
        .into_iter()
        .map(|np| Panel {
            title: format!("np = {np}"),
            series: series_of(
                &m,
                &imps,
                |k| k.1 == np && k.2 == bench.name(),
                |k| k.3 as f64,
            ),
        })
        .collect::<Vec<_>>();
    let columns = if panels.len() > 1 { 2 } else { 1 };
    Some(report_figure(
        format!("{} — {}", bench.name(), bench.what()),
        Axis::log2("message size (bytes)", size_tick),
        y_label,
        panels,
        columns,
    ))
}
