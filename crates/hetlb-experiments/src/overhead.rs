//! Communication overhead of moving the units (Rim, Jang & Kim 2003, §5.2 and §6.3, Figs.
//! 12–13 and 22–23).
//!
//! Rim et al. measure the time to transmit a balancing plan under the phased, overlapped and
//! pipelined schedules, for CWA, DEM and OEM on 8 and 16 processors, as the initial
//! distribution goes from very uneven to even. Their *imbalance* is the percentage of
//! processors that hold `k` times more load than the others, for
//! `k ∈ {30, 50, 70, 100, 400, 700, 1000}`, averaged over `k`. The paper does not say which
//! processors are the heavy ones nor how much the others hold; here the heavy processors are
//! drawn at random (seeded) for each repetition, the light ones hold `base` units and the heavy
//! ones `k·base`.

use crate::seed::stream;
use hetlb_core::transmission::{Schedule, transmit};
use hetlb_core::{Algorithm, BalanceOptions, Metrics, balance};
use rand::RngExt;
use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

/// The `k` values of the paper.
pub const FACTORS: [u64; 7] = [30, 50, 70, 100, 400, 700, 1000];
/// The algorithms compared.
pub const ALGORITHMS: [Algorithm; 3] = [Algorithm::Cwa, Algorithm::Dem, Algorithm::Oem];

/// An overhead experiment for one hypercube size. Build with [`Overhead::new`] and the
/// setters.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Overhead {
    /// Processors (a power of two).
    pub procs: usize,
    /// Imbalance percentages to run.
    pub imbalances: Vec<u32>,
    /// Load multipliers `k` of the heavy processors.
    pub factors: Vec<u64>,
    /// Load of a light processor.
    pub base: u64,
    /// Random heavy sets per `(imbalance, k)`.
    pub repetitions: u64,
    /// Seed of the random choice of heavy processors.
    pub seed: u64,
}

/// Averages for one algorithm at one imbalance.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct OverheadRow {
    /// Processors.
    pub procs: usize,
    /// Percent of processors holding `k` times more load.
    pub imbalance: u32,
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Instances averaged (`factors × repetitions`).
    pub instances: u64,
    /// Mean `Σ_i Tmax_i`: the phased transmission time, in `T_comm`.
    pub phased: f64,
    /// Mean overlapped transmission time.
    pub overlap: f64,
    /// Mean overlapped and pipelined transmission time.
    pub pipeline: f64,
    /// Mean of `overlap / phased` over the instances (the paper's normalisation).
    pub overlap_normalised: f64,
    /// Mean of `pipeline / phased`.
    pub pipeline_normalised: f64,
    /// Mean task-hops.
    pub task_hops: f64,
}

/// A configuration the experiment cannot run.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum OverheadError {
    /// Bad processor count.
    #[error(transparent)]
    Procs(#[from] hetlb_core::ModelError),
    /// An imbalance outside 1..=100.
    #[error("imbalance {0}% is not between 1 and 100")]
    Imbalance(u32),
    /// No repetitions.
    #[error("the number of repetitions must be at least 1")]
    Repetitions,
    /// Loads that overflow.
    #[error("base load {0} times the largest factor overflows")]
    Overflow(u64),
}

impl Overhead {
    /// The paper's setting on `procs` processors: imbalances 10% to 90% in steps of 10, every
    /// factor of [`FACTORS`], light processors holding 10 units, 50 repetitions, seed 1.
    pub fn new(procs: usize) -> Self {
        Self {
            procs,
            imbalances: (1..=9).map(|i| 10 * i).collect(),
            factors: FACTORS.to_vec(),
            base: 10,
            repetitions: 50,
            seed: 1,
        }
    }

    /// Sets the imbalance percentages.
    #[must_use]
    pub fn imbalances(mut self, imbalances: Vec<u32>) -> Self {
        self.imbalances = imbalances;
        self
    }

    /// Sets the load multipliers of the heavy processors.
    #[must_use]
    pub fn factors(mut self, factors: Vec<u64>) -> Self {
        self.factors = factors;
        self
    }

    /// Sets the load of a light processor.
    #[must_use]
    pub fn base(mut self, base: u64) -> Self {
        self.base = base;
        self
    }

    /// Sets the random heavy sets per `(imbalance, k)`.
    #[must_use]
    pub fn repetitions(mut self, repetitions: u64) -> Self {
        self.repetitions = repetitions;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Runs every `(imbalance, k, repetition)` instance in parallel and averages.
    ///
    /// `progress` is called with the number of instances just finished. Deterministic for a
    /// seed whatever the thread count.
    ///
    /// # Errors
    /// [`OverheadError`] for a bad processor count, imbalance, repetition count or base.
    ///
    /// # Example
    /// ```
    /// use hetlb_experiments::overhead::Overhead;
    /// let exp = Overhead::new(8).imbalances(vec![50]).factors(vec![30]).repetitions(4);
    /// let rows = exp.run(&|_| {}).unwrap();
    /// assert_eq!(rows.len(), 3); // cwa, dem, oem
    /// assert!(rows.iter().all(|r| r.pipeline <= r.overlap && r.overlap <= r.phased));
    /// ```
    pub fn run(&self, progress: &(dyn Fn(u64) + Sync)) -> Result<Vec<OverheadRow>, OverheadError> {
        hetlb_core::topology::Hypercube::for_nodes(self.procs)?;
        if let Some(&bad) = self.imbalances.iter().find(|&&p| p == 0 || p > 100) {
            return Err(OverheadError::Imbalance(bad));
        }
        if self.repetitions == 0 {
            return Err(OverheadError::Repetitions);
        }
        let top = self.factors.iter().copied().max().unwrap_or(1);
        if self
            .base
            .checked_mul(top)
            .and_then(|x| x.checked_mul(self.procs as u64))
            .is_none()
        {
            return Err(OverheadError::Overflow(self.base));
        }
        let mut rows = Vec::new();
        for &imbalance in &self.imbalances {
            let instances: Vec<(u64, u64)> = self
                .factors
                .iter()
                .flat_map(|&k| (0..self.repetitions).map(move |r| (k, r)))
                .collect();
            let results: Vec<[[f64; 4]; 3]> = instances
                .par_iter()
                .map(|&(k, r)| {
                    let out = self.instance(imbalance, k, r);
                    progress(1);
                    out
                })
                .collect();
            let count = results.len() as f64;
            for (a, &algorithm) in ALGORITHMS.iter().enumerate() {
                let mean = |f: &dyn Fn(&[f64; 4]) -> f64| {
                    results.iter().map(|x| f(&x[a])).sum::<f64>() / count
                };
                rows.push(OverheadRow {
                    procs: self.procs,
                    imbalance,
                    algorithm,
                    instances: results.len() as u64,
                    phased: mean(&|x| x[0]),
                    overlap: mean(&|x| x[1]),
                    pipeline: mean(&|x| x[2]),
                    overlap_normalised: mean(&|x| ratio(x[1], x[0])),
                    pipeline_normalised: mean(&|x| ratio(x[2], x[0])),
                    task_hops: mean(&|x| x[3]),
                });
            }
        }
        Ok(rows)
    }

    /// The initial loads of one instance: `heavy` processors chosen at random hold `k·base`.
    pub fn loads(&self, imbalance: u32, k: u64, repetition: u64) -> Vec<u64> {
        let heavy = ((self.procs as f64 * f64::from(imbalance) / 100.0).round() as usize)
            .clamp(1, self.procs);
        let index = (u64::from(imbalance) << 40) ^ (k << 20) ^ repetition;
        let mut rng = stream(self.seed, self.procs as u64, index);
        let mut order: Vec<usize> = (0..self.procs).collect();
        for i in 0..heavy {
            let j = rng.random_range(i..self.procs);
            order.swap(i, j);
        }
        let mut loads = vec![self.base; self.procs];
        for &p in &order[..heavy] {
            loads[p] = self.base * k;
        }
        loads
    }

    /// `[phased, overlap, pipeline, task-hops]` for each algorithm.
    fn instance(&self, imbalance: u32, k: u64, repetition: u64) -> [[f64; 4]; 3] {
        let loads = self.loads(imbalance, k, repetition);
        ALGORITHMS.map(|alg| {
            let plan = balance(alg, &loads, &BalanceOptions::default()).expect("valid loads");
            let time = |s| transmit(&plan, s).expect("hypercube plan").steps as f64;
            [
                time(Schedule::Phased),
                time(Schedule::Overlap),
                time(Schedule::Pipeline),
                Metrics::of(&plan, None).task_hops as f64,
            ]
        })
    }
}

/// The row of `algorithm` at `procs` processors and `imbalance`, if it ran.
pub fn row(
    rows: &[OverheadRow],
    procs: usize,
    imbalance: u32,
    algorithm: Algorithm,
) -> Option<&OverheadRow> {
    rows.iter()
        .find(|r| r.procs == procs && r.imbalance == imbalance && r.algorithm == algorithm)
}

/// `Σ Tmax` of OEM ÷ that of CWA (the phased times) at `procs` and `imbalance`, when both
/// ran: the ratio Rim et al. put at about 0.90 (§5.2,
/// [`crate::paper::rim::SUM_TMAX_OEM_OVER_CWA`]).
pub fn oem_over_cwa(rows: &[OverheadRow], procs: usize, imbalance: u32) -> Option<f64> {
    let cwa = row(rows, procs, imbalance, Algorithm::Cwa)?;
    let oem = row(rows, procs, imbalance, Algorithm::Oem)?;
    Some(oem.phased / cwa.phased)
}

/// The mean of [`oem_over_cwa`] over `imbalances` (those where both ran), or `None` when none
/// did.
pub fn mean_oem_over_cwa(rows: &[OverheadRow], procs: usize, imbalances: &[u32]) -> Option<f64> {
    let ratios: Vec<f64> = imbalances
        .iter()
        .filter_map(|&i| oem_over_cwa(rows, procs, i))
        .collect();
    if ratios.is_empty() {
        None
    } else {
        Some(ratios.iter().sum::<f64>() / ratios.len() as f64)
    }
}

fn ratio(x: f64, base: f64) -> f64 {
    if base == 0.0 { 1.0 } else { x / base }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heavy_processors_follow_the_imbalance() {
        let exp = Overhead {
            procs: 16,
            imbalances: vec![],
            factors: vec![],
            base: 3,
            repetitions: 1,
            seed: 5,
        };
        let loads = exp.loads(25, 100, 0);
        assert_eq!(loads.iter().filter(|&&w| w == 300).count(), 4);
        assert_eq!(loads.iter().filter(|&&w| w == 3).count(), 12);
        assert_ne!(exp.loads(25, 100, 1), loads);
    }

    #[test]
    fn deterministic_whatever_the_thread_count() {
        let exp = Overhead {
            procs: 8,
            imbalances: vec![20, 80],
            factors: vec![30, 400],
            base: 5,
            repetitions: 5,
            seed: 3,
        };
        let run = |threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| exp.run(&|_| {}).unwrap())
        };
        assert_eq!(run(1), run(3));
    }

    #[test]
    fn rejects_bad_configurations() {
        let mut exp = Overhead {
            procs: 6,
            imbalances: vec![10],
            factors: vec![30],
            base: 1,
            repetitions: 1,
            seed: 0,
        };
        assert!(matches!(exp.run(&|_| {}), Err(OverheadError::Procs(_))));
        exp.procs = 8;
        exp.imbalances = vec![0];
        assert_eq!(exp.run(&|_| {}), Err(OverheadError::Imbalance(0)));
        exp.imbalances = vec![10];
        exp.repetitions = 0;
        assert_eq!(exp.run(&|_| {}), Err(OverheadError::Repetitions));
        exp.repetitions = 1;
        exp.base = u64::MAX / 100;
        assert!(matches!(exp.run(&|_| {}), Err(OverheadError::Overflow(_))));
    }
}
