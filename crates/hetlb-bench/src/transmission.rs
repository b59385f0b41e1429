//! The pipelined and phased schedules of a plan against the overlapped schedule of the same
//! plan (Rim, Jang & Kim 2003, §6).

use crate::timing::{Case, Comparison, Machine, Progress, Report, interleave, timed};
use crate::{BenchError, random_loads};
use hetlb_core::transmission::{Schedule, transmit};
use hetlb_core::{Algorithm, BalanceOptions, balance};
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// The largest cube timed.
pub const MAX_DIMS: u32 = 22;

/// The plans whose schedules are timed.
pub const ALGORITHMS: [Algorithm; 3] = [Algorithm::Dem, Algorithm::Oem, Algorithm::Cwa];

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransmissionConfig {
    /// Hypercube dimension n (2^n nodes), at most [`MAX_DIMS`].
    pub dims: u32,
    /// Loads are uniform on `0..max_load` (seeded).
    pub max_load: u64,
    /// Timed repetitions of each case (interleaved, after one untimed).
    pub repeat: usize,
}

impl Default for TransmissionConfig {
    fn default() -> Self {
        Self {
            dims: 16,
            max_load: 1000,
            repeat: 5,
        }
    }
}

crate::setters!(TransmissionConfig {
    dims: u32,
    max_load: u64,
    repeat: usize
});

impl TransmissionConfig {
    /// An estimate of the bytes [`run`] holds at its peak: the three plans (`n/2` transfers a
    /// node each) and a schedule's per-link activity, about `48·n + 800` bytes a node.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::transmission::TransmissionConfig;
    /// assert_eq!(TransmissionConfig::default().dims(10).memory_needed(), 1024 * 1280);
    /// ```
    pub fn memory_needed(&self) -> u128 {
        (1u128 << self.dims.min(64)) * (48 * u128::from(self.dims) + 800)
    }
}

/// One schedule of one plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ScheduleRow {
    /// The plan's algorithm.
    pub algorithm: Algorithm,
    /// The schedule.
    pub schedule: Schedule,
    /// Its length in steps.
    pub steps: u64,
    /// Median milliseconds to compute it.
    pub median_ms: f64,
}

/// The parameters of a transmission benchmark and every schedule of every plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TransmissionDetails {
    /// Hypercube dimension.
    pub dims: u32,
    /// The loads' bound.
    pub max_load: u64,
    /// Every schedule of every plan: its length in steps and its median time.
    pub rows: Vec<ScheduleRow>,
}

fn case_name(alg: Algorithm, s: Schedule) -> String {
    format!("{alg}/{s}")
}

/// Times computing every schedule of the dem, oem and cwa plans of the same seeded loads;
/// compares the pipelined and the phased schedule of each plan with its overlapped one;
/// `progress(done, total)` is told after every timed run.
///
/// # Errors
/// [`BenchError::Setting`] for `dims` above [`MAX_DIMS`], a `max_load` of 0 or no
/// repetition; [`BenchError::Refused`] when a plan (`dims`) or a schedule (`max_load`)
/// cannot be computed.
///
/// # Example
/// ```
/// use hetlb_bench::transmission::{self, TransmissionConfig};
/// let cfg = TransmissionConfig::default().dims(3).repeat(1);
/// let r = transmission::run(&cfg, &mut |_, _| {}).unwrap();
/// assert!(r.ratios.contains_key("cwa_pipeline_ratio"));
/// ```
pub fn run(
    cfg: &TransmissionConfig,
    progress: Progress<'_>,
) -> Result<Report<TransmissionDetails>, BenchError> {
    if cfg.dims > MAX_DIMS {
        return Err(BenchError::setting("dims", "at most 22"));
    }
    if cfg.max_load == 0 {
        return Err(BenchError::setting("max_load", "must be at least 1"));
    }
    let loads = random_loads(cfg.dims, cfg.max_load);
    let mut plans = Vec::new();
    for alg in ALGORITHMS {
        plans.push(
            balance(alg, &loads, &BalanceOptions::default())
                .map_err(|e| BenchError::refused("dims", e))?,
        );
    }
    let mut steps = BTreeMap::new();
    for (alg, plan) in ALGORITHMS.iter().zip(&plans) {
        for s in Schedule::ALL {
            let t = transmit(plan, s).map_err(|e| BenchError::refused("max_load", e))?;
            steps.insert(case_name(*alg, s), t.steps);
        }
    }
    let mut cases = Vec::new();
    for (alg, plan) in ALGORITHMS.iter().zip(&plans) {
        for s in Schedule::ALL {
            cases.push(Case::new(case_name(*alg, s), move || {
                Ok(timed(|| black_box(transmit(plan, s).map(|t| t.steps))).1)
            }));
        }
    }
    let samples = interleave(cfg.repeat, 1, cases, progress)?;
    let mut rows = Vec::new();
    let mut comparisons = Vec::new();
    for alg in ALGORITHMS {
        let steps_of = |s: Schedule| steps[&case_name(alg, s)];
        for s in Schedule::ALL {
            rows.push(ScheduleRow {
                algorithm: alg,
                schedule: s,
                steps: steps_of(s),
                median_ms: samples.median(&case_name(alg, s)) * 1e3,
            });
        }
        let key = alg.name().replace('-', "_");
        comparisons.push(Comparison::of(
            &samples,
            &format!("{key}_pipeline"),
            (
                &case_name(alg, Schedule::Pipeline),
                &format!("{alg}: pipeline ({} steps)", steps_of(Schedule::Pipeline)),
            ),
            (
                &case_name(alg, Schedule::Overlap),
                &format!("{alg}: overlap ({} steps)", steps_of(Schedule::Overlap)),
            ),
            Some(3.0),
        ));
        comparisons.push(Comparison::of(
            &samples,
            &format!("{key}_phased"),
            (
                &case_name(alg, Schedule::Phased),
                &format!("{alg}: phased ({} steps)", steps_of(Schedule::Phased)),
            ),
            (
                &case_name(alg, Schedule::Overlap),
                &format!("{alg}: overlap"),
            ),
            None,
        ));
    }
    Ok(Report::new(
        "transmission",
        Machine::here(1),
        cfg.repeat,
        TransmissionDetails {
            dims: cfg.dims,
            max_load: cfg.max_load,
            rows,
        },
        comparisons,
    ))
}
