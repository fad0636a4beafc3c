//! Tests of the figures (`lib.rs`): the SVG documents' texts, layouts and axes.

use super::*;

/// The texts of an SVG document's `<text>` elements.
fn texts(svg: &str) -> Vec<&str> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim()))
        .collect()
}

fn figure(panels: Vec<Panel>, legend: Legend) -> Figure {
    Figure {
        title: "allreduce <test> & more".into(),
        x: Axis::log2("size", number),
        y: Axis::log10("µs"),
        panels,
        columns: 2,
        panel_size: (440, 300),
        legend,
    }
}

#[test]
fn renders_a_well_formed_document() {
    let ours = Series {
        label: "ours".into(),
        color: 0xd62728,
        dashed: false,
        points: vec![
            (8.0, 50.0),
            (65536.0, 200.0),
            (1048576.0, 1000.0),
            (0.0, 1.0),
        ],
    };
    let floor = Series {
        label: "floor".into(),
        dashed: true,
        ..ours.clone()
    };
    let f = figure(
        vec![
            Panel {
                title: "np = 4".into(),
                series: vec![ours, floor],
            },
            Panel {
                title: "np = 8".into(),
                series: vec![],
            },
        ],
        Legend::Top,
    );
    let s = f.to_svg();
    assert!(
        s.starts_with("<svg") && s.trim_end().ends_with("</svg>"),
        "{s}"
    );
    assert!(s.contains("<polyline") && s.contains("<circle"));
    let t = texts(&s);
    for want in [
        "allreduce &lt;test&gt; &amp; more",
        "no data",
        "np = 4",
        "np = 8",
        "ours",
        "floor",
        "size",
        "µs",
    ] {
        assert!(t.contains(&want), "no text {want:?} in {t:?}");
    }
    // Decade ticks (10 to 1000 spans 2 decades: 2× and 5× too), power-of-two ticks.
    for want in ["10", "20", "50", "100", "1000", "8", "64"] {
        assert!(t.contains(&want), "no tick {want:?} in {t:?}");
    }
    // The point at x = 0 is left out on the log axis: 3 markers per series.
    assert_eq!(s.matches("<circle").count(), 6);
}

#[test]
fn linear_axes_and_a_right_legend() {
    let f = Figure {
        title: "t".into(),
        x: Axis::linear("x"),
        y: Axis::linear("y"),
        panels: vec![Panel {
            title: String::new(),
            series: vec![Series {
                label: "a".into(),
                color: 0x1f77b4,
                dashed: false,
                points: vec![(0.0, 142.0), (0.5, 150.0), (1.0, 154.0)],
            }],
        }],
        columns: 1,
        panel_size: (530, 410),
        legend: Legend::Right,
    };
    let s = f.to_svg();
    let t = texts(&s);
    for want in ["0", "0.2", "1", "142", "146", "154", "a", "x", "y", "t"] {
        assert!(t.contains(&want), "no text {want:?} in {t:?}");
    }
}

#[test]
fn tick_texts() {
    assert_eq!(number(3.0), "3");
    assert_eq!(number(0.25), "0.25");
    assert_eq!(number(0.5), "0.5");
    assert_eq!(decade(0.1), "0.10");
    assert_eq!(decade(5000.0), "5000");
    assert_eq!(decade(10_000.0), "10k");
    assert_eq!(decade(1e6), "1M");
    assert_eq!(round_ticks(0.0, 1.0, 8).len(), 6);
}
