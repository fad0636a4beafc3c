//! `hypercube-sim plot`: com_time against the threshold (Tables 5.7–5.8) and against the
//! load, as SVG charts (drawn with `hypercube-plot`).

use super::*;

/// A chart of the simulator: linear axes, one panel, the legend on the right.
fn chart(title: String, x_label: &str, y_label: String, series: Vec<Series>) -> Figure {
    Figure {
        title,
        x: Axis::linear(x_label),
        y: Axis::linear(y_label),
        panels: vec![Panel {
            title: String::new(),
            series,
        }],
        columns: 1,
        panel_size: (530, 410),
        legend: Legend::Right,
    }
}

pub(super) fn plot(a: &PlotArgs) -> Result<()> {
    let setup = a.common.setup()?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    // com_time vs threshold (Tables 5.7 and 5.8).
    for t in THRESHOLD_TABLES {
        let res =
            run_row(&t.params, &setup).with_context(|| format!("simulating table {}", t.id))?;
        let pts: Vec<(f64, f64)> = res.sweep.iter().map(|(th, s)| (*th, s.mean)).collect();
        let flat = |y: f64| vec![(0.0, y), (1.0, y)];
        let fig = chart(
            format!("Table {}: com_time vs threshold (n = {})", t.id, t.params.n),
            "ALG II threshold",
            format!("com_time (cycles, mean of {} seeds)", setup.seeds),
            vec![
                Series {
                    label: "ALG II (ours)".into(),
                    points: pts,
                    color: COLORS[0],
                    dashed: false,
                },
                Series {
                    label: "ALG II (paper)".into(),
                    points: t.points.iter().map(|&(x, y)| (x, y as f64)).collect(),
                    color: COLORS[1],
                    dashed: true,
                },
                Series {
                    label: "ALG I (ours)".into(),
                    points: flat(res.alg1.mean),
                    color: COLORS[2],
                    dashed: true,
                },
                Series {
                    label: "OURS online".into(),
                    points: flat(res.ours.mean),
                    color: COLORS[3],
                    dashed: false,
                },
                Series {
                    label: "OURS-BEST".into(),
                    points: flat(res.ours_best.mean),
                    color: COLORS[4],
                    dashed: false,
                },
                Series {
                    label: "lower bound".into(),
                    points: flat(res.bound.mean),
                    color: COLORS[5],
                    dashed: true,
                },
            ],
        );
        let path = a
            .out
            .join(format!("threshold-{}.svg", t.id.replace('.', "_")));
        std::fs::write(&path, fig.to_svg())
            .with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    // com_time vs load: all-to-all, k = 1..5 messages per pair, per cube size.
    for n in [4u32, 5, 6] {
        let mut s: Vec<Vec<(f64, f64)>> = vec![Vec::new(); 8];
        for k in 1..=5u32 {
            let res = run_row(&Params::all_to_all(n, k), &setup)
                .with_context(|| format!("simulating all-to-all n={n} k={k}"))?;
            let x = k as f64;
            for (i, v) in [
                res.brute_force.mean,
                res.rbf.mean,
                res.alg1.mean,
                res.alg2.mean,
                res.ours_best.mean,
                res.bound.mean,
                res.exchange.mean,
                res.planned.mean,
            ]
            .into_iter()
            .enumerate()
            {
                s[i].push((x, v));
            }
        }
        let labels = [
            "BR_FC",
            "RBF",
            "ALG I",
            "ALG II (best θ)",
            "OURS-BEST",
            "lower bound",
            "EXCH",
            "PLANNED",
        ];
        let fig = chart(
            format!("{n}-cube all-to-all: com_time vs load"),
            "messages per pair (k)",
            "com_time (cycles)".into(),
            s.into_iter()
                .enumerate()
                .map(|(i, pts)| Series {
                    label: labels[i].into(),
                    points: pts,
                    color: COLORS[i],
                    dashed: i == 5,
                })
                .collect(),
        );
        let path = a.out.join(format!("load-{n}cube.svg"));
        std::fs::write(&path, fig.to_svg())
            .with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}
