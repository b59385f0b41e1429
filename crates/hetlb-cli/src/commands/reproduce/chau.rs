//! `hetlb reproduce chau-table1|chau-table2`: Chau & Fu's Tables 1–2 (§3), from
//! [`hetlb_experiments::chau`].

use crate::output::{Format, print_report};
use crate::progress::bar;
use anyhow::{Context, Result, bail};
use hetlb_experiments::chau::{ChauTable as Table, reproduce};
use hetlb_experiments::monte_carlo::MonteCarlo;
use hetlb_experiments::paper::CHAU_TRIALS;
use hetlb_experiments::tables;

/// Arguments of `hetlb reproduce chau-table1` and `chau-table2`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Random trials (runs) per hypercube dimension (the paper uses 100,000).
    #[arg(long = "runs", visible_alias = "trials", value_name = "N", default_value_t = CHAU_TRIALS, value_parser = crate::input::whole::<u64>(1, 100_000_000))]
    trials: u64,
    /// Seed of the random streams; the same seed gives the same table on any number of threads.
    #[arg(long, default_value = "1", value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Each node's load is drawn uniformly from 0..=MAX_LOAD (the paper does not say).
    #[arg(long, default_value = "1000000", value_parser = crate::input::whole::<u64>(0, 1 << 40))]
    max_load: u64,
    /// Hypercube dimensions, as `A-B` or a single `N`.
    #[arg(long, default_value = "3-12")]
    dims: String,
    /// Algorithm to run instead of the table's own (dem-fixed for Table 1, dem-improved for
    /// Table 2), to compare rules against the same published numbers.
    #[arg(long)]
    algorithm: Option<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

fn parse_dims(spec: &str) -> Result<std::ops::RangeInclusive<u32>> {
    let parse = |s: &str| {
        s.trim()
            .parse::<u32>()
            .with_context(|| format!("--dims: '{s}' is not a dimension"))
    };
    let (a, b) = match spec.split_once('-') {
        Some((a, b)) => (parse(a)?, parse(b)?),
        None => (parse(spec)?, parse(spec)?),
    };
    if a > b {
        bail!("--dims: the range {a}-{b} is empty");
    }
    Ok(a..=b)
}

/// Runs `hetlb reproduce chau-table1` or `chau-table2`.
pub fn run(which: Table, args: Args) -> Result<()> {
    let algorithm = match &args.algorithm {
        Some(name) => name.parse().context("--algorithm")?,
        None => which.algorithm(),
    };
    let dimensions = parse_dims(&args.dims)?;
    let mc = MonteCarlo::new(algorithm)
        .dimensions(dimensions.clone())
        .trials(args.trials)
        .seed(args.seed)
        .max_load(args.max_load);
    let steps = args
        .trials
        .saturating_mul(dimensions.clone().count() as u64);
    let progress = bar(steps, format!("{algorithm}, {} trials", args.trials));
    let rows = reproduce(which, &mc, &|done| progress.inc(done))
        .map_err(|e| anyhow::anyhow!("{}: {e}", field_of(&e)))?;
    progress.finish_and_clear();
    print_report(
        args.format,
        &rows,
        || tables::chau::csv(&rows),
        || tables::chau::text(which, &mc, &rows),
    )
}

fn field_of(e: &hetlb_experiments::monte_carlo::MonteCarloError) -> &'static str {
    use hetlb_experiments::monte_carlo::MonteCarloError as E;
    match e {
        E::Dimension(_) => "--dims",
        E::Overflow { .. } => "--max-load",
        _ => "--runs",
    }
}
