//! `hetlb bench`: the hot kernels timed against their baselines in the same run.
//!
//! Every figure is the median of `--repeat` runs, and every ratio is taken between medians
//! measured side by side, because the machine is shared and noisy. Criterion benchmarks of
//! the same kernels live in `crates/*/benches/`.

use crate::input::whole;
use crate::output::{Format, fixed, print_json, table};
use anyhow::{Result, anyhow, bail};
use hetlb_core::exchange::balance_in_place;
use hetlb_core::rules::dimension_exchange::{Dem, Oem};
use hetlb_core::transmission::{Schedule, transmit};
use hetlb_core::{Algorithm, BalanceOptions, balance};
use hetlb_experiments::enumeration::{enumerate, memory_needed, vector_count};
use serde::Serialize;
use std::hint::black_box;
use std::time::Instant;

/// Arguments of `hetlb bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    kernel: Kernel,
}

#[derive(Debug, clap::Subcommand)]
enum Kernel {
    /// Rim's exhaustive enumeration (dem and oem), against planning every vector from scratch.
    Enumeration(EnumerationArgs),
    /// One in-place dem and oem balance of a 2^n-node cube, against a plain pass over the vector.
    Exchange(ExchangeArgs),
    /// Scheduling the transmission of a 2^n-node plan: phased, overlap, pipeline.
    Transmission(TransmissionArgs),
    /// Peer rebalancing on threads: moving items against direct sends, and a call with
    /// nothing to do against an all-reduce.
    Rebalance(super::bench_rebalance::Args),
}

#[derive(Debug, clap::Args)]
struct TransmissionArgs {
    /// Hypercube dimension n (2^n nodes).
    #[arg(long, default_value_t = 16)]
    dims: u32,
    /// Loads are uniform on 0..MAX_LOAD (seeded).
    #[arg(long, default_value_t = 1000)]
    max_load: u64,
    /// Timed runs; the median is reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 5, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format (table or json).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Debug, clap::Args)]
struct EnumerationArgs {
    /// Processors.
    #[arg(long, default_value_t = 32)]
    procs: usize,
    /// Distinct load values (loads 0..=K-1).
    #[arg(long, default_value_t = 10)]
    values: u32,
    /// Timed runs; the median is reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 3, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Vectors planned one by one (single thread) for the baseline.
    #[arg(long, default_value_t = 20_000_000)]
    baseline_vectors: u64,
    /// Output format (table or json).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Debug, clap::Args)]
struct ExchangeArgs {
    /// Hypercube dimension n (2^n nodes).
    #[arg(long, default_value_t = 24)]
    dims: u32,
    /// Also time the full planner, which records every transfer (about 12·2^n of them: some
    /// 5 GB at n = 24).
    #[arg(long)]
    full_plan: bool,
    /// Timed runs; the median is reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 5, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format (table or json).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Machine {
    available_parallelism: usize,
    rayon_threads: usize,
}

fn machine() -> Machine {
    Machine {
        available_parallelism: std::thread::available_parallelism().map_or(1, |n| n.get()),
        rayon_threads: rayon_threads(),
    }
}

fn rayon_threads() -> usize {
    // rayon is a dependency of hetlb-experiments; its pool size is what the drivers use.
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let m = xs.len() / 2;
    if xs.len() % 2 == 1 {
        xs[m]
    } else {
        (xs[m - 1] + xs[m]) / 2.0
    }
}

fn time<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed().as_secs_f64())
}

/// Runs `hetlb bench`.
pub fn run(args: Args) -> Result<()> {
    let format = match &args.kernel {
        Kernel::Enumeration(a) => a.format,
        Kernel::Exchange(a) => a.format,
        Kernel::Transmission(a) => a.format,
        // Prints CSV as well.
        Kernel::Rebalance(_) => Format::Table,
    };
    if format == Format::Csv {
        bail!("--format: bench prints a table or JSON, not CSV");
    }
    match args.kernel {
        Kernel::Enumeration(a) => bench_enumeration(a),
        Kernel::Exchange(a) => bench_exchange(a),
        Kernel::Transmission(a) => bench_transmission(a),
        Kernel::Rebalance(a) => super::bench_rebalance::run(a),
    }
}

#[derive(Serialize)]
struct EnumerationReport {
    machine: Machine,
    procs: usize,
    values: u32,
    vectors: u64,
    repeat: usize,
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

fn bench_enumeration(a: EnumerationArgs) -> Result<()> {
    if a.repeat == 0 {
        bail!("--runs: must be at least 1");
    }
    let count = vector_count(a.procs, a.values);
    let vectors = u64::try_from(count).map_err(|_| anyhow!("--values: too many vectors"))?;
    crate::limits::check(
        "--procs",
        "the enumeration",
        memory_needed(Algorithm::Oem, a.procs, a.values),
    )?;
    let progress = crate::progress::bar(
        vectors.saturating_mul(2 * a.repeat as u64),
        format!("enumeration, {} processors", a.procs),
    );
    let mut times = Vec::new();
    for _ in 0..a.repeat {
        let (result, secs) = time(|| -> Result<()> {
            for alg in [Algorithm::Dem, Algorithm::Oem] {
                black_box(
                    enumerate(alg, a.procs, a.values, &|done| progress.inc(done))
                        .map_err(|e| anyhow!("--procs/--values: {e}"))?,
                );
            }
            Ok(())
        });
        result?;
        times.push(secs);
    }
    progress.finish_and_clear();
    let median_seconds = median(times);
    let baseline_vectors = a.baseline_vectors.min(vectors).max(1);
    let baseline = median(
        (0..a.repeat)
            .map(|_| time(|| naive(a.procs, a.values, baseline_vectors)).1)
            .collect(),
    );
    let per_vector = baseline / baseline_vectors as f64;
    let report = EnumerationReport {
        machine: machine(),
        procs: a.procs,
        values: a.values,
        vectors,
        repeat: a.repeat,
        median_seconds,
        vectors_per_second: 2.0 * vectors as f64 / median_seconds,
        baseline_vectors,
        baseline_seconds: baseline,
        baseline_vectors_per_second: 2.0 * baseline_vectors as f64 / baseline,
        baseline_extrapolated_seconds: per_vector * vectors as f64,
        speedup: per_vector * vectors as f64 / median_seconds,
    };
    if a.format == Format::Json {
        return print_json(&report);
    }
    crate::out!(
        "Exhaustive enumeration, {} processors, loads 0..={}: {} vectors, dem + oem ({} cores, {} threads)",
        a.procs,
        a.values - 1,
        vectors,
        report.machine.available_parallelism,
        report.machine.rayon_threads
    );
    let mut t = table(["method", "vectors (×2 algorithms)", "median s", "vectors/s"]);
    t.add_row(vec![
        "halves, all threads".to_string(),
        vectors.to_string(),
        fixed(median_seconds, 3),
        format!("{:.3e}", report.vectors_per_second),
    ]);
    t.add_row(vec![
        "one by one, 1 thread".to_string(),
        baseline_vectors.to_string(),
        fixed(baseline, 3),
        format!("{:.3e}", report.baseline_vectors_per_second),
    ]);
    crate::out!("{t}");
    crate::out!(
        "one by one would take about {} s for all vectors (extrapolated from its measured rate): {}× slower",
        fixed(report.baseline_extrapolated_seconds, 1),
        fixed(report.speedup, 1)
    );
    Ok(())
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

#[derive(Serialize)]
struct ExchangeReport {
    machine: Machine,
    dims: u32,
    nodes: usize,
    repeat: usize,
    /// Median seconds of one read pass over the vector (the memory-bandwidth floor).
    plain_pass_seconds: f64,
    dem_seconds: f64,
    oem_seconds: f64,
    dem_ratio: f64,
    oem_ratio: f64,
    /// Median seconds of `exchange::plan` (every transfer recorded), when measured.
    dem_plan_seconds: Option<f64>,
    oem_plan_seconds: Option<f64>,
}

/// A seeded pseudo-random load vector of `2^dims` loads below `max_load`.
fn random_loads(dims: u32, max_load: u64) -> Vec<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..1usize << dims)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % max_load.max(1)
        })
        .collect()
}

#[derive(Serialize)]
struct TransmissionRow {
    algorithm: Algorithm,
    schedule: Schedule,
    steps: u64,
    median_ms: f64,
}

fn bench_transmission(a: TransmissionArgs) -> Result<()> {
    if a.repeat == 0 {
        bail!("--runs: must be at least 1");
    }
    if a.dims > 22 {
        bail!("--dims: at most 22");
    }
    let loads = random_loads(a.dims, a.max_load);
    let mut rows = Vec::new();
    for alg in [Algorithm::Dem, Algorithm::Oem, Algorithm::Cwa] {
        let plan =
            balance(alg, &loads, &BalanceOptions::default()).map_err(|e| anyhow!("--dims: {e}"))?;
        for schedule in Schedule::ALL {
            let mut steps = 0;
            let times = (0..a.repeat)
                .map(|_| {
                    let (t, secs) = time(|| transmit(&plan, schedule));
                    steps = t.map(|t| t.steps).unwrap_or(0);
                    secs
                })
                .collect();
            rows.push(TransmissionRow {
                algorithm: alg,
                schedule,
                steps,
                median_ms: median(times) * 1e3,
            });
        }
    }
    if a.format == Format::Json {
        return print_json(&rows);
    }
    crate::out!(
        "Transmission schedules of a {}-cube plan ({} nodes, loads uniform on 0..{}), one thread, median of {}",
        a.dims,
        loads.len(),
        a.max_load,
        a.repeat
    );
    let mut t = table(["algorithm", "schedule", "steps (T_comm)", "median ms"]);
    for r in &rows {
        t.add_row(vec![
            r.algorithm.to_string(),
            r.schedule.to_string(),
            r.steps.to_string(),
            fixed(r.median_ms, 2),
        ]);
    }
    crate::out!("{t}");
    Ok(())
}

fn bench_exchange(a: ExchangeArgs) -> Result<()> {
    if a.repeat == 0 {
        bail!("--runs: must be at least 1");
    }
    if a.dims > 30 {
        bail!("--dims: at most 30 (2^30 loads are 8 GiB)");
    }
    let nodes = 1usize << a.dims;
    let loads = random_loads(a.dims, 1_000_000);
    let mut work = loads.clone();
    let (mut plain, mut dem, mut oem) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..a.repeat {
        plain.push(time(|| black_box(work.iter().fold(0u64, |s, &w| s.wrapping_add(w)))).1);
        work.copy_from_slice(&loads);
        dem.push(time(|| black_box(balance_in_place(&Dem, &mut work))).1);
        work.copy_from_slice(&loads);
        oem.push(time(|| black_box(balance_in_place(&Oem, &mut work))).1);
        work.copy_from_slice(&loads);
    }
    let (plain, dem, oem) = (median(plain), median(dem), median(oem));
    let plan_time = |alg: Algorithm| -> Option<f64> {
        a.full_plan.then(|| {
            median(
                (0..a.repeat.min(3))
                    .map(|_| {
                        time(|| {
                            black_box(
                                balance(alg, &loads, &BalanceOptions::default())
                                    .map(|p| p.phases.len()),
                            )
                        })
                        .1
                    })
                    .collect(),
            )
        })
    };
    let (dem_plan_seconds, oem_plan_seconds) =
        (plan_time(Algorithm::Dem), plan_time(Algorithm::Oem));
    let report = ExchangeReport {
        machine: machine(),
        dims: a.dims,
        nodes,
        repeat: a.repeat,
        plain_pass_seconds: plain,
        dem_seconds: dem,
        oem_seconds: oem,
        dem_ratio: dem / plain,
        oem_ratio: oem / plain,
        dem_plan_seconds,
        oem_plan_seconds,
    };
    if a.format == Format::Json {
        return print_json(&report);
    }
    crate::out!(
        "In-place balance of a {}-cube ({nodes} loads, {} MiB), one thread, median of {}",
        a.dims,
        (nodes * 8) >> 20,
        a.repeat
    );
    let mut t = table(["kernel", "median ms", "× plain pass"]);
    t.add_row(vec![
        "plain pass (sum)".to_string(),
        fixed(plain * 1e3, 2),
        "1.0".to_string(),
    ]);
    t.add_row(vec![
        "dem".to_string(),
        fixed(dem * 1e3, 2),
        fixed(dem / plain, 1),
    ]);
    t.add_row(vec![
        "oem".to_string(),
        fixed(oem * 1e3, 2),
        fixed(oem / plain, 1),
    ]);
    for (name, secs) in [
        ("dem, full plan", report.dem_plan_seconds),
        ("oem, full plan", report.oem_plan_seconds),
    ] {
        if let Some(secs) = secs {
            t.add_row(vec![
                name.to_string(),
                fixed(secs * 1e3, 2),
                fixed(secs / plain, 1),
            ]);
        }
    }
    crate::out!("{t}");
    Ok(())
}
