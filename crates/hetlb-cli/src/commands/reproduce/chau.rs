//! `hetlb reproduce chau-table1|chau-table2`: Chau & Fu's Tables 1–2 (§3), from
//! [`hetlb_experiments::chau`].

use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::progress::bar;
use anyhow::{Context, Result, bail};
use hetlb_core::Algorithm;
use hetlb_experiments::Histogram;
use hetlb_experiments::chau::{ChauTable as Table, TableRow as Row, reproduce};
use hetlb_experiments::monte_carlo::MonteCarlo;
use hetlb_experiments::paper::CHAU_TRIALS;

/// Arguments of `hetlb reproduce chau-table1` and `chau-table2`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Random trials (runs) per hypercube dimension (the paper uses 100,000).
    #[arg(long = "runs", visible_alias = "trials", value_name = "N", default_value_t = CHAU_TRIALS, value_parser = crate::input::whole::<u64>(1, 100_000_000))]
    trials: u64,
    /// Seed of the random streams; the same seed gives the same table on any number of threads.
    #[arg(long, default_value_t = 1, value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Each node's load is drawn uniformly from 0..=MAX_LOAD (the paper does not say).
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::input::whole::<u64>(0, 1 << 40))]
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
    match args.format {
        Format::Json => print_json(&rows),
        Format::Csv => print_csv(
            &[
                "algorithm",
                "n",
                "source",
                "trials",
                "d0",
                "d1",
                "d2",
                "d3",
                "d4",
                "d5",
                "d6",
                "d7",
                "d8+",
                "average",
            ],
            rows.iter().flat_map(|r| {
                let ours = csv_row(r.algorithm, r.n, "hetlb", r.trials, &r.histogram, r.average);
                let paper = r
                    .paper
                    .as_ref()
                    .map(|p| csv_row(r.algorithm, r.n, "paper", p.trials, &p.histogram, p.average));
                std::iter::once(ours).chain(paper)
            }),
        ),
        Format::Table => {
            print_table(which, &mc, &rows);
            Ok(())
        }
    }
}

fn field_of(e: &hetlb_experiments::monte_carlo::MonteCarloError) -> &'static str {
    use hetlb_experiments::monte_carlo::MonteCarloError as E;
    match e {
        E::Dimension(_) => "--dims",
        E::Overflow { .. } => "--max-load",
        _ => "--runs",
    }
}

fn csv_row(
    algorithm: Algorithm,
    n: u32,
    source: &str,
    trials: u64,
    h: &Histogram,
    average: f64,
) -> Vec<String> {
    let mut row = vec![
        algorithm.to_string(),
        n.to_string(),
        source.to_string(),
        trials.to_string(),
    ];
    row.extend((0..8).map(|d| h.count(d).to_string()));
    row.push(h.count_at_least(8).to_string());
    row.push(format!("{average:.4}"));
    row
}

fn print_table(which: Table, mc: &MonteCarlo, rows: &[Row]) {
    crate::out!("{} — reproduced with {}", which.title(), mc.algorithm);
    crate::out!(
        "{} trials per row, loads uniform on 0..={}, seed {}; |z| is the largest two-sample z of a column against the paper",
        mc.trials,
        mc.max_load,
        mc.seed
    );
    let top = rows
        .iter()
        .map(|r| {
            r.histogram
                .max_difference()
                .max(r.paper.as_ref().map_or(0, |p| p.histogram.max_difference()))
        })
        .max()
        .unwrap_or(0)
        .max(7);
    let mut header = vec!["n".to_string(), "source".to_string()];
    header.extend((0..=top).map(|d| d.to_string()));
    header.extend(["avg".to_string(), "|z|".to_string()]);
    let mut t = table(header);
    for r in rows {
        let mut ours = vec![r.n.to_string(), "hetlb".to_string()];
        ours.extend((0..=top).map(|d| r.histogram.count(d).to_string()));
        ours.push(fixed(r.average, 3));
        ours.push(r.max_abs_z.map(|z| fixed(z, 1)).unwrap_or_default());
        t.add_row(ours);
        if let Some(p) = &r.paper {
            let mut paper = vec![String::new(), "paper".to_string()];
            paper.extend((0..=top).map(|d| p.histogram.count(d).to_string()));
            paper.push(fixed(p.average, 2));
            paper.push(String::new());
            t.add_row(paper);
        }
    }
    crate::out!("{t}");
}
