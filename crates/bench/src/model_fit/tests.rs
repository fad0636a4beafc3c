//! The tests of the model fit: least squares, the link model, the formulas, the report.

use super::cases::{default_burst, parse_rate, slowest_rank, Raw};
use super::clock::{shaped_clock, virtual_clock};
use super::fit::{fit_link, least_squares, size_class, LinkFit, PingPong, SizeClass};
use super::grama::{busiest_link_of, grama_time, tbf_time};
use crate::Bench;
use hypercube::collectives::select::CostModel;
use hypercube::collectives::Algorithm;
use hypercube::transport::Forwarding;

use hypercube::collectives::select::{model_time, Operation};

const CT: Forwarding = Forwarding::CutThrough;
const SF: Forwarding = Forwarding::StoreAndForward;

#[test]
fn least_squares_recovers_an_exact_line_and_averages_noise() {
    let rows: Vec<Vec<f64>> = (0..5).map(|x| vec![1.0, x as f64 * 1e6]).collect();
    let y: Vec<f64> = (0..5).map(|x| 3.0 + 2e-9 * x as f64 * 1e6).collect();
    let b = least_squares(&rows, &y).unwrap();
    assert!(
        (b[0] - 3.0).abs() < 1e-9 && (b[1] - 2e-9).abs() < 1e-18,
        "{b:?}"
    );
    // y = ±1 around 0: the fit of a constant is the mean.
    let b = least_squares(&[vec![1.0], vec![1.0]], &[1.0, -1.0]).unwrap();
    assert!(b[0].abs() < 1e-12);
    // Undetermined: a zero column, dependent columns, too few rows.
    assert!(least_squares(&[vec![1.0, 0.0], vec![1.0, 0.0]], &[1.0, 2.0]).is_none());
    assert!(least_squares(&[vec![1.0, 2.0], vec![2.0, 4.0]], &[1.0, 2.0]).is_none());
    assert!(least_squares(&[vec![1.0, 2.0]], &[1.0]).is_none());
}

fn truth(f: Forwarding) -> LinkFit {
    LinkFit {
        forwarding: f,
        t_s: 10e-6,
        t_h: 20e-6,
        t_w: 84e-9,
        burst: 94_000.0,
        with_hop: true,
        rms_rel: 0.0,
        max_rel: 0.0,
        points: 0,
    }
}

fn samples(t: &LinkFit, dim: u32) -> Vec<PingPong> {
    let mut v = Vec::new();
    for h in 1..=dim {
        let mut m = 8u64;
        while m <= 1 << 20 {
            v.push(PingPong {
                bytes: m,
                hops: h,
                secs: t.predict(m, h),
            });
            m *= 2;
        }
    }
    v
}

#[test]
fn fit_link_recovers_the_parameters_in_both_regimes() {
    for f in [CT, SF] {
        let t = truth(f);
        let fit = fit_link(&samples(&t, 3), f, 96 * 1024, true).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs();
        assert!(close(fit.t_s, t.t_s), "{f}: t_s {}", fit.t_s);
        assert!(close(fit.t_h, t.t_h), "{f}: t_h {}", fit.t_h);
        assert!(close(fit.t_w, t.t_w), "{f}: t_w {}", fit.t_w);
        assert!(close(fit.burst, t.burst), "{f}: b {}", fit.burst);
        assert!(fit.rms_rel < 1e-6 && fit.points == 3 * 8, "{fit:?}");
        // Without t_h the hop time has to go somewhere: a worse fit.
        let no = fit_link(&samples(&t, 3), f, 96 * 1024, false).unwrap();
        assert!(no.rms_rel > 0.01 && no.t_h == 0.0, "{no:?}");
    }
    // One hop count cannot separate t_h from t_s.
    assert!(fit_link(&samples(&truth(CT), 1), CT, 96 * 1024, true).is_err());
}

#[test]
fn the_three_regimes_of_a_ping_pong() {
    let t = truth(CT);
    // 64 KiB: duty cycle, t_w m / 2 whatever the hops.
    let m = 65536;
    assert!((t.predict(m, 1) - 84e-9 * 65536.0 / 2.0).abs() < 1e-12);
    assert_eq!(t.predict(m, 1), t.predict(m, 3));
    // 1 MiB: drained, once under cut-through, once per link under store-and-forward.
    let drained = 84e-9 * (1048576.0 - 94_000.0);
    assert!((t.predict(1 << 20, 3) - (10e-6 + 40e-6 + drained)).abs() < 1e-12);
    let s = truth(SF);
    assert!((s.predict(1 << 20, 3) - (10e-6 + 40e-6 + 3.0 * drained)).abs() < 1e-12);
    // 8 B: start-up and hops.
    assert!((t.predict(8, 2) - 30e-6).abs() < 1e-15);
    assert_eq!(size_class(128, 96 * 1024), SizeClass::Small);
    assert_eq!(size_class(256, 96 * 1024), SizeClass::Mid);
    assert_eq!(size_class(65536, 96 * 1024), SizeClass::Mid);
    assert_eq!(size_class(262144, 96 * 1024), SizeClass::Large);
}

/// The step sums are the book's closed forms, and equal the crate's own `model_time`.
#[test]
fn grama_time_is_the_books_expression() {
    let (ts, tw, th) = (100e-6, 80e-9, 20e-6);
    for f in [CT, SF] {
        let c = CostModel::new(ts, tw).with_hop(th).with_forwarding(f);
        for dim in 1..=5u32 {
            let p = f64::from(1u32 << dim);
            let lg = f64::from(dim);
            let m = 4096.0;
            let close = |a: f64, b: f64, what: &str| {
                assert!(
                    (a - b).abs() <= 1e-9 * b,
                    "{what} d = {dim} {f}: {a} vs {b}"
                )
            };
            let g = |b, a| grama_time(b, a, dim, m, &c).unwrap();
            use Algorithm::*;
            close(g(Bench::Bcast, Hypercube), (ts + tw * m) * lg, "4.1");
            close(g(Bench::Allreduce, Hypercube), (ts + tw * m) * lg, "4.5");
            close(
                g(Bench::Allgather, Hypercube),
                ts * lg + tw * m * (p - 1.0),
                "4.4",
            );
            close(
                g(Bench::Scatter, Hypercube),
                ts * lg + tw * m * (p - 1.0),
                "4.6",
            );
            close(
                g(Bench::ReduceScatter, Hypercube),
                ts * lg + tw * m * (p - 1.0),
                "4.8",
            );
            close(
                g(Bench::Alltoall, StoreForward),
                (ts + tw * m * p / 2.0) * lg,
                "4.9",
            );
            let h = p / 2.0 * lg;
            let pairwise = match f {
                CT => (ts + tw * m) * (p - 1.0) + th * (h - p + 1.0),
                SF => (p - 1.0) * ts + tw * m * h + th * (h - p + 1.0),
            };
            close(g(Bench::Alltoall, Pairwise), pairwise, "4.10");
            let shift = match f {
                CT => ts + tw * m + (lg - 1.0) * th,
                SF => ts + tw * m * lg + (lg - 1.0) * th,
            };
            close(g(Bench::Shift, Ecube), shift, "4.12");
            for (b, op, a, mm) in [
                (Bench::Bcast, Operation::Bcast, Hypercube, m),
                (Bench::Reduce, Operation::Reduce, Hypercube, m),
                (Bench::Allgather, Operation::Allgather, Hypercube, m),
                (Bench::Gather, Operation::Gather, Hypercube, m),
                (
                    Bench::ReduceScatter,
                    Operation::ReduceScatter,
                    Hypercube,
                    m * p,
                ),
                (Bench::Alltoall, Operation::Alltoall, StoreForward, m),
                (Bench::Alltoall, Operation::Alltoall, Pairwise, m),
                (Bench::Shift, Operation::Shift, Ecube, m),
            ] {
                let theirs = model_time(op, a, dim, mm as usize, c).unwrap();
                close(g(b, a), theirs, "model_time");
            }
        }
    }
    assert!(grama_time(
        Bench::Barrier,
        Algorithm::Hypercube,
        3,
        8.0,
        &CostModel::new(1.0, 1.0)
    )
    .is_none());
}

#[test]
fn tbf_time_frees_the_burst_and_keeps_the_rate() {
    let fit = truth(CT);
    // 1 MiB broadcast on a 3-cube: 3 messages, each drains a full bucket.
    let t = tbf_time(Bench::Bcast, Algorithm::Hypercube, 3, 1048576.0, &fit).unwrap();
    assert!((t - 3.0 * (10e-6 + 84e-9 * (1048576.0 - 94_000.0))).abs() < 1e-12);
    // 64 KiB all-to-all broadcast: the bytes beyond the bucket of its 128 and 256 KiB
    // messages take 17 ms; the dimension-2 link's 256 KiB per call take 22 ms at the rate.
    let t = tbf_time(Bench::Allgather, Algorithm::Hypercube, 3, 65536.0, &fit).unwrap();
    assert!((t - 84e-9 * 262144.0).abs() < 1e-12, "{t}");
    assert_eq!(
        busiest_link_of(Bench::Alltoall, Algorithm::Pairwise, 3, 1.0),
        busiest_link_of(Bench::Alltoall, Algorithm::StoreForward, 3, 1.0)
    );
}

#[test]
fn the_virtual_clock_runs_the_formula() {
    let c = CostModel::new(100e-6, 80e-9);
    let (_, slowest) =
        virtual_clock(Bench::Allgather, Algorithm::Hypercube, 2, 1000, c, false).unwrap();
    let g = grama_time(Bench::Allgather, Algorithm::Hypercube, 2, 1000.0, &c).unwrap();
    assert!((slowest - g).abs() < 1e-12, "{slowest} vs {g}");
}

/// The shaped clock without a bucket is the all-port clock's call time; with one that
/// holds the broadcast's messages it is the start-ups alone; with a bucket between, the
/// bytes the calls right behind one another leave it short of cost `t_w` each.
#[test]
fn the_shaped_clock_sees_the_bucket() {
    let c = CostModel::new(100e-6, 80e-9);
    let (_, none) = shaped_clock(Bench::Bcast, Algorithm::Hypercube, 2, 65536, c, 0).unwrap();
    let (_, one) = virtual_clock(Bench::Bcast, Algorithm::Hypercube, 2, 65536, c, true).unwrap();
    assert!((none - one).abs() < 1e-9, "{none} vs {one}");
    let (_, big) = shaped_clock(Bench::Bcast, Algorithm::Hypercube, 2, 65536, c, 1 << 30).unwrap();
    assert!((big - 2.0 * 100e-6).abs() < 1e-9, "{big}");
    let (_, mid) = shaped_clock(Bench::Bcast, Algorithm::Hypercube, 2, 65536, c, 98304).unwrap();
    assert!(big < mid && mid < one, "{big} < {mid} < {one}");
}

#[test]
fn parsing() {
    assert_eq!(parse_rate("100mbit").unwrap(), 12.5e6);
    assert_eq!(parse_rate("1gbit").unwrap(), 125e6);
    assert_eq!(parse_rate("2.5MBps").unwrap(), 2.5e6);
    assert!(parse_rate("fast").is_err());
    assert_eq!(default_burst(12.5e6), 96 * 1024);
    assert_eq!(default_burst(1.25e9), 1_250_000);
    let text = "# x\n1048576  120964.62\n# per rank: 1084.73 80936.02 240489.70 161352.71\n";
    assert_eq!(slowest_rank(text), Some(240489.70));
    assert_eq!(slowest_rank("1 2\n"), None);
    let r = Raw {
        dim: 3,
        rate: "100mbit".into(),
        forwarding: SF,
        bench: Bench::Alltoall,
        alg: "pairwise".into(),
        hops: 0,
        size: 1024,
        avg_us: 1.5,
        max_us: 2.25,
        eager: true,
    };
    assert_eq!(Raw::from_csv(&r.to_csv()).unwrap(), r);
}
