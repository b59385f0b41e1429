//! Rim, Jang & Kim's exhaustive enumeration (dem and oem over every non-decreasing load
//! vector) against planning every vector one by one.

use crate::BenchError;
use crate::timing::{Case, Comparison, Machine, Progress, Report, interleave, timed, with_threads};
use hetlb_core::Algorithm;
use hetlb_core::exchange::balance_in_place;
use hetlb_core::rules::dimension_exchange::{Dem, Oem};
use hetlb_experiments::enumeration::{enumerate, memory_needed, vector_count};
use serde::Serialize;
use std::hint::black_box;

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EnumerationConfig {
    /// Processors (a power of two).
    pub procs: usize,
    /// Distinct load values (loads `0..=values-1`), 1 to 255.
    pub values: u32,
    /// Timed repetitions of each case (interleaved, no warm-up).
    pub repeat: usize,
    /// Vectors planned one by one (single thread) for the baseline; its time for all vectors
    /// is extrapolated from its rate.
    pub baseline_vectors: u64,
    /// Threads for the enumeration (`None`: all); the baseline runs on one.
    pub threads: Option<usize>,
}

impl Default for EnumerationConfig {
    fn default() -> Self {
        Self {
            procs: 32,
            values: 10,
            repeat: 3,
            baseline_vectors: 20_000_000,
            threads: None,
        }
    }
}

crate::setters!(EnumerationConfig { procs: usize, values: u32, repeat: usize, baseline_vectors: u64, threads: Option<usize> });

impl EnumerationConfig {
    /// Bytes the enumeration holds at its peak (see
    /// [`hetlb_experiments::enumeration::memory_needed`]).
    pub fn memory_needed(&self) -> u128 {
        memory_needed(Algorithm::Oem, self.procs, self.values)
    }
}

/// The parameters and figures of an enumeration benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct EnumerationDetails {
    /// Processors.
    pub procs: usize,
    /// Distinct load values.
    pub values: u32,
    /// Non-decreasing vectors enumerated (per rule).
    pub vectors: u64,
    /// Median seconds for dem and oem together, all threads.
    pub median_seconds: f64,
    /// Vectors balanced per second (both rules).
    pub vectors_per_second: f64,
    /// Vectors the baseline planned.
    pub baseline_vectors: u64,
    /// Seconds to plan `baseline_vectors` vectors one by one on one thread (median).
    pub baseline_seconds: f64,
    /// The baseline's rate (both rules).
    pub baseline_vectors_per_second: f64,
    /// The baseline's time for the whole enumeration, extrapolated from its measured rate.
    pub baseline_extrapolated_seconds: f64,
    /// `baseline_extrapolated_seconds / median_seconds`.
    pub speedup: f64,
}

/// Times the exhaustive enumeration of dem and oem (all threads) against planning vectors
/// one by one (one thread, extrapolated to all vectors); `progress(done, total)` is told
/// after every timed run.
///
/// # Errors
/// [`BenchError::Setting`] for no load value or more than 255, more vectors than a `u64` counts, no
/// repetition or no thread; [`BenchError::Refused`] (`procs/values`) when the enumeration
/// refuses them.
///
/// # Example
/// ```
/// use hetlb_bench::enumeration::{self, EnumerationConfig};
/// let cfg = EnumerationConfig::default()
///     .procs(4)
///     .values(3)
///     .repeat(1)
///     .baseline_vectors(10);
/// let r = enumeration::run(&cfg, &mut |_, _| {}).unwrap();
/// assert_eq!(r.details.vectors, 15); // C(3 − 1 + 4, 4)
/// assert_eq!(r.details.baseline_vectors, 10);
/// ```
pub fn run(
    cfg: &EnumerationConfig,
    progress: Progress<'_>,
) -> Result<Report<EnumerationDetails>, BenchError> {
    if cfg.values < 1 {
        return Err(BenchError::setting("values", "must be at least 1"));
    }
    if cfg.values > 255 {
        return Err(BenchError::setting(
            "values",
            "at most 255 (loads are bytes)",
        ));
    }
    let (procs, values) = (cfg.procs, cfg.values);
    let vectors = u64::try_from(vector_count(procs, values))
        .map_err(|_| BenchError::setting("values", "too many vectors"))?;
    let baseline_vectors = cfg.baseline_vectors.min(vectors).max(1);
    with_threads(cfg.threads, |threads| {
        let cases = vec![
            Case::new("enumeration", || {
                let (result, secs) = timed(|| -> Result<(), BenchError> {
                    for alg in [Algorithm::Dem, Algorithm::Oem] {
                        black_box(
                            enumerate(alg, procs, values, &|_| {})
                                .map_err(|e| BenchError::refused("procs/values", e))?,
                        );
                    }
                    Ok(())
                });
                result.map(|()| secs)
            }),
            Case::new("baseline", || {
                Ok(timed(|| naive(procs, values, baseline_vectors)).1)
            }),
        ];
        let samples = interleave(cfg.repeat, 0, cases, progress)?;
        let median_seconds = samples.median("enumeration");
        let baseline = samples.median("baseline");
        let per_vector = baseline / baseline_vectors as f64;
        let extrapolated = per_vector * vectors as f64;
        let comparison = Comparison::new(
            "enumeration",
            ("halves, all threads", median_seconds),
            ("one by one, 1 thread (extrapolated)", extrapolated),
            None,
        );
        Ok(Report::new(
            "enumeration",
            Machine::here(threads),
            cfg.repeat,
            EnumerationDetails {
                procs,
                values,
                vectors,
                median_seconds,
                vectors_per_second: 2.0 * vectors as f64 / median_seconds,
                baseline_vectors,
                baseline_seconds: baseline,
                baseline_vectors_per_second: 2.0 * baseline_vectors as f64 / baseline,
                baseline_extrapolated_seconds: extrapolated,
                speedup: extrapolated / median_seconds,
            },
            vec![comparison],
        ))
    })
}

/// The straightforward loop: generate each non-decreasing vector in turn and balance it from
/// scratch with dem and with oem, on one thread.
fn naive(procs: usize, values: u32, vectors: u64) -> u64 {
    let top = (values - 1) as u8;
    let mut v = vec![0u8; procs];
    let mut work = vec![0u8; procs];
    let mut checksum = 0u64;
    for _ in 0..vectors {
        for rule in 0..2 {
            work.copy_from_slice(&v);
            if rule == 0 {
                balance_in_place(&Dem, &mut work).ok();
            } else {
                balance_in_place(&Oem, &mut work).ok();
            }
            let max = work.iter().max().copied().unwrap_or(0);
            let min = work.iter().min().copied().unwrap_or(0);
            checksum += u64::from(max - min);
        }
        match v.iter().rposition(|&x| x < top) {
            Some(i) => {
                let next = v[i] + 1;
                v[i..].fill(next);
            }
            None => break,
        }
    }
    black_box(checksum)
}
