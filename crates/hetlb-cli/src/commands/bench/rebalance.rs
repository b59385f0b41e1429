//! `hetlb bench rebalance`: peer rebalancing against its floors, side by side (threads; the
//! MPI counterpart is the `rebalance_mpi` example under `mpiexec`).

use crate::input::whole;
use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Result, bail};
use hetlb_runtime::peer::measure::{median, move_items, nothing_to_do};
use serde::Serialize;

/// Arguments of `hetlb bench rebalance`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Ranks (threads), a power of two ≥ 2.
    #[arg(long, default_value_t = 8, value_parser = crate::input::whole::<usize>(1, 1024))]
    ranks: usize,
    /// Items of 64 bytes that cwa moves (half the ranks send to the other half).
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::input::whole::<u64>(1, 100_000_000))]
    items: u64,
    /// Calls per timing of the balanced case.
    #[arg(long, default_value_t = 2000, value_parser = crate::input::whole::<usize>(1, 10_000_000))]
    calls: usize,
    /// Items per unit of Rim et al.'s Figs. 18–19 (15 units on one rank, 1 on each other),
    /// moved by dem under each schedule.
    #[arg(long, default_value_t = 20_000, value_parser = crate::input::whole::<u64>(1, 100_000_000))]
    unit_items: u64,
    /// Timed repetitions (kernel and floor interleaved); medians are reported.
    #[arg(long, default_value_t = 5, visible_alias = "repeat", value_parser = whole::<usize>(1, 1000))]
    runs: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Report {
    ranks: usize,
    available_parallelism: usize,
    items: u64,
    item_bytes: usize,
    runs: usize,
    move_seconds: f64,
    move_uncounted_seconds: f64,
    move_floor_seconds: f64,
    move_ratio: f64,
    move_uncounted_ratio: f64,
    balanced_seconds: f64,
    balanced_floor_seconds: f64,
    balanced_ratio: f64,
    schedules: Vec<hetlb_runtime::peer::measure::ScheduleTiming>,
}

/// Runs `hetlb bench rebalance`.
pub fn run(args: Args) -> Result<()> {
    if args.ranks < 2 || !args.ranks.is_power_of_two() || args.ranks > 1024 {
        bail!(
            "--ranks: {} is not a power of two from 2 to 1024",
            args.ranks
        );
    }
    if args.items == 0 || args.items > 50_000_000 {
        bail!("--items: {} is not between 1 and 50000000", args.items);
    }
    if args.runs == 0 || args.runs > 1000 {
        bail!("--runs: {} is not between 1 and 1000", args.runs);
    }
    if args.unit_items == 0 || args.unit_items > 1_000_000 {
        bail!(
            "--unit-items: {} is not between 1 and 1000000",
            args.unit_items
        );
    }
    if args.calls == 0 || args.calls > 1_000_000 {
        bail!("--calls: {} is not between 1 and 1000000", args.calls);
    }
    let bar = crate::progress::bar(args.runs as u64 * 3, "rebalance against floors");
    let mut moved = Vec::new();
    let mut uncounted = Vec::new();
    let mut balanced = Vec::new();
    for _ in 0..args.runs {
        moved.extend(move_items(args.ranks, args.items, 1, true));
        bar.inc(1);
        uncounted.extend(move_items(args.ranks, args.items, 1, false));
        bar.inc(1);
        balanced.extend(nothing_to_do(args.ranks, args.calls, 1));
        bar.inc(1);
    }
    let schedules = hetlb_runtime::peer::measure::schedules(args.unit_items, args.runs);
    bar.finish_and_clear();
    let med = |v: &[(f64, f64)], second: bool| {
        let mut x: Vec<f64> = v.iter().map(|p| if second { p.1 } else { p.0 }).collect();
        median(&mut x)
    };
    let floor = {
        let mut all: Vec<f64> = moved.iter().chain(&uncounted).map(|p| p.1).collect();
        median(&mut all)
    };
    let r = Report {
        ranks: args.ranks,
        available_parallelism: std::thread::available_parallelism().map_or(1, |n| n.get()),
        items: args.items,
        item_bytes: 64,
        runs: args.runs,
        move_seconds: med(&moved, false),
        move_uncounted_seconds: med(&uncounted, false),
        move_floor_seconds: floor,
        move_ratio: med(&moved, false) / floor,
        move_uncounted_ratio: med(&uncounted, false) / floor,
        balanced_seconds: med(&balanced, false),
        balanced_floor_seconds: med(&balanced, true),
        balanced_ratio: med(&balanced, false) / med(&balanced, true),
        schedules,
    };
    match args.format {
        Format::Json => print_json(&r),
        Format::Csv => print_csv(
            &["kernel", "seconds", "floor", "floor_seconds", "ratio"],
            [
                vec![
                    "cwa move".into(),
                    format!("{:.6}", r.move_seconds),
                    "direct channel sends".into(),
                    format!("{:.6}", r.move_floor_seconds),
                    format!("{:.3}", r.move_ratio),
                ],
                vec![
                    "cwa move, bytes not counted".into(),
                    format!("{:.6}", r.move_uncounted_seconds),
                    "direct channel sends".into(),
                    format!("{:.6}", r.move_floor_seconds),
                    format!("{:.3}", r.move_uncounted_ratio),
                ],
                vec![
                    "rebalance, nothing to do".into(),
                    format!("{:.9}", r.balanced_seconds),
                    "all-reduce of a u64".into(),
                    format!("{:.9}", r.balanced_floor_seconds),
                    format!("{:.3}", r.balanced_ratio),
                ],
            ],
        ),
        Format::Table => {
            crate::out!(
                "Peer rebalancing on {} threads ({} cores), medians of {} runs, kernel and floor \
                 interleaved:",
                r.ranks,
                r.available_parallelism,
                r.runs
            );
            let mut t = table(["kernel", "median", "floor", "floor median", "ratio"]);
            t.add_row(vec![
                format!("cwa moving {} items of 64 B", r.items),
                format!("{} ms", fixed(r.move_seconds * 1e3, 2)),
                "direct channel sends".into(),
                format!("{} ms", fixed(r.move_floor_seconds * 1e3, 2)),
                fixed(r.move_ratio, 2),
            ]);
            t.add_row(vec![
                "the same, bytes not counted".into(),
                format!("{} ms", fixed(r.move_uncounted_seconds * 1e3, 2)),
                "direct channel sends".into(),
                format!("{} ms", fixed(r.move_floor_seconds * 1e3, 2)),
                fixed(r.move_uncounted_ratio, 2),
            ]);
            t.add_row(vec![
                "rebalance with nothing to do".into(),
                format!("{} µs", fixed(r.balanced_seconds * 1e6, 2)),
                "all-reduce of a u64".into(),
                format!("{} µs", fixed(r.balanced_floor_seconds * 1e6, 2)),
                fixed(r.balanced_ratio, 2),
            ]);
            crate::out!("{t}");
            crate::out!(
                "Rim et al.'s Figs. 18-19 on 8 threads, {} items per unit, dem: the measured move \
                 beside the model (steps × the time per unit measured in the same call):",
                args.unit_items
            );
            let mut s = table(["schedule", "model steps", "measured", "model prediction"]);
            for x in &r.schedules {
                s.add_row(vec![
                    x.schedule.name().to_string(),
                    x.predicted_steps.to_string(),
                    format!("{} ms", fixed(x.measured_seconds * 1e3, 2)),
                    format!("{} ms", fixed(x.predicted_seconds * 1e3, 2)),
                ]);
            }
            crate::out!("{s}");
            Ok(())
        }
    }
}
