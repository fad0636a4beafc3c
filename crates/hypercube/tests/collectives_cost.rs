//! The cost model as a test oracle: under the in-process transport's virtual clock
//! (single port; a message of m bytes over l links costs `t_s + t_w m` plus, per link
//! beyond the first, `t_h` under cut-through or `t_h + t_w m` under store-and-forward —
//! Grama eq. 2.3 / 2.2 with the first link's `t_h` inside `t_s`), the time at which the
//! last node finishes each algorithm must equal Grama's expression for it — eq. 4.1–4.14 —
//! for several p, m, t_s, t_w, t_h, in both routing regimes. The algorithms that talk to
//! neighbours only have one expression for both; the ones that send over e-cube routes
//! (e-cube scatter/gather/shift, pairwise all-to-all, chain scan) are checked against
//! each regime's. Where the book states a bound, the test says so.
//! The automatic choice that this model drives is tested in `selection.rs`.

#[path = "support/clock.rs"]
mod clock;

use bytes::Bytes;
use clock::{close, each, extra_link, lg, time, MODELS};
use hypercube::collectives::select::CostModel;
use hypercube::collectives::{Algorithm, Op, ShiftOrder};
use hypercube::transport::Forwarding;

#[test]
fn eq_4_1_broadcast_and_reduction() {
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        for root in [0u32, (1 << d) - 1] {
            let t = time(d, c, |n| {
                let data = Bytes::from(vec![1u8; m]);
                n.cube()
                    .with(Algorithm::Hypercube)
                    .bcast(root, data, m)
                    .unwrap();
            });
            close(t, (ts + tw * mf) * lg(p), "eq 4.1 bcast");
            let t = time(d, c, |n| {
                n.cube()
                    .with(Algorithm::Hypercube)
                    .reduce(root, &vec![1u8; m], Op::Sum)
                    .unwrap();
            });
            close(t, (ts + tw * mf) * lg(p), "eq 4.1 reduce");
        }
    });
}

#[test]
fn eq_4_2_4_3_4_4_all_to_all_broadcast() {
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        let run = |alg| {
            time(d, c, |n| {
                drop(
                    n.cube()
                        .with(alg)
                        .allgather(Bytes::from(vec![0u8; m]))
                        .unwrap(),
                )
            })
        };
        close(
            run(Algorithm::Ring),
            (ts + tw * mf) * (p - 1.0),
            "eq 4.2 ring",
        );
        // eq. 4.3 for a √p × √p mesh: 2 t_s (√p − 1) + t_w m (p − 1); for odd d the mesh is
        // r × c and the t_s term is t_s (r + c − 2).
        let (r, cols) = ((1u32 << (d / 2)) as f64, (1u32 << d.div_ceil(2)) as f64);
        let mesh = ts * (r + cols - 2.0) + tw * mf * (p - 1.0);
        if d % 2 == 0 {
            close(
                mesh,
                2.0 * ts * (p.sqrt() - 1.0) + tw * mf * (p - 1.0),
                "eq 4.3 itself",
            );
        }
        close(run(Algorithm::Mesh), mesh, "eq 4.3 mesh");
        close(
            run(Algorithm::Hypercube),
            ts * lg(p) + tw * mf * (p - 1.0),
            "eq 4.4",
        );
    });
}

#[test]
fn all_to_all_reduction_is_the_dual_of_eq_4_4_and_4_2() {
    // m is the per-node vector; each of the p blocks has m/p bytes.
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        let run = |alg| {
            time(d, c, |n| {
                drop(
                    n.cube()
                        .with(alg)
                        .reduce_scatter(&vec![1u8; m], Op::Sum)
                        .unwrap(),
                )
            })
        };
        close(
            run(Algorithm::Hypercube),
            ts * lg(p) + tw * (mf / p) * (p - 1.0),
            "Alg 4.8",
        );
        close(
            run(Algorithm::Ring),
            (ts + tw * mf / p) * (p - 1.0),
            "Alg 4.5",
        );
    });
}

#[test]
fn eq_4_5_all_reduce_prefix_sums_barrier() {
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        let t = time(d, c, |n| {
            drop(
                n.cube()
                    .with(Algorithm::Hypercube)
                    .allreduce(&vec![1u8; m], Op::Sum)
                    .unwrap(),
            )
        });
        close(t, (ts + tw * mf) * lg(p), "eq 4.5 allreduce");
        let hc = Algorithm::Hypercube;
        let t = time(d, c, |n| {
            drop(n.cube().with(hc).scan(&vec![1u8; m], Op::Sum).unwrap())
        });
        close(t, (ts + tw * mf) * lg(p), "Alg 4.9 scan");
        let t = time(d, c, |n| {
            drop(n.cube().with(hc).exscan(&vec![1u8; m], Op::Sum).unwrap())
        });
        close(t, (ts + tw * mf) * lg(p), "Alg 4.9 exscan");
        let t = time(d, c, |n| n.cube().with(hc).barrier().unwrap());
        close(t, ts * lg(p), "barrier");
        let t = time(d, c, |n| n.cube().with(Algorithm::Tree).barrier().unwrap());
        close(t, 2.0 * ts * lg(p), "barrier up and down the tree");
    });
}

/// The pipelined chain scan: S segments of 64 KiB along ranks 0 → 1 → … → p − 1, where
/// rank j's link to j + 1 is an e-cube route of `l_j = popcount(j ^ (j + 1))` links and
/// costs `c_j = t_s + t_w m/S + (l_j − 1)·extra` per segment. A pipeline of p − 1 stages:
/// `Σ_j c_j + (S − 1) max_j c_j`, which is `(p − 2 + S)(t_s + t_w m/S)` when the distance
/// costs nothing (cut-through, t_h = 0).
#[test]
fn chain_scan_pipeline() {
    for d in 1..=4u32 {
        let p = (1u32 << d) as f64;
        for model in MODELS.into_iter().chain([CostModel::new(3.0, 0.25)]) {
            let (ts, tw) = (model.t_s, model.t_w);
            for segs in [1usize, 3] {
                let m = segs * 65536;
                let seg = 65536.0;
                let stage = |j: u32| {
                    let l = (j ^ (j + 1)).count_ones() as f64;
                    ts + tw * seg + (l - 1.0) * extra_link(model, seg)
                };
                let stages: Vec<f64> = (0..(1u32 << d) - 1).map(stage).collect();
                let longest = stages.iter().copied().fold(0.0, f64::max);
                let want = stages.iter().sum::<f64>() + (segs as f64 - 1.0) * longest;
                if model.t_h == 0.0 && model.forwarding == Forwarding::CutThrough {
                    close(
                        want,
                        (p - 2.0 + segs as f64) * (ts + tw * seg),
                        "chain, no hops",
                    );
                }
                // The longest link is p/2 − 1 → p/2, log p links.
                close(
                    longest,
                    ts + tw * seg + (lg(p) - 1.0) * extra_link(model, seg),
                    "chain's longest link",
                );
                let t = time(d, model, |n| {
                    let c = n.cube().with(Algorithm::Chain);
                    drop(c.scan(&vec![1u8; m], Op::Sum).unwrap())
                });
                close(t, want, "chain scan");
                let t = time(d, model, |n| {
                    let c = n.cube().with(Algorithm::Chain);
                    drop(c.exscan(&vec![1u8; m], Op::Sum).unwrap())
                });
                close(t, want, "chain exscan");
            }
        }
    }
}

#[test]
fn eq_4_6_scatter_and_gather() {
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        for root in [0u32, 1] {
            let t = time(d, c, |n| {
                let blocks: Vec<Bytes> = (0..1 << d).map(|_| Bytes::from(vec![0u8; m])).collect();
                let mine = if n.mynode() == root { &blocks[..] } else { &[] };
                let c = n.cube().with(Algorithm::Hypercube);
                c.scatter(root, mine, m).unwrap();
            });
            close(t, ts * lg(p) + tw * mf * (p - 1.0), "eq 4.6 scatter");
            let t = time(d, c, |n| {
                let c = n.cube().with(Algorithm::Hypercube);
                drop(c.gather(root, Bytes::from(vec![0u8; m])).unwrap())
            });
            close(t, ts * lg(p) + tw * mf * (p - 1.0), "eq 4.6 gather");
            // E-cube: the root starts p − 1 sends, one port, to nodes at hamming distance
            // 1..log p, (p/2) log p links in all. Cut-through (eq. 4.10's form):
            // (p − 1)(t_s + t_w m) + t_h ((p/2) log p − (p − 1)); store-and-forward:
            // (p − 1) t_s + t_w m (p/2) log p + t_h ((p/2) log p − (p − 1)). The virtual
            // clock charges senders only, so the gather's p − 1 concurrent senders cost one
            // message over the longest route (log p links) there (Grama's single-port root
            // would take p − 1).
            let t = time(d, c, |n| {
                let blocks: Vec<Bytes> = (0..1 << d).map(|_| Bytes::from(vec![0u8; m])).collect();
                let mine = if n.mynode() == root { &blocks[..] } else { &[] };
                let c = n.cube().with(Algorithm::Ecube);
                c.scatter(root, mine, m).unwrap();
            });
            let hops = p / 2.0 * lg(p) - (p - 1.0);
            let want = match c.forwarding {
                Forwarding::CutThrough => (ts + tw * mf) * (p - 1.0) + c.t_h * hops,
                Forwarding::StoreAndForward => {
                    (p - 1.0) * ts + tw * mf * p / 2.0 * lg(p) + c.t_h * hops
                }
            };
            close(t, want, "e-cube scatter");
            let t = time(d, c, |n| {
                let c = n.cube().with(Algorithm::Ecube);
                drop(c.gather(root, Bytes::from(vec![0u8; m])).unwrap())
            });
            close(
                t,
                ts + tw * mf + (lg(p) - 1.0) * extra_link(c, mf),
                "e-cube gather",
            );
        }
    });
}

#[test]
fn eq_4_7_to_4_10_all_to_all_personalized() {
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        let run = |alg| {
            time(d, c, |n| {
                let blocks: Vec<Bytes> = (0..1 << d).map(|_| Bytes::from(vec![0u8; m])).collect();
                n.cube().with(alg).alltoall(&blocks).unwrap();
            })
        };
        close(
            run(Algorithm::Ring),
            (ts + tw * mf * p / 2.0) * (p - 1.0),
            "eq 4.7 ring",
        );
        // eq. 4.8 for a square mesh: (2 t_s + t_w m p)(√p − 1); r × c in general.
        let (r, cols) = ((1u32 << (d / 2)) as f64, (1u32 << d.div_ceil(2)) as f64);
        let mesh = (ts + tw * mf * p / 2.0) * (r + cols - 2.0);
        if d % 2 == 0 {
            close(
                mesh,
                (2.0 * ts + tw * mf * p) * (p.sqrt() - 1.0),
                "eq 4.8 itself",
            );
        }
        close(run(Algorithm::Mesh), mesh, "eq 4.8 mesh");
        close(
            run(Algorithm::StoreForward),
            (ts + tw * mf * p / 2.0) * lg(p),
            "eq 4.9",
        );
        // Step i exchanges with me ^ i, popcount(i) links away: Σ_{i=1}^{p−1} of the
        // message costs. Cut-through: eq. 4.10 plus the hops' headers; store-and-forward:
        // Σ (t_s + t_w m popcount(i)) = (p − 1) t_s + t_w m (p/2) log p, whose t_w term is
        // eq. 4.9's and whose t_s term is larger: it never beats eq. 4.9 there.
        let hops = p / 2.0 * lg(p) - (p - 1.0);
        let pairwise = match c.forwarding {
            Forwarding::CutThrough => (ts + tw * mf) * (p - 1.0) + c.t_h * hops,
            Forwarding::StoreAndForward => {
                (p - 1.0) * ts + tw * mf * p / 2.0 * lg(p) + c.t_h * hops
            }
        };
        if c.t_h == 0.0 && c.forwarding == Forwarding::CutThrough {
            close(pairwise, (ts + tw * mf) * (p - 1.0), "eq 4.10 itself");
        }
        close(run(Algorithm::Pairwise), pairwise, "eq 4.10 / its SF form");
    });
}

#[test]
fn eq_4_11_and_4_12_circular_shift() {
    each(|d, p, m, c| {
        let unit = c.t_s + c.t_w * m as f64;
        for q in 1..(1i64 << d) {
            // Eq. 4.12 with the route: the longest path of a q-shift has
            // log p − γ(q) links (γ(q): the largest j with 2^j | q; Problem 4.23), and the
            // shift takes that message's time: t_s + t_w m + (log p − γ(q) − 1)·extra.
            let longest = lg(p) - q.trailing_zeros() as f64;
            let ecube = unit + (longest - 1.0) * extra_link(c, m as f64);
            let t = time(d, c, |n| {
                drop(
                    n.cube()
                        .with(Algorithm::Ecube)
                        .shift(Bytes::from(vec![0u8; m]), q, ShiftOrder::Rank)
                        .unwrap(),
                )
            });
            close(t, ecube, "eq 4.12 (its route)");
            let t = time(d, c, |n| {
                drop(
                    n.cube()
                        .with(Algorithm::GrayRing)
                        .shift(Bytes::from(vec![0u8; m]), q, ShiftOrder::Ring)
                        .unwrap(),
                )
            });
            // Exactly one step per unit shift of a 1-shift and two per higher power of two,
            // in the cheaper direction; eq. 4.11 is the upper bound (2 log p − 1) and, using
            // both directions, log p.
            let steps = |x: u64| (x & 1) + 2 * (x >> 1).count_ones() as u64;
            let qq = q as u64;
            let best = steps(qq).min(steps((1 << d) - qq)) as f64;
            close(t, unit * best, "Gray-ring shift steps");
            assert!(
                t <= unit * (2.0 * lg(p) - 1.0).max(1.0) + 1e-9,
                "eq 4.11 bound"
            );
            assert!(t <= unit * lg(p) + 1e-9, "eq 4.11 with both directions");
        }
    });
}

#[test]
fn eq_4_13_and_4_14_long_messages() {
    each(|d, p, m, c| {
        let (ts, tw, mf) = (c.t_s, c.t_w, m as f64);
        let exact = 2.0 * (ts * lg(p) + tw * (p - 1.0) * mf / p);
        for root in [0u32, (1 << d) - 1] {
            let t = time(d, c, |n| {
                n.cube()
                    .with(Algorithm::ScatterAllgather)
                    .bcast(root, Bytes::from(vec![0u8; m]), m)
                    .unwrap();
            });
            close(t, exact, "eq 4.13 bcast");
            let t = time(d, c, |n| {
                drop(
                    n.cube()
                        .with(Algorithm::ReduceScatterGather)
                        .reduce(root, &vec![1u8; m], Op::Sum)
                        .unwrap(),
                )
            });
            close(t, exact, "Problem 4.17 reduce");
        }
        let t = time(d, c, |n| {
            drop(
                n.cube()
                    .with(Algorithm::ReduceScatterAllgather)
                    .allreduce(&vec![1u8; m], Op::Sum)
                    .unwrap(),
            )
        });
        close(t, exact, "eq 4.14 allreduce");
        // The book's ≈ 2 (t_s log p + t_w m) is an upper bound of the exact expression.
        assert!(t <= 2.0 * (ts * lg(p) + tw * mf) + 1e-9);
        let t = time(d, c, |n| {
            drop(
                n.cube()
                    .with(Algorithm::Ring)
                    .allreduce(&vec![1u8; m], Op::Sum)
                    .unwrap(),
            )
        });
        close(t, 2.0 * (p - 1.0) * (ts + tw * mf / p), "ring allreduce");
    });
}

#[test]
fn subcubes_cost_what_a_cube_of_their_dimension_costs() {
    let c = MODELS[0];
    let m = 64;
    let t = time(4, c, |n| {
        n.subcube(2)
            .with(Algorithm::Hypercube)
            .allgather(Bytes::from(vec![0u8; m]))
            .unwrap();
    });
    close(
        t,
        c.t_s * 2.0 + c.t_w * m as f64 * 3.0,
        "eq 4.4 on 2-subcubes of a 4-cube",
    );
}
