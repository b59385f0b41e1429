//! The DISHET experiments (Neelakantan, *Decentralized load balancing in heterogeneous
//! systems using diffusion approach*, IJDPS 3(1), 2012, §5), recomputed.
//!
//! The paper compares DISHET with "random biasing" and "dynamic biasing" on random graphs of
//! 8 to 64 nodes, total loads of 1000 to 10000 units, and eight initial distributions: loads
//! varying 25, 50, 75 and 100% around the average, all the load on one node, and 25, 50 and
//! 75% of the nodes idle. It reports the number of iterations against the total load, one
//! figure per distribution. The figures did not survive the text extraction and the text
//! gives no numbers, so this module can only recompute the experiment, not check it.
//!
//! What the paper leaves open is fixed here, and printed with the results:
//! * **graphs** — G(n, p) with `p = min(1, d/(n − 1))` for a mean degree `d` (default 4),
//!   repaired to be connected ([`generators::random_connected`]); one graph per trial;
//! * **capacities** — integers drawn uniformly from `1..=c_max` (default 4) per node;
//! * **varying distributions** — each load drawn uniformly from
//!   `[(1 − v)·W/n, (1 + v)·W/n]`, rounded down, then moved one unit at a time at random nodes
//!   (staying inside the range) until the total is exactly `W`;
//! * **idle distributions** — `⌈q·n⌉` random nodes get nothing, the others share `W` equally
//!   (the remainder one unit each to the first of them);
//! * every algorithm of a trial sees the same graph, capacities and loads.
//!
//! Every random choice comes from a stream seeded by the base seed and the trial's
//! coordinates, so the results do not depend on the number of threads.
//!
//! [`response`] runs the same instances in time, in the simulator: throughput and average
//! response time, the paper's other two measures.

pub mod response;

use hetlb_core::Metrics;
use hetlb_core::ModelError;
use hetlb_core::algorithm::{Algorithm, BalanceError, BalanceOptions, balance_on};
use hetlb_core::model::Capacities;
use hetlb_core::topology::{GraphError, Network, generators};
use rand::RngExt;
use rand_pcg::Pcg64;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

pub use crate::paper::dishet::FINDINGS as PAPER_FINDINGS;

/// The largest total load of the grid (units): sums stay far from overflow.
pub const MAX_TOTAL: u64 = 1 << 40;

/// The largest graph of the grid (nodes).
pub const MAX_NODES: usize = 4096;

/// Why an experiment of this module could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DishetError {
    /// A graph size of 0 or above [`MAX_NODES`].
    #[error("{0} nodes is out of range (1 to {MAX_NODES})")]
    Size(usize),
    /// A total above what the experiment accepts.
    #[error("{total} is too large ({why})")]
    Total {
        /// The total load.
        total: u64,
        /// The limit, and what it protects.
        why: &'static str,
    },
    /// The random graph of a trial could not be built.
    #[error("random graph of {nodes} nodes")]
    Graph {
        /// Its size.
        nodes: usize,
        /// What the generator said.
        #[source]
        source: GraphError,
    },
    /// The capacities of a trial were refused.
    #[error(transparent)]
    Capacities(#[from] ModelError),
    /// A rule failed on a trial.
    #[error("{algorithm} on {trial:?}")]
    Balance {
        /// The rule.
        algorithm: Algorithm,
        /// The trial.
        trial: Trial,
        /// What it said.
        #[source]
        source: BalanceError,
    },
    /// A simulation of [`response`] failed.
    #[error(transparent)]
    Simulation(#[from] hetlb_sim::SimError),
    /// Diffusion settings of [`response`] the simulator refuses.
    #[error(transparent)]
    Settings(#[from] hetlb_sim::policy::DiffusionError),
    /// A policy of [`response`] that is not a diffusion rule.
    #[error(
        "{0} is not a diffusion rule (expected none, dishet, dishet-tight, random-biasing, \
         dynamic-biasing, diffusion or gdem)"
    )]
    NotDiffusion(Algorithm),
    /// No policy to compare in [`response`].
    #[error("give at least one policy")]
    NoPolicy,
    /// A balancing interval of [`response`] that would need too many rounds.
    #[error(
        "{interval} s between rounds could need about {rounds:.1e} rounds per run (at most \
         {max:e}); choose a longer interval"
    )]
    Interval {
        /// Seconds between rounds.
        interval: f64,
        /// Rounds it could need.
        rounds: f64,
        /// The simulator's limit.
        max: f64,
    },
}

/// A distribution name that is not one of [`Distribution::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown distribution '{0}' (expected vary-25, vary-50, vary-75, vary-100, single, idle-25, idle-50 or idle-75)"
)]
pub struct UnknownDistribution(pub String);

/// An initial load distribution of Neelakantan's §5.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Distribution {
    /// Loads varying this many percent around the average `W/n`.
    Varying(u32),
    /// All the load on one node.
    Single,
    /// This many percent of the nodes idle.
    Idle(u32),
}

impl Distribution {
    /// The eight distributions of the paper, in its order.
    pub const ALL: [Distribution; 8] = [
        Distribution::Varying(25),
        Distribution::Varying(50),
        Distribution::Varying(75),
        Distribution::Varying(100),
        Distribution::Single,
        Distribution::Idle(25),
        Distribution::Idle(50),
        Distribution::Idle(75),
    ];

    /// Short name: `vary-25`, …, `single`, `idle-25`, ….
    pub fn name(self) -> String {
        match self {
            Distribution::Varying(v) => format!("vary-{v}"),
            Distribution::Single => "single".to_string(),
            Distribution::Idle(q) => format!("idle-{q}"),
        }
    }

    /// Description as in the paper.
    pub fn describe(self) -> String {
        match self {
            Distribution::Varying(v) => format!("loads varying {v}% around the average"),
            Distribution::Single => "all the load on one node".to_string(),
            Distribution::Idle(q) => format!("{q}% of the nodes idle"),
        }
    }

    /// True for the pathological distributions.
    pub fn is_pathological(self) -> bool {
        !matches!(self, Distribution::Varying(_))
    }

    /// `n` loads totalling exactly `total`, drawn from `rng`.
    ///
    /// # Example
    /// ```
    /// use hetlb_experiments::dishet::Distribution;
    /// let mut rng = rand_pcg::Pcg64::new(1, 1);
    /// for d in Distribution::ALL {
    ///     let loads = d.generate(16, 1000, &mut rng);
    ///     assert_eq!(loads.iter().sum::<u64>(), 1000);
    /// }
    /// ```
    pub fn generate(self, n: usize, total: u64, rng: &mut Pcg64) -> Vec<u64> {
        assert!(n > 0, "at least one node");
        match self {
            Distribution::Varying(v) => {
                let mean = total as f64 / n as f64;
                let spread = mean * f64::from(v) / 100.0;
                let low = (mean - spread).max(0.0).ceil() as u64;
                let high = ((mean + spread).floor() as u64).max(low);
                let mut loads: Vec<u64> = (0..n)
                    .map(|_| {
                        let x: f64 = rng.random();
                        ((mean - spread + 2.0 * spread * x).floor() as u64).clamp(low, high)
                    })
                    .collect();
                let mut sum: u64 = loads.iter().sum();
                // Fix the total one unit at a time, staying in [low, high] while possible.
                while sum != total {
                    let i = rng.random_range(0..n);
                    if sum < total && (loads[i] < high || loads.iter().all(|&w| w >= high)) {
                        loads[i] += 1;
                        sum += 1;
                    } else if sum > total
                        && loads[i] > 0
                        && (loads[i] > low || loads.iter().all(|&w| w <= low))
                    {
                        loads[i] -= 1;
                        sum -= 1;
                    }
                }
                loads
            }
            Distribution::Single => {
                let mut loads = vec![0; n];
                loads[rng.random_range(0..n)] = total;
                loads
            }
            Distribution::Idle(q) => {
                let idle = ((n * q as usize).div_ceil(100)).min(n - 1);
                let mut order: Vec<usize> = (0..n).collect();
                for i in (1..n).rev() {
                    order.swap(i, rng.random_range(0..=i));
                }
                let busy = &order[idle..];
                let share = total / busy.len() as u64;
                let extra = (total % busy.len() as u64) as usize;
                let mut loads = vec![0; n];
                for (k, &i) in busy.iter().enumerate() {
                    loads[i] = share + u64::from(k < extra);
                }
                loads
            }
        }
    }
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl FromStr for Distribution {
    type Err = UnknownDistribution;
    fn from_str(s: &str) -> Result<Self, UnknownDistribution> {
        Distribution::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| UnknownDistribution(s.to_string()))
    }
}

impl Serialize for Distribution {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// The experiment grid and its free parameters.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Config {
    /// Graph sizes (paper: 8 to 64 nodes).
    pub sizes: Vec<usize>,
    /// Total loads (paper: 1000, 2000, 4000, 6000, 8000, 10000).
    pub totals: Vec<u64>,
    /// Initial distributions (paper: all eight).
    pub distributions: Vec<Distribution>,
    /// Algorithms compared.
    pub algorithms: Vec<Algorithm>,
    /// Trials (graph, capacities, loads) per cell.
    pub seeds: u64,
    /// Mean degree `d` of the random graphs: `p = min(1, d/(n − 1))`.
    pub mean_degree: f64,
    /// Capacities are drawn uniformly from `1..=max_capacity`.
    pub max_capacity: u32,
    /// Base seed of every random stream.
    pub base_seed: u64,
    /// Round limit of every run.
    pub max_rounds: u64,
}

impl Config {
    /// The paper's grid ([`Config::default`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the graph sizes.
    #[must_use]
    pub fn sizes(mut self, sizes: Vec<usize>) -> Self {
        self.sizes = sizes;
        self
    }

    /// Sets the total loads.
    #[must_use]
    pub fn totals(mut self, totals: Vec<u64>) -> Self {
        self.totals = totals;
        self
    }

    /// Sets the initial distributions.
    #[must_use]
    pub fn distributions(mut self, distributions: Vec<Distribution>) -> Self {
        self.distributions = distributions;
        self
    }

    /// Sets the algorithms compared.
    #[must_use]
    pub fn algorithms(mut self, algorithms: Vec<Algorithm>) -> Self {
        self.algorithms = algorithms;
        self
    }

    /// Sets the trials per cell.
    #[must_use]
    pub fn seeds(mut self, seeds: u64) -> Self {
        self.seeds = seeds;
        self
    }

    /// Sets the mean degree of the random graphs.
    #[must_use]
    pub fn mean_degree(mut self, mean_degree: f64) -> Self {
        self.mean_degree = mean_degree;
        self
    }

    /// Sets the largest capacity.
    #[must_use]
    pub fn max_capacity(mut self, max_capacity: u32) -> Self {
        self.max_capacity = max_capacity;
        self
    }

    /// Sets the base seed.
    #[must_use]
    pub fn base_seed(mut self, base_seed: u64) -> Self {
        self.base_seed = base_seed;
        self
    }

    /// Sets the round limit.
    #[must_use]
    pub fn max_rounds(mut self, max_rounds: u64) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Refuses an empty or oversized graph and totals above `max_total` (`why` names the limit
    /// and what it protects, for the message).
    ///
    /// # Errors
    /// [`DishetError::Size`] or [`DishetError::Total`].
    pub fn check(&self, max_total: u64, why: &'static str) -> Result<(), DishetError> {
        if let Some(&bad) = self.sizes.iter().find(|&&n| n == 0 || n > MAX_NODES) {
            return Err(DishetError::Size(bad));
        }
        if let Some(&bad) = self.totals.iter().find(|&&w| w > max_total) {
            return Err(DishetError::Total { total: bad, why });
        }
        Ok(())
    }

    /// How the capacities are drawn, in words.
    pub fn capacity_description(&self) -> String {
        format!(
            "integers drawn uniformly from 1..={} per node",
            self.max_capacity
        )
    }

    /// How the graphs are drawn, in words.
    pub fn graph_description(&self) -> String {
        format!(
            "G(n, p) with p = min(1, {}/(n-1)), repaired to be connected; a new graph, capacity \
             vector and load vector per trial, shared by all algorithms",
            self.mean_degree
        )
    }

    /// Trials of the grid: sizes × totals × distributions × seeds.
    pub fn trial_count(&self) -> u64 {
        (self.sizes.len() * self.totals.len() * self.distributions.len()) as u64 * self.seeds
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            sizes: vec![8, 16, 32, 64],
            totals: vec![1000, 2000, 4000, 6000, 8000, 10000],
            distributions: Distribution::ALL.to_vec(),
            algorithms: Algorithm::DIFFUSION.to_vec(),
            seeds: 5,
            mean_degree: 4.0,
            max_capacity: 4,
            base_seed: 2012,
            max_rounds: hetlb_core::rounds::DEFAULT_MAX_ROUNDS,
        }
    }
}

/// One trial's instance.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Instance {
    /// The network.
    pub network: Network,
    /// The capacities.
    pub capacities: Capacities,
    /// The initial loads.
    pub loads: Vec<u64>,
    /// Seed for randomised algorithms.
    pub seed: u64,
}

/// Coordinates of a trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[non_exhaustive]
pub struct Trial {
    /// Nodes.
    pub nodes: usize,
    /// Total load.
    pub total: u64,
    /// Distribution.
    pub distribution: Distribution,
    /// Trial number in the cell.
    pub index: u64,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Trial {
    /// The trial's instance, a function of the coordinates and the configuration only.
    ///
    /// # Errors
    /// [`DishetError::Graph`] when the graph cannot be built (a size of 0, a mean degree that
    /// is not a non-negative number).
    pub fn instance(&self, config: &Config) -> Result<Instance, DishetError> {
        let d = Distribution::ALL
            .iter()
            .position(|&x| x == self.distribution)
            .unwrap_or(0) as u64;
        let key = [self.nodes as u64, self.total, d, self.index]
            .iter()
            .fold(mix(config.base_seed), |acc, &x| mix(acc ^ x));
        let mut rng = Pcg64::new(u128::from(key) << 64 | u128::from(mix(key)), 0x1405);
        let n = self.nodes;
        let p = if n > 1 {
            (config.mean_degree / (n - 1) as f64).min(1.0)
        } else {
            0.0
        };
        let graph = generators::random_connected(n, p, rng.random())
            .map_err(|source| DishetError::Graph { nodes: n, source })?;
        let capacities = Capacities::new(
            (0..n)
                .map(|_| f64::from(rng.random_range(1..=config.max_capacity.max(1))))
                .collect(),
        )?;
        let loads = self.distribution.generate(n, self.total, &mut rng);
        Ok(Instance {
            network: Network::from_graph(graph),
            capacities,
            loads,
            seed: rng.random(),
        })
    }
}

/// One algorithm's result on one trial.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The trial.
    pub trial: Trial,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Rounds to convergence.
    pub rounds: u64,
    /// True when the run reached its fixed point within the round limit.
    pub converged: bool,
    /// The plan's metrics, weighted by the capacities.
    pub metrics: Metrics,
}

/// Aggregate over the trials of one cell (size, total, distribution, algorithm).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Cell {
    /// Nodes.
    pub nodes: usize,
    /// Total load.
    pub total: u64,
    /// Distribution.
    pub distribution: Distribution,
    /// Algorithm.
    pub algorithm: Algorithm,
    /// Trials.
    pub trials: u64,
    /// Trials that converged.
    pub converged: u64,
    /// Mean rounds to convergence.
    pub rounds_mean: f64,
    /// Fewest rounds.
    pub rounds_min: u64,
    /// Most rounds.
    pub rounds_max: u64,
    /// Mean net units moved.
    pub units_moved_mean: f64,
    /// Mean task-hops.
    pub task_hops_mean: f64,
    /// Mean messages (load information and tasks).
    pub messages_mean: f64,
    /// Mean final max − min of the loads (not weighted).
    pub max_difference_mean: f64,
    /// Mean final weighted imbalance `max(w/c) ÷ (W/Σc)`.
    pub weighted_imbalance_mean: f64,
    /// Mean final distance from the optimal integer allocation (in average-node units).
    pub distance_from_optimal_mean: f64,
}

/// Every trial of the grid, in a fixed order.
pub fn trials(config: &Config) -> Vec<Trial> {
    let mut out = Vec::new();
    for &nodes in &config.sizes {
        for &total in &config.totals {
            for &distribution in &config.distributions {
                for index in 0..config.seeds {
                    out.push(Trial {
                        nodes,
                        total,
                        distribution,
                        index,
                    });
                }
            }
        }
    }
    out
}

/// Runs every algorithm on every trial, in parallel; `tick` is called after each trial.
///
/// # Errors
/// The first trial whose instance or run fails ([`DishetError`]).
///
/// # Example
/// ```
/// use hetlb_experiments::dishet::{aggregate, run, Config};
/// let config = Config::new().sizes(vec![8]).totals(vec![1000]).seeds(2);
/// let outcomes = run(&config, &|| {}).unwrap();
/// let algorithms = config.algorithms.len();
/// assert_eq!(outcomes.len(), 8 * 2 * algorithms); // distributions × seeds × algorithms
/// assert!(outcomes.iter().all(|o| o.converged));
/// assert_eq!(aggregate(&outcomes).len(), 8 * algorithms);
/// ```
pub fn run(config: &Config, tick: &(dyn Fn() + Sync)) -> Result<Vec<Outcome>, DishetError> {
    let per_trial: Result<Vec<Vec<Outcome>>, DishetError> = trials(config)
        .into_par_iter()
        .map(|trial| {
            let instance = trial.instance(config)?;
            let outcomes = config
                .algorithms
                .iter()
                .map(|&algorithm| {
                    let options = BalanceOptions::new()
                        .capacities(Some(instance.capacities.clone()))
                        .max_rounds(Some(config.max_rounds))
                        .seed(instance.seed);
                    let run = balance_on(&instance.network, algorithm, &instance.loads, &options)
                        .map_err(|source| DishetError::Balance {
                        algorithm,
                        trial,
                        source,
                    })?;
                    Ok(Outcome {
                        trial,
                        algorithm,
                        rounds: run.rounds,
                        converged: run.converged,
                        metrics: Metrics::of(&run.plan, Some(&instance.capacities)),
                    })
                })
                .collect::<Result<Vec<_>, DishetError>>();
            tick();
            outcomes
        })
        .collect();
    Ok(per_trial?.into_iter().flatten().collect())
}

/// Averages the outcomes per (size, total, distribution, algorithm), in grid order.
pub fn aggregate(outcomes: &[Outcome]) -> Vec<Cell> {
    let mut keys: Vec<(usize, u64, Distribution, Algorithm)> = outcomes
        .iter()
        .map(|o| {
            (
                o.trial.nodes,
                o.trial.total,
                o.trial.distribution,
                o.algorithm,
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|(nodes, total, distribution, algorithm)| {
            let group: Vec<&Outcome> = outcomes
                .iter()
                .filter(|o| {
                    (
                        o.trial.nodes,
                        o.trial.total,
                        o.trial.distribution,
                        o.algorithm,
                    ) == (nodes, total, distribution, algorithm)
                })
                .collect();
            let k = group.len() as f64;
            let mean = |f: &dyn Fn(&Outcome) -> f64| group.iter().map(|o| f(o)).sum::<f64>() / k;
            Cell {
                nodes,
                total,
                distribution,
                algorithm,
                trials: group.len() as u64,
                converged: group.iter().filter(|o| o.converged).count() as u64,
                rounds_mean: mean(&|o| o.rounds as f64),
                rounds_min: group.iter().map(|o| o.rounds).min().unwrap_or(0),
                rounds_max: group.iter().map(|o| o.rounds).max().unwrap_or(0),
                units_moved_mean: mean(&|o| o.metrics.units_moved as f64),
                task_hops_mean: mean(&|o| o.metrics.task_hops as f64),
                messages_mean: mean(&|o| o.metrics.messages as f64),
                max_difference_mean: mean(&|o| o.metrics.max_difference as f64),
                weighted_imbalance_mean: mean(&|o| o.metrics.weighted_imbalance),
                distance_from_optimal_mean: mean(&|o| o.metrics.distance_from_optimal),
            }
        })
        .collect()
}

/// The mean of `value` over the items that `keep` selects; NaN when none does.
pub fn mean_over<T>(items: &[T], keep: impl Fn(&T) -> bool, value: impl Fn(&T) -> f64) -> f64 {
    let (sum, n) = items
        .iter()
        .filter(|c| keep(c))
        .fold((0.0, 0usize), |(s, n), c| (s + value(c), n + 1));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

/// One algorithm over the whole grid: totals, and means over its cells.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Summary {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Trials run.
    pub trials: u64,
    /// Trials that converged.
    pub converged: u64,
    /// Mean over cells of the mean rounds.
    pub rounds: f64,
    /// Most rounds of any trial.
    pub max_rounds: u64,
    /// Mean over cells of the net units moved.
    pub units_moved: f64,
    /// Mean over cells of the task-hops.
    pub task_hops: f64,
    /// Mean over cells of the messages.
    pub messages: f64,
    /// Mean over cells of the weighted imbalance.
    pub weighted_imbalance: f64,
    /// Mean over cells of the distance from the optimal allocation.
    pub distance_from_optimal: f64,
}

/// `algorithm`'s [`Summary`] over `cells`.
pub fn summarise(cells: &[Cell], algorithm: Algorithm) -> Summary {
    let of = |c: &Cell| c.algorithm == algorithm;
    Summary {
        algorithm,
        trials: cells.iter().filter(|c| of(c)).map(|c| c.trials).sum(),
        converged: cells.iter().filter(|c| of(c)).map(|c| c.converged).sum(),
        rounds: mean_over(cells, of, |c| c.rounds_mean),
        max_rounds: cells
            .iter()
            .filter(|c| of(c))
            .map(|c| c.rounds_max)
            .max()
            .unwrap_or(0),
        units_moved: mean_over(cells, of, |c| c.units_moved_mean),
        task_hops: mean_over(cells, of, |c| c.task_hops_mean),
        messages: mean_over(cells, of, |c| c.messages_mean),
        weighted_imbalance: mean_over(cells, of, |c| c.weighted_imbalance_mean),
        distance_from_optimal: mean_over(cells, of, |c| c.distance_from_optimal_mean),
    }
}

/// The mean rounds of `algorithm` over the cells that `keep` selects (NaN when none).
pub fn mean_rounds(cells: &[Cell], algorithm: Algorithm, keep: impl Fn(&Cell) -> bool) -> f64 {
    mean_over(
        cells,
        |c| c.algorithm == algorithm && keep(c),
        |c| c.rounds_mean,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_have_their_shape() {
        let mut rng = Pcg64::new(7, 7);
        for total in [0u64, 1, 999, 10_000] {
            for n in [1usize, 8, 64] {
                for d in Distribution::ALL {
                    let loads = d.generate(n, total, &mut rng);
                    assert_eq!(loads.len(), n);
                    assert_eq!(loads.iter().sum::<u64>(), total, "{d} n={n} W={total}");
                    let zeros = loads.iter().filter(|&&w| w == 0).count();
                    match d {
                        Distribution::Single if total > 0 => assert_eq!(zeros, n - 1),
                        Distribution::Idle(q) if n >= 8 && total >= n as u64 => {
                            assert_eq!(zeros, (n * q as usize).div_ceil(100));
                        }
                        Distribution::Varying(v) if n >= 8 && total >= 1000 => {
                            let mean = total as f64 / n as f64;
                            let spread = mean * f64::from(v) / 100.0 + 1.0;
                            assert!(
                                loads.iter().all(|&w| (w as f64 - mean).abs() <= spread),
                                "{d}: {loads:?}"
                            );
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    #[test]
    fn instances_depend_on_the_coordinates_only() {
        let config = Config::default();
        let trial = Trial {
            nodes: 16,
            total: 2000,
            distribution: Distribution::Idle(50),
            index: 3,
        };
        let a = trial.instance(&config).unwrap();
        let b = trial.instance(&config).unwrap();
        assert_eq!(a.network, b.network);
        assert_eq!(a.loads, b.loads);
        assert_eq!(a.capacities, b.capacities);
        let other = Trial { index: 4, ..trial }.instance(&config).unwrap();
        assert_ne!(a.loads, other.loads);
        assert!(
            a.capacities
                .as_slice()
                .iter()
                .all(|&c| (1.0..=4.0).contains(&c) && c.fract() == 0.0)
        );
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let config = Config {
            sizes: vec![8, 16],
            totals: vec![1000],
            seeds: 2,
            ..Config::default()
        };
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| run(&config, &|| {}).unwrap());
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap()
            .install(|| run(&config, &|| {}).unwrap());
        let key = |o: &Outcome| (o.trial, o.algorithm, o.rounds, o.metrics.task_hops);
        assert_eq!(
            one.iter().map(key).collect::<Vec<_>>(),
            two.iter().map(key).collect::<Vec<_>>()
        );
    }
}
