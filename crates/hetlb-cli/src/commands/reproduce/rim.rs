//! `hetlb reproduce rim-table1`: Rim, Jang & Kim's Table 1 (2003, §4) by exhaustive
//! enumeration, and the 64-processor column the paper does not have, from
//! [`hetlb_experiments::rim_table1`].

use crate::limits;
use crate::output::{Format, print_report};
use crate::progress::bar;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::Algorithm;
use hetlb_experiments::enumeration::{memory_needed, vector_count};
use hetlb_experiments::rim_table1::{PAPER_PROCS, column, values_for};
use hetlb_experiments::tables;

/// Arguments of `hetlb reproduce rim-table1`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb reproduce rim-table1\n  hetlb reproduce rim-table1 --procs 16\n  hetlb reproduce rim-table1 --procs 64 --format json"
)]
pub struct Args {
    /// Processors: 8, 16 or 32 (the paper's sizes, loads 0..=17, 0..=12, 0..=9), or 64 (loads
    /// 0..=7, beyond the paper); repeat or comma-separate [default: 8,16,32].
    #[arg(long, num_args = 1.., value_delimiter = ',', value_parser = crate::input::whole::<usize>(1, 1024))]
    procs: Vec<usize>,
    /// Algorithms to enumerate (the paper's columns are dem and oem).
    #[arg(long, num_args = 1.., value_delimiter = ',', default_value = "dem,oem")]
    algorithm: Vec<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb reproduce rim-table1`.
pub fn run(mut args: Args) -> Result<()> {
    args.procs = crate::input::unique(args.procs, "--procs");
    let procs = if args.procs.is_empty() {
        PAPER_PROCS.to_vec()
    } else {
        args.procs.clone()
    };
    let algorithms = args
        .algorithm
        .iter()
        .map(|a| a.parse::<Algorithm>().context("--algorithm"))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    for &p in &procs {
        let Some(values) = values_for(p) else {
            bail!(
                "--procs: the paper's Table 1 has 8, 16 and 32 processors (and this command adds 64), not {p} (use `hetlb enumerate` for other sizes)"
            );
        };
        for &algorithm in &algorithms {
            let count = vector_count(p, values);
            limits::check(
                "--procs",
                &format!("enumerating {count} vectors of {p} processors"),
                memory_needed(algorithm, p, values),
            )?;
            let progress = bar(count as u64, format!("{algorithm}, {p} processors"));
            let row = column(algorithm, p, &|done| progress.inc(done))
                .map_err(|e| anyhow!("--procs: {e}"))?;
            progress.finish_and_clear();
            rows.push(row);
        }
    }
    print_report(
        args.format,
        &rows,
        || tables::rim_table1::csv(&rows),
        || tables::rim_table1::text(&procs, &rows),
    )
}
