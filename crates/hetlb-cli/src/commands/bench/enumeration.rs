//! `hetlb bench enumeration`: Rim's exhaustive enumeration against planning every vector one
//! by one.

use super::timing::{Case, Comparison, Machine, Report, interleave, timed, with_threads};
use crate::input::whole;
use crate::output::{Format, fixed};
use anyhow::{Result, anyhow};
use hetlb_core::Algorithm;
use hetlb_core::exchange::balance_in_place;
use hetlb_core::rules::dimension_exchange::{Dem, Oem};
use hetlb_experiments::enumeration::{enumerate, vector_count};
use serde::Serialize;
use std::hint::black_box;

/// Arguments of `hetlb bench enumeration`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Processors.
    #[arg(long, default_value_t = 32, value_parser = crate::input::whole::<usize>(2, 1024))]
    procs: usize,
    /// Distinct load values (loads 0..=K-1).
    #[arg(long, default_value_t = 10, value_parser = crate::input::whole::<u32>(1, 255))]
    values: u32,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 3, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Vectors planned one by one (single thread) for the baseline.
    #[arg(long, default_value_t = 20_000_000, value_parser = crate::input::whole::<u64>(1, 10_000_000_000))]
    baseline_vectors: u64,
    /// Threads for the enumeration (default: all); the baseline runs on one.
    #[arg(long, value_parser = crate::input::whole::<usize>(1, 1024))]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Details {
    procs: usize,
    values: u32,
    vectors: u64,
    /// Median seconds for dem and oem together, all threads.
    median_seconds: f64,
    vectors_per_second: f64,
    baseline_vectors: u64,
    /// Seconds to plan `baseline_vectors` vectors one by one on one thread (median).
    baseline_seconds: f64,
    baseline_vectors_per_second: f64,
    /// The baseline's time for the whole enumeration, extrapolated from its measured rate.
    baseline_extrapolated_seconds: f64,
    speedup: f64,
}

/// Runs `hetlb bench enumeration`.
pub fn run(a: Args) -> Result<()> {
    if a.values < 1 {
        return Err(anyhow!("--values: must be at least 1"));
    }
    crate::limits::check(
        "--procs",
        "the enumeration",
        hetlb_experiments::enumeration::memory_needed(Algorithm::Oem, a.procs, a.values),
    )?;
    let count = vector_count(a.procs, a.values);
    let vectors = u64::try_from(count).map_err(|_| anyhow!("--values: too many vectors"))?;
    let baseline_vectors = a.baseline_vectors.min(vectors).max(1);
    let report = with_threads(a.threads, |threads| {
        let cases = vec![
            Case::new("enumeration", || {
                let (result, secs) = timed(|| -> Result<()> {
                    for alg in [Algorithm::Dem, Algorithm::Oem] {
                        black_box(
                            enumerate(alg, a.procs, a.values, &|_| {})
                                .map_err(|e| anyhow!("--procs/--values: {e}"))?,
                        );
                    }
                    Ok(())
                });
                result.map(|()| secs)
            }),
            Case::new("baseline", || {
                Ok(timed(|| naive(a.procs, a.values, baseline_vectors)).1)
            }),
        ];
        let samples = interleave(a.repeat, 0, cases)?;
        let median_seconds = samples.median("enumeration");
        let baseline = samples.median("baseline");
        let per_vector = baseline / baseline_vectors as f64;
        let extrapolated = per_vector * vectors as f64;
        let comparison = Comparison {
            key: "enumeration".into(),
            kernel: "halves, all threads".into(),
            kernel_seconds: median_seconds,
            floor: "one by one, 1 thread (extrapolated)".into(),
            floor_seconds: extrapolated,
            kernel_floor_ratio: median_seconds / extrapolated,
            aim_ratio: None,
            items: None,
        };
        Ok(Report::new(
            "enumeration",
            Machine::here(threads),
            a.repeat,
            Details {
                procs: a.procs,
                values: a.values,
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
    })?;
    let d = &report.details;
    let title = format!(
        "Exhaustive enumeration, {} processors, loads 0..={}: {} vectors, dem + oem",
        a.procs,
        a.values - 1,
        vectors
    );
    let notes = [format!(
        "one by one: {} vectors in {} s ({:.3e} vectors/s), so about {} s for all vectors: {}× slower",
        d.baseline_vectors,
        fixed(d.baseline_seconds, 3),
        d.baseline_vectors_per_second,
        fixed(d.baseline_extrapolated_seconds, 1),
        fixed(d.speedup, 1)
    )];
    report.print(a.format, &title, &notes)
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
