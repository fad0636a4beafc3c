//! Running algorithms over many seeded workloads and summarising the results.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::algorithms::planned::{all_port_cycles, busiest_port, plan_of, routes_of};
use crate::algorithms::{BruteForce, Equibalancing, Exchange, Lookahead, Ours, Planned, Rbf};
use crate::bound::LowerBound;
use crate::model::{simulate, ModelError, Router, Semantics, SimOptions};
use crate::workload::{Generator, Params, Workload};

/// An algorithm with its parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Algo {
    /// Brute force (§3.4).
    BruteForce,
    /// Johnsson–Ho RBF as simulated in the appendix (§3.3).
    Rbf,
    /// ALG I, equibalancing (§4.2).
    Equibalancing,
    /// ALG II, one-step lookahead (§4.3) with its threshold.
    Lookahead(f64),
    /// Our online router (see [`crate::algorithms::ours`]).
    Ours,
    /// Our offline schedule search ([`crate::algorithms::ours::plan_best`]):
    /// the best of [`OURS_RESTARTS`] runs of [`Algo::Ours`] and of ALG II at
    /// the thresholds 0, 0.1, …, 1 (with exactly the random streams that
    /// [`run`] gives those algorithms).
    OursBest,
    /// The dimension-ordered exchange ([`crate::algorithms::exchange`]).
    Exchange,
    /// The runtime planner's routes ([`crate::algorithms::planned`]).
    Planned,
}

/// Restarts (tie-breaking streams) of our online router inside [`Algo::OursBest`].
pub const OURS_RESTARTS: u64 = 8;

impl Algo {
    /// A fresh router for this algorithm.
    pub fn router(&self) -> Box<dyn Router> {
        match *self {
            Algo::BruteForce => Box::new(BruteForce),
            Algo::Rbf => Box::new(Rbf::default()),
            Algo::Equibalancing => Box::new(Equibalancing),
            Algo::Lookahead(t) => Box::new(Lookahead::new(t)),
            Algo::Ours | Algo::OursBest => Box::new(Ours::default()),
            Algo::Exchange => Box::new(Exchange::default()),
            Algo::Planned => Box::new(Planned::default()),
        }
    }
    /// A small integer distinguishing the algorithms' random streams.
    fn stream(&self) -> u64 {
        match self {
            Algo::BruteForce => 1,
            Algo::Rbf => 2,
            Algo::Equibalancing => 3,
            Algo::Lookahead(_) => 4,
            Algo::Ours => 5,
            Algo::OursBest => 6,
            Algo::Exchange => 7,
            Algo::Planned => 8,
        }
    }
}

/// The workload of `seed` for a table row (the same for every algorithm:
/// "simulation results for the four algorithms are shown for the same data sets").
pub fn workload(p: &Params, generator: Generator, seed: u64) -> Workload {
    Workload::generate(p, generator, &mut ChaCha8Rng::seed_from_u64(seed))
}

/// Communication time of `algo` on `w`, with the router's randomness derived from `seed`.
pub fn run(algo: Algo, w: &Workload, semantics: Semantics, seed: u64) -> Result<u64, ModelError> {
    if algo == Algo::OursBest {
        let mut algos: Vec<Algo> = (0..=10).map(|i| Algo::Lookahead(i as f64 / 10.0)).collect();
        let greedy = algos.len();
        algos.extend((0..OURS_RESTARTS).map(|_| Algo::Ours));
        let mut portfolio: Vec<Box<dyn Router>> = algos.iter().map(|a| a.router()).collect();
        let seed_of = |i: usize| {
            let base = rng_seed(seed, algos[i]);
            if i <= greedy {
                base
            } else {
                base ^ ((i - greedy) as u64).wrapping_mul(0xD1B5_4A32_D192_ED03)
            }
        };
        return Ok(crate::algorithms::ours::plan_best(w, &mut portfolio, semantics, seed_of)?.0);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(rng_seed(seed, algo));
    let opts = SimOptions {
        semantics,
        check: false,
    };
    Ok(simulate(w, algo.router().as_mut(), opts, &mut rng)?.cycles)
}

fn rng_seed(seed: u64, algo: Algo) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ algo.stream()
}

/// Mean, standard deviation, minimum and maximum of a sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// Summarises `xs` (all zero when empty).
    pub fn of(xs: &[f64]) -> Self {
        if xs.is_empty() {
            return Stats::default();
        }
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = if xs.len() > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Stats {
            mean,
            sd: var.sqrt(),
            min,
            max,
        }
    }
}

/// Settings shared by all rows of an experiment.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Seeds `first_seed .. first_seed + seeds`.
    pub seeds: u64,
    /// First seed.
    pub first_seed: u64,
    /// Cycle semantics.
    pub semantics: Semantics,
    /// Workload generator.
    pub generator: Generator,
    /// Thresholds tried for ALG II.
    pub thresholds: Vec<f64>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            seeds: 20,
            first_seed: 1,
            semantics: Semantics::Synchronous,
            generator: Generator::Appendix,
            thresholds: (0..=10).map(|i| i as f64 / 10.0).collect(),
        }
    }
}

/// Results of one table row over all seeds.
#[derive(Clone, Debug)]
pub struct RowResult {
    /// Lower bound ([`LowerBound::value`], or [`LowerBound::appendix`] under the appendix semantics).
    pub bound: Stats,
    /// Brute force.
    pub brute_force: Stats,
    /// RBF.
    pub rbf: Stats,
    /// ALG I.
    pub alg1: Stats,
    /// ALG II at its best threshold (smallest mean).
    pub alg2: Stats,
    /// That best threshold.
    pub best_threshold: f64,
    /// ALG II mean for every threshold of [`Setup::thresholds`].
    pub sweep: Vec<(f64, Stats)>,
    /// Our online router.
    pub ours: Stats,
    /// Our offline schedule search.
    pub ours_best: Stats,
    /// The dimension-ordered exchange.
    pub exchange: Stats,
    /// The planned router (runtime planner's routes).
    pub planned: Stats,
    /// The plan's predicted busiest directed link, in packets
    /// ([`hypercube_topology::Plan::busiest`]).
    pub plan_link: Stats,
    /// The plan's busiest port: the most packets one node sends
    /// ([`crate::algorithms::planned::busiest_port`]).
    pub plan_port: Stats,
    /// The planned routes simulated with every *link* sending one packet per
    /// cycle ([`crate::algorithms::planned::all_port_cycles`]): the measured
    /// time to set beside [`RowResult::plan_link`].
    pub planned_all_port: Stats,
    /// Packets per workload (mean).
    pub packets: f64,
}

/// Runs every algorithm on the seeded workloads of one row.
pub fn run_row(p: &Params, setup: &Setup) -> Result<RowResult, ModelError> {
    let seeds: Vec<u64> = (setup.first_seed..setup.first_seed + setup.seeds).collect();
    let loads: Vec<Workload> = seeds
        .iter()
        .map(|&s| workload(p, setup.generator, s))
        .collect();
    let series = |algo: Algo| -> Result<Stats, ModelError> {
        let xs = seeds
            .iter()
            .zip(&loads)
            .map(|(&s, w)| run(algo, w, setup.semantics, s).map(|c| c as f64))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Stats::of(&xs))
    };
    let bounds: Vec<f64> = loads
        .iter()
        .map(|w| {
            let b = LowerBound::of(w);
            (match setup.semantics {
                Semantics::Synchronous => b.value(),
                Semantics::Appendix => b.appendix(),
            }) as f64
        })
        .collect();
    let plans: Vec<(f64, f64, f64)> = loads
        .iter()
        .map(|w| {
            plan_of(w)
                .map(|p| {
                    let all = all_port_cycles(w, &routes_of(w, &p));
                    (p.busiest() as f64, busiest_port(&p) as f64, all as f64)
                })
                .unwrap_or((f64::NAN, f64::NAN, f64::NAN))
        })
        .collect();
    let mut sweep = Vec::new();
    for &t in &setup.thresholds {
        sweep.push((t, series(Algo::Lookahead(t))?));
    }
    let (best_threshold, alg2) = sweep
        .iter()
        .copied()
        .min_by(|a, b| a.1.mean.total_cmp(&b.1.mean).then(b.0.total_cmp(&a.0)))
        .unwrap_or((0.0, Stats::default()));
    Ok(RowResult {
        bound: Stats::of(&bounds),
        brute_force: series(Algo::BruteForce)?,
        rbf: series(Algo::Rbf)?,
        alg1: series(Algo::Equibalancing)?,
        alg2,
        best_threshold,
        sweep,
        ours: series(Algo::Ours)?,
        ours_best: series(Algo::OursBest)?,
        exchange: series(Algo::Exchange)?,
        planned: series(Algo::Planned)?,
        plan_link: Stats::of(&plans.iter().map(|p| p.0).collect::<Vec<_>>()),
        plan_port: Stats::of(&plans.iter().map(|p| p.1).collect::<Vec<_>>()),
        planned_all_port: Stats::of(&plans.iter().map(|p| p.2).collect::<Vec<_>>()),
        packets: loads.iter().map(|w| w.packets.len() as f64).sum::<f64>()
            / loads.len().max(1) as f64,
    })
}
