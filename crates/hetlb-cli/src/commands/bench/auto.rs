//! `hetlb bench auto`: rule `auto` with the trigger `auto` beside every fixed (rule, period)
//! pair on four sleep-based workloads (`hetlb_bench::auto`).

use crate::input::whole;
use crate::output::Format;
use crate::progress::counter;
use anyhow::{Context, Result};
use hetlb_bench::auto::{AutoConfig, Workload};
use hetlb_bench::tables;
use hetlb_core::Algorithm;
use std::time::Duration;

/// Arguments of `hetlb bench auto`.
#[derive(Debug, clap::Args)]
pub struct Auto {
    /// Ranks (threads; they sleep, so they need no core each).
    #[arg(long, default_value = "8", value_parser = whole::<usize>(2, 64))]
    ranks: usize,
    /// Items in all (each one unit; the hotspot makes some costlier).
    #[arg(long, default_value = "4096", value_parser = whole::<u64>(2, 10_000_000))]
    items: u64,
    /// Iterations of every run.
    #[arg(long, default_value = "40", value_parser = whole::<u64>(2, 100_000))]
    iterations: u64,
    /// Microseconds of sleep per unit of work.
    #[arg(long, default_value = "100", value_name = "µS", value_parser = whole::<u64>(1, 1_000_000))]
    sleep_us: u64,
    /// Fixed rules swept, and auto's candidates.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cwa,dem-hetero,oem,dishet"
    )]
    algorithms: Vec<String>,
    /// Periods swept (iterations between calls).
    #[arg(long, value_delimiter = ',', default_value = "1,2,5,10,20", value_parser = whole::<u64>(1, 100_000))]
    periods: Vec<u64>,
    /// Auto's horizon: iterations over which the predicted gain must pay for the move.
    #[arg(long, default_value = "10", value_parser = whole::<u64>(1, 1_000_000))]
    horizon: u64,
    /// Workloads: static, hotspot, speed-change, balanced.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "static,hotspot,speed-change,balanced"
    )]
    workloads: Vec<String>,
    /// Runs of every configuration; the median total is reported.
    #[arg(long, default_value = "1", value_parser = whole::<usize>(1, 100))]
    runs: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb bench auto`.
pub fn run(a: Auto) -> Result<()> {
    let rules = crate::input::unique(a.algorithms.clone(), "--algorithms")
        .iter()
        .map(|r| r.parse::<Algorithm>().context("--algorithms"))
        .collect::<Result<Vec<_>>>()?;
    let workloads = crate::input::unique(a.workloads.clone(), "--workloads")
        .iter()
        .map(|w| {
            w.parse::<Workload>()
                .map_err(|e| anyhow::anyhow!("--workloads: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let cfg = AutoConfig::default()
        .ranks(a.ranks)
        .items(a.items)
        .iterations(a.iterations)
        .sleep_per_unit(Duration::from_micros(a.sleep_us))
        .algorithms(rules)
        .periods(crate::input::unique(a.periods.clone(), "--periods"))
        .horizon(a.horizon)
        .workloads(workloads)
        .runs(a.runs);
    let what = format!("{} items", a.items);
    crate::limits::check("--items", &what, cfg.memory_needed())?;
    let r = hetlb_bench::auto::run(&cfg, &mut counter("runs")).map_err(super::flagged)?;
    crate::output::print_report(
        a.format,
        &r,
        || tables::auto_csv(&r),
        || tables::auto_text(&r),
    )
}
