//! The arguments of every `hetlb bench` subcommand, the call to its benchmark, and what is
//! printed beyond the common report.

use super::{flagged, print_report};
use crate::input::whole;
use crate::output::Format;
use crate::progress::counter;
use anyhow::{Context, Result};
use hetlb_bench::{
    diffusion::DiffusionConfig, dispatch::DispatchConfig, enumeration::EnumerationConfig,
    exchange::ExchangeConfig, rebalance::RebalanceConfig, tables, transmission::TransmissionConfig,
};
use hetlb_core::Algorithm;

/// Arguments of `hetlb bench exchange`.
#[derive(Debug, clap::Args)]
pub struct Exchange {
    /// Hypercube dimension n (2^n nodes).
    #[arg(long, default_value = "24", value_parser = whole::<u32>(1, 30))]
    dims: u32,
    /// Loads are uniform on 0..MAX_LOAD (seeded). Below 2^31 the kernel computes in 32-bit
    /// lanes.
    #[arg(long, default_value = "1000000", value_parser = whole::<u64>(0, 1 << 40))]
    max_load: u64,
    /// Pair rules to time (dem, dem-fixed, dem-improved, dem-hetero, oem).
    #[arg(long = "algorithms", visible_alias = "rules", value_delimiter = ',', default_values_t = vec!["dem".to_string(), "oem".to_string()])]
    rules: Vec<String>,
    /// Also time the full planner, which records every transfer (about 12·2^n of them: some
    /// 5 GB at n = 24).
    #[arg(long)]
    full_plan: bool,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value = "7", value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Threads for the kernels and the floor (default: all).
    #[arg(long, value_parser = whole::<usize>(1, 1024))]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Arguments of `hetlb bench diffusion`.
#[derive(Debug, clap::Args)]
pub struct Diffusion {
    /// Side of the square torus (SIDE × SIDE nodes).
    #[arg(long, default_value = "1000", value_parser = whole::<usize>(2, 4096))]
    side: usize,
    /// Capacities uniform on 1..=4 (seeded) instead of equal.
    #[arg(long)]
    capacities: bool,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value = "9", value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Threads for the rounds and the floor (default: all).
    #[arg(long, value_parser = whole::<usize>(1, 1024))]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Arguments of `hetlb bench dispatch`.
#[derive(Debug, clap::Args)]
pub struct Dispatch {
    /// Empty tasks per run.
    #[arg(long, default_value = "20000", value_parser = whole::<u64>(1, 100_000_000))]
    tasks: u64,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value = "9", value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Arguments of `hetlb bench transmission`.
#[derive(Debug, clap::Args)]
pub struct Transmission {
    /// Hypercube dimension n (2^n nodes).
    #[arg(long, default_value = "16", value_parser = whole::<u32>(1, 24))]
    dims: u32,
    /// Loads are uniform on 0..MAX_LOAD (seeded).
    #[arg(long, default_value = "1000", value_parser = whole::<u64>(0, 1 << 40))]
    max_load: u64,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value = "5", value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Arguments of `hetlb bench enumeration`.
#[derive(Debug, clap::Args)]
pub struct Enumeration {
    /// Processors.
    #[arg(long, default_value = "32", value_parser = whole::<usize>(2, 1024))]
    procs: usize,
    /// Distinct load values (loads 0..=K-1).
    #[arg(long, default_value = "10", value_parser = whole::<u32>(1, 255))]
    values: u32,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value = "3", value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Vectors planned one by one (single thread) for the baseline.
    #[arg(long, default_value = "20000000", value_parser = whole::<u64>(1, 10_000_000_000))]
    baseline_vectors: u64,
    /// Threads for the enumeration (default: all); the baseline runs on one.
    #[arg(long, value_parser = whole::<usize>(1, 1024))]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Arguments of `hetlb bench rebalance`.
#[derive(Debug, clap::Args)]
pub struct Rebalance {
    /// Ranks (threads), a power of two ≥ 2.
    #[arg(long, default_value = "8", value_parser = whole::<usize>(1, 1024))]
    ranks: usize,
    /// Items of 64 bytes that cwa moves (half the ranks send to the other half).
    #[arg(long, default_value = "1000000", value_parser = whole::<u64>(1, 100_000_000))]
    items: u64,
    /// Calls per timing of the balanced case.
    #[arg(long, default_value = "2000", value_parser = whole::<usize>(1, 10_000_000))]
    calls: usize,
    /// Items per unit of Rim et al.'s Figs. 18–19 (15 units on one rank, 1 on each other),
    /// moved by dem under each schedule.
    #[arg(long, default_value = "20000", value_parser = whole::<u64>(1, 100_000_000))]
    unit_items: u64,
    /// Timed repetitions (kernel and floor interleaved); medians are reported.
    #[arg(long, default_value = "5", visible_alias = "repeat", value_parser = whole::<usize>(1, 1000))]
    runs: usize,
    /// Also sweep rank counts (powers of two, 2 to 1024): seconds and messages per rank of
    /// one cwa call against an all-reduce, e.g. `--procs 8,64,512,1024`.
    #[arg(long, value_delimiter = ',', value_parser = whole::<usize>(2, 1024))]
    procs: Vec<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// The progress bar every benchmark shows on a terminal.
const REPETITIONS: &str = "benchmark repetitions";

/// Runs `hetlb bench exchange`.
pub fn exchange(a: Exchange) -> Result<()> {
    let mut cfg = ExchangeConfig::default();
    (cfg.dims, cfg.max_load, cfg.full_plan) = (a.dims, a.max_load, a.full_plan);
    (cfg.repeat, cfg.threads) = (a.repeat, a.threads);
    cfg.rules = a
        .rules
        .iter()
        .map(|r| r.parse::<Algorithm>().context("--algorithms"))
        .collect::<Result<_>>()?;
    let what = format!("a cube of 2^{} loads", a.dims);
    crate::limits::check("--dims", &what, cfg.memory_needed())?;
    let report = hetlb_bench::exchange::run(&cfg, &mut counter(REPETITIONS)).map_err(flagged)?;
    let title = tables::exchange_title(&report.details);
    print_report(&report, a.format, &title, &[])
}

/// Runs `hetlb bench diffusion`.
pub fn diffusion(a: Diffusion) -> Result<()> {
    let mut cfg = DiffusionConfig::default();
    (cfg.side, cfg.capacities, cfg.repeat, cfg.threads) =
        (a.side, a.capacities, a.repeat, a.threads);
    let what = format!("a torus of {0} × {0} nodes", a.side);
    crate::limits::check("--side", &what, cfg.memory_needed())?;
    let report = hetlb_bench::diffusion::run(&cfg, &mut counter(REPETITIONS)).map_err(flagged)?;
    let title = tables::diffusion_title(&report.details);
    print_report(&report, a.format, &title, &[])
}

/// Runs `hetlb bench dispatch`.
pub fn dispatch(a: Dispatch) -> Result<()> {
    let mut cfg = DispatchConfig::default();
    (cfg.tasks, cfg.repeat) = (a.tasks, a.repeat);
    let what = format!("dispatching {} tasks", a.tasks);
    crate::limits::check("--tasks", &what, cfg.memory_needed())?;
    let report = hetlb_bench::dispatch::run(&cfg, &mut counter(REPETITIONS)).map_err(flagged)?;
    let title = tables::dispatch_title(&report.details);
    print_report(&report, a.format, &title, &[])
}

/// Runs `hetlb bench transmission`.
pub fn transmission(a: Transmission) -> Result<()> {
    let mut cfg = TransmissionConfig::default();
    (cfg.dims, cfg.max_load, cfg.repeat) = (a.dims, a.max_load, a.repeat);
    let what = format!("planning and scheduling 2^{} nodes", a.dims);
    crate::limits::check("--dims", &what, cfg.memory_needed())?;
    let report =
        hetlb_bench::transmission::run(&cfg, &mut counter(REPETITIONS)).map_err(flagged)?;
    let title = tables::transmission_title(&report.details);
    print_report(&report, a.format, &title, &[])
}

/// Runs `hetlb bench enumeration`.
pub fn enumeration(a: Enumeration) -> Result<()> {
    let mut cfg = EnumerationConfig::default();
    (cfg.procs, cfg.values, cfg.repeat) = (a.procs, a.values, a.repeat);
    (cfg.baseline_vectors, cfg.threads) = (a.baseline_vectors, a.threads);
    if a.values >= 1 {
        crate::limits::check("--procs", "the enumeration", cfg.memory_needed())?;
    }
    let report = hetlb_bench::enumeration::run(&cfg, &mut counter(REPETITIONS)).map_err(flagged)?;
    let (title, notes) = tables::enumeration_title(&report.details);
    print_report(&report, a.format, &title, &notes)
}

/// Runs `hetlb bench rebalance`.
pub fn rebalance(args: Rebalance) -> Result<()> {
    let mut cfg = RebalanceConfig::default();
    (cfg.ranks, cfg.items, cfg.calls) = (args.ranks, args.items, args.calls);
    (cfg.unit_items, cfg.runs) = (args.unit_items, args.runs);
    cfg.procs = crate::input::unique(args.procs.clone(), "--procs");
    let what = format!(
        "moving {} items and {} items a unit",
        args.items, args.unit_items
    );
    crate::limits::check("--items", &what, cfg.memory_needed())?;
    let r = hetlb_bench::rebalance::run(&cfg, &mut counter("rebalance against floors"))
        .map_err(flagged)?;
    crate::output::print_report(
        args.format,
        &r,
        || tables::rebalance_csv(&r),
        || tables::rebalance_text(&r, args.unit_items),
    )
}
