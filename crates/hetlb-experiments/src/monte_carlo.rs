//! Random-trial histograms of the final max difference (Chau & Fu, *Load Balancing Between
//! Heterogenous Computing Clusters*, Tables 1–2).
//!
//! Chau & Fu assign random loads to the nodes of an `n`-cube, balance, and record the max
//! difference, 100,000 times for each `n = 3..12`. They do not state their distribution; we
//! draw each node's load independently and uniformly from `0..=max_load` (default 10^6). With
//! a range that wide, the low-order bits that decide every rounding are as good as independent
//! fair coins, and the histogram no longer depends on the range.

use crate::histogram::Histogram;
use crate::seed::stream;
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::exchange::balance_in_place;
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::{Algorithm, BalanceOptions, Capacities, balance};
use rand::RngExt;
use rayon::prelude::*;
use serde::Serialize;
use std::ops::RangeInclusive;
use thiserror::Error;

/// A Monte-Carlo experiment. Build with [`MonteCarlo::new`] and the setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MonteCarlo {
    /// The algorithm balanced.
    pub algorithm: Algorithm,
    /// Hypercube dimensions to run.
    pub dimensions: RangeInclusive<u32>,
    /// Trials per dimension.
    pub trials: u64,
    /// Seed of all random streams.
    pub seed: u64,
    /// Loads are uniform on `0..=max_load`.
    pub max_load: u64,
}

/// The histogram of one dimension.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MonteCarloRow {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Hypercube dimension.
    pub n: u32,
    /// Trials run.
    pub trials: u64,
    /// Max difference → number of trials.
    pub histogram: Histogram,
    /// Mean max difference.
    pub average: f64,
}

/// A configuration the experiment cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MonteCarloError {
    /// Zero trials.
    #[error("the number of trials must be at least 1")]
    NoTrials,
    /// A dimension too large for a random vector in memory.
    #[error("dimension {0} is too large (at most {max})", max = MonteCarlo::MAX_DIMENSION)]
    Dimension(u32),
    /// A `max_load` whose totals could overflow.
    #[error("the maximum load {max_load} times 2^{n} nodes overflows a u64")]
    Overflow {
        /// The maximum load.
        max_load: u64,
        /// The dimension.
        n: u32,
    },
}

/// Trials handed to one rayon task (and one progress tick).
pub const CHUNK: u64 = 1_000;

impl MonteCarloRow {
    /// The row of `histogram` for `algorithm` on the `n`-cube: its trials and average.
    pub fn new(algorithm: Algorithm, n: u32, histogram: Histogram) -> Self {
        Self {
            algorithm,
            n,
            trials: histogram.total(),
            average: histogram.average(),
            histogram,
        }
    }
}

impl MonteCarlo {
    /// Largest dimension accepted (2^24 random loads per trial).
    pub const MAX_DIMENSION: u32 = 24;

    /// Chau & Fu's setting for `algorithm`: `n = 3..=12`, 100,000 trials, seed 1, loads
    /// uniform on `0..=10^6`.
    pub fn new(algorithm: Algorithm) -> Self {
        Self {
            algorithm,
            dimensions: 3..=12,
            trials: crate::paper::CHAU_TRIALS,
            seed: 1,
            max_load: 1_000_000,
        }
    }

    /// Sets the dimensions.
    #[must_use]
    pub fn dimensions(mut self, dimensions: RangeInclusive<u32>) -> Self {
        self.dimensions = dimensions;
        self
    }

    /// Sets the trials per dimension.
    #[must_use]
    pub fn trials(mut self, trials: u64) -> Self {
        self.trials = trials;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the largest load.
    #[must_use]
    pub fn max_load(mut self, max_load: u64) -> Self {
        self.max_load = max_load;
        self
    }

    /// Runs every dimension; `progress` is called with the number of trials just finished.
    ///
    /// # Errors
    /// [`MonteCarloError`] for zero trials, a dimension above 24 or an overflowing range.
    ///
    /// # Complexity
    /// `O(trials · 2^n · n)` per dimension, spread over rayon's threads.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::Algorithm;
    /// use hetlb_experiments::monte_carlo::MonteCarlo;
    /// let mc = MonteCarlo::new(Algorithm::DemFixed).dimensions(3..=3).trials(2000);
    /// let rows = mc.run(&|_| {}).unwrap();
    /// assert_eq!(rows[0].histogram.total(), 2000);
    /// assert!((rows[0].average - 1.5).abs() < 0.1);
    /// ```
    pub fn run(
        &self,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<Vec<MonteCarloRow>, MonteCarloError> {
        if self.trials == 0 {
            return Err(MonteCarloError::NoTrials);
        }
        for n in self.dimensions.clone() {
            if n > Self::MAX_DIMENSION {
                return Err(MonteCarloError::Dimension(n));
            }
            if self.max_load.checked_mul(1u64 << n).is_none() {
                return Err(MonteCarloError::Overflow {
                    max_load: self.max_load,
                    n,
                });
            }
        }
        Ok(self
            .dimensions
            .clone()
            .map(|n| {
                let histogram = self.histogram(n, progress);
                MonteCarloRow {
                    algorithm: self.algorithm,
                    n,
                    trials: self.trials,
                    average: histogram.average(),
                    histogram,
                }
            })
            .collect())
    }

    fn histogram(&self, n: u32, progress: &(dyn Fn(u64) + Sync)) -> Histogram {
        let chunks = self.trials.div_ceil(CHUNK);
        (0..chunks)
            .into_par_iter()
            .map(|c| {
                let trials = c * CHUNK..((c + 1) * CHUNK).min(self.trials);
                let done = trials.end - trials.start;
                let h = self.chunk(n, trials);
                progress(done);
                h
            })
            .reduce(Histogram::default, |mut a, b| {
                a.merge(&b);
                a
            })
    }

    /// The trials `range` of dimension `n`, each with its own random stream.
    fn chunk(&self, n: u32, range: std::ops::Range<u64>) -> Histogram {
        let nodes = 1usize << n;
        let mut dense = vec![0u64; 1 + 2 * n as usize + 2];
        let mut loads = vec![0u64; nodes];
        for trial in range {
            let mut rng = stream(self.seed, u64::from(n), trial);
            for w in loads.iter_mut() {
                *w = rng.random_range(0..=self.max_load);
            }
            let diff = final_max_difference(self.algorithm, &mut loads);
            if diff as usize >= dense.len() {
                dense.resize(diff as usize + 1, 0);
            }
            dense[diff as usize] += 1;
        }
        Histogram::from_dense(&dense)
    }
}

/// Balances `loads` in place with `algorithm` and returns `max − min` of the result.
fn final_max_difference(algorithm: Algorithm, loads: &mut [u64]) -> u64 {
    struct InPlace<'a>(&'a mut [u64]);
    impl PairRuleVisitor for InPlace<'_> {
        type Output = ();
        fn visit<R: PairRule>(self, rule: &R) {
            balance_in_place(rule, self.0).expect("power-of-two length");
        }
    }
    let caps = Capacities::uniform(loads.len());
    if visit_pair_rule(algorithm, &caps, InPlace(loads)).is_none() {
        let plan = balance(algorithm, loads, &BalanceOptions::default()).expect("valid loads");
        loads.copy_from_slice(&plan.final_loads);
    }
    let max = loads.iter().copied().max().unwrap_or(0);
    let min = loads.iter().copied().min().unwrap_or(0);
    max - min
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(algorithm: Algorithm, trials: u64, threads: usize) -> Vec<MonteCarloRow> {
        let mc = MonteCarlo {
            algorithm,
            dimensions: 3..=5,
            trials,
            seed: 42,
            max_load: 1000,
        };
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| mc.run(&|_| {}).unwrap())
    }

    #[test]
    fn same_seed_same_histogram_whatever_the_thread_count() {
        assert_eq!(run(Algorithm::Oem, 3500, 1), run(Algorithm::Oem, 3500, 3));
    }

    #[test]
    fn cube_walking_runs_through_the_planner() {
        let rows = run(Algorithm::Cwa, 500, 2);
        assert!(rows.iter().all(|r| r.histogram.max_difference() <= 1));
    }

    #[test]
    fn rejects_bad_configurations() {
        let mut mc = MonteCarlo {
            algorithm: Algorithm::Dem,
            dimensions: 3..=3,
            trials: 0,
            seed: 0,
            max_load: 10,
        };
        assert_eq!(mc.run(&|_| {}), Err(MonteCarloError::NoTrials));
        mc.trials = 1;
        mc.dimensions = 25..=25;
        assert_eq!(mc.run(&|_| {}), Err(MonteCarloError::Dimension(25)));
        mc.dimensions = 4..=4;
        mc.max_load = u64::MAX;
        assert!(matches!(
            mc.run(&|_| {}),
            Err(MonteCarloError::Overflow { .. })
        ));
    }
}
