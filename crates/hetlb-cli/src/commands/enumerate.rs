//! `hetlb enumerate`: the exhaustive histogram for any algorithm and size.

use crate::input::whole;
use crate::limits;
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::progress::bar;
use anyhow::{Context, Result, anyhow};
use hetlb_core::Algorithm;
use hetlb_experiments::Histogram;
use hetlb_experiments::enumeration::{
    EnumerationError, MAX_VECTORS, enumerate, memory_needed, vector_count,
};
use serde::Serialize;
use std::time::Instant;

/// Arguments of `hetlb enumerate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Every non-decreasing vector of P loads with values 0..K-1 is placed on processors \
0..P-1 and balanced; the histogram counts the final max difference.\n\nExample (Rim et al., Table 1, 16 processors):\n  hetlb enumerate --algorithm oem --procs 16 --values 13"
)]
pub struct Args {
    /// Algorithm: dem, dem-fixed, dem-improved, dem-hetero, oem, cwa, hybrid.
    #[arg(long, short)]
    algorithm: String,
    /// Processors P (a power of two).
    #[arg(long, short, value_parser = whole::<usize>(1, 1 << 20))]
    procs: usize,
    /// Number K of distinct load values: loads run over 0..=K-1 (at most 128).
    #[arg(long, short, value_parser = whole::<u32>(1, 128))]
    values: u32,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Report {
    algorithm: Algorithm,
    procs: usize,
    values: u32,
    vectors: u64,
    histogram: Histogram,
    average: f64,
    seconds: f64,
}

/// Runs `hetlb enumerate`.
pub fn run(args: Args) -> Result<()> {
    let algorithm: Algorithm = args.algorithm.parse().context("--algorithm")?;
    if !args.procs.is_power_of_two() {
        anyhow::bail!(
            "--procs: {} processors given, but a hypercube needs a power of two (1, 2, 4, 8, …)",
            args.procs
        );
    }
    // Counts beyond the enumerator's own limit get its error (naming --values) below.
    if vector_count(args.procs, args.values) <= MAX_VECTORS {
        limits::check(
            "--procs",
            &format!(
                "enumerating {} vectors of {} processors",
                vector_count(args.procs, args.values),
                args.procs
            ),
            memory_needed(algorithm, args.procs, args.values),
        )?;
    }
    let count = vector_count(args.procs, args.values);
    let progress = bar(
        u64::try_from(count).unwrap_or(u64::MAX),
        format!("{algorithm}, {} processors", args.procs),
    );
    let started = Instant::now();
    let histogram = enumerate(algorithm, args.procs, args.values, &|done| {
        progress.inc(done)
    })
    .map_err(|e| {
        let field = match e {
            EnumerationError::Procs(_) => "--procs",
            _ => "--values",
        };
        anyhow!("{field}: {e}")
    })?;
    progress.finish_and_clear();
    let report = Report {
        algorithm,
        procs: args.procs,
        values: args.values,
        vectors: histogram.total(),
        average: histogram.average(),
        seconds: started.elapsed().as_secs_f64(),
        histogram,
    };
    match args.format {
        Format::Json => print_json(&report),
        Format::Csv => print_csv(
            &["difference", "count"],
            report
                .histogram
                .iter()
                .map(|(d, c)| [d.to_string(), c.to_string()]),
        ),
        Format::Table => {
            crate::out!(
                "{algorithm} on {} processors, loads 0..={}: {} vectors in {} s",
                report.procs,
                report.values - 1,
                report.vectors,
                fixed(report.seconds, 2)
            );
            let mut t = table(["max difference", "vectors", "share"]);
            for (d, c) in report.histogram.iter() {
                t.add_row(vec![
                    d.to_string(),
                    c.to_string(),
                    format!("{}%", fixed(100.0 * c as f64 / report.vectors as f64, 3)),
                ]);
            }
            t.add_row(vec![
                "average".to_string(),
                fixed(report.average, 4),
                String::new(),
            ]);
            crate::out!("{t}");
            Ok(())
        }
    }
}
