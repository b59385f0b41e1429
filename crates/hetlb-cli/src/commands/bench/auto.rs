//! `hetlb bench auto`: rule `auto` with the trigger `auto` beside every fixed (rule, period)
//! pair on four sleep-based workloads (`hetlb_bench::auto`).

use crate::input::whole;
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::progress::counter;
use anyhow::{Context, Result};
use hetlb_bench::auto::{AutoConfig, AutoReport, Workload};
use hetlb_core::Algorithm;
use std::time::Duration;

/// Arguments of `hetlb bench auto`.
#[derive(Debug, clap::Args)]
pub struct Auto {
    /// Ranks (threads; they sleep, so they need no core each).
    #[arg(long, default_value_t = 8, value_parser = whole::<usize>(2, 64))]
    ranks: usize,
    /// Items in all (each one unit; the hotspot makes some costlier).
    #[arg(long, default_value_t = 4096, value_parser = whole::<u64>(2, 10_000_000))]
    items: u64,
    /// Iterations of every run.
    #[arg(long, default_value_t = 40, value_parser = whole::<u64>(2, 100_000))]
    iterations: u64,
    /// Microseconds of sleep per unit of work.
    #[arg(long, default_value_t = 100, value_name = "µS", value_parser = whole::<u64>(1, 1_000_000))]
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
    #[arg(long, default_value_t = 10, value_parser = whole::<u64>(1, 1_000_000))]
    horizon: u64,
    /// Workloads: static, hotspot, speed-change, balanced.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "static,hotspot,speed-change,balanced"
    )]
    workloads: Vec<String>,
    /// Runs of every configuration; the median total is reported.
    #[arg(long, default_value_t = 1, value_parser = whole::<usize>(1, 100))]
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
        .rules(rules)
        .periods(crate::input::unique(a.periods.clone(), "--periods"))
        .horizon(a.horizon)
        .workloads(workloads)
        .runs(a.runs);
    let r = hetlb_bench::auto::run(&cfg, &mut counter("runs")).map_err(super::flagged)?;
    match a.format {
        Format::Json => print_json(&r),
        Format::Csv => print_csv(
            &[
                "workload",
                "balancer",
                "period",
                "seconds",
                "wall_seconds",
                "min_seconds",
                "max_seconds",
                "moves",
                "held_back",
                "units_moved",
            ],
            r.rows.iter().map(|x| {
                vec![
                    x.workload.name().to_string(),
                    x.balancer.clone(),
                    x.period.map_or(String::new(), |p| p.to_string()),
                    format!("{:.6}", x.seconds),
                    format!("{:.6}", x.wall_seconds),
                    format!("{:.6}", x.min_seconds),
                    format!("{:.6}", x.max_seconds),
                    x.moves.to_string(),
                    x.held_back.to_string(),
                    x.units_moved.to_string(),
                ]
            }),
        ),
        Format::Table => {
            print_tables(&r);
            Ok(())
        }
    }
}

fn print_tables(r: &AutoReport) {
    crate::out!(
        "Rule auto (trigger auto, horizon {}, cost learned on line, called every iteration) \
         beside every fixed (rule, period) pair: {} ranks, {} items, {} iterations, {} µs of \
         sleep per unit; median of {} run(s)",
        r.horizon,
        r.ranks,
        r.items,
        r.iterations,
        fixed(r.sleep_per_unit * 1e6, 0),
        r.runs
    );
    let mut t = table([
        "workload",
        "best fixed pair",
        "its s",
        "none s",
        "auto s",
        "auto ÷ best",
        "auto ÷ none",
        "aim",
        "met",
    ]);
    for s in &r.summaries {
        t.add_row(vec![
            s.workload.name().to_string(),
            format!("{} every {}", s.best_rule, s.best_period),
            fixed(s.best_seconds, 3),
            fixed(s.none_seconds, 3),
            fixed(s.auto_seconds, 3),
            fixed(s.auto_over_best, 3),
            fixed(s.auto_over_none, 3),
            format!(
                "{} ≤ {}",
                if s.workload == Workload::Balanced {
                    "÷ none"
                } else {
                    "÷ best"
                },
                fixed(s.aim, 2)
            ),
            if s.met { "yes" } else { "no" }.to_string(),
        ]);
    }
    crate::out!("{t}");
    crate::out!("Auto's predictions against what its moves measured (medians):");
    let opt = |x: Option<f64>, scale: f64, digits| {
        x.map_or("–".to_string(), |v| fixed(v * scale, digits))
    };
    let mut p = table([
        "workload",
        "moves",
        "move time: |error| ÷ measured",
        "predicted ÷ measured",
        "gains measured",
        "gain/iteration: |error| ms",
        "measured gain ms",
    ]);
    for s in &r.summaries {
        p.add_row(vec![
            s.workload.name().to_string(),
            s.moves_measured.to_string(),
            opt(s.move_time_error, 1.0, 2),
            opt(s.move_time_ratio, 1.0, 2),
            s.gains_measured.to_string(),
            opt(s.gain_error_seconds, 1e3, 3),
            opt(s.gain_measured_seconds, 1e3, 3),
        ]);
    }
    crate::out!("{p}");
    crate::out!("Every run, total seconds (median; min–max over the runs):");
    let mut all = table([
        "workload",
        "balancer",
        "period",
        "seconds",
        "min–max",
        "moves",
        "held back",
        "units moved",
    ]);
    for x in &r.rows {
        all.add_row(vec![
            x.workload.name().to_string(),
            x.balancer.clone(),
            x.period.map_or("–".to_string(), |p| p.to_string()),
            fixed(x.seconds, 3),
            format!("{}–{}", fixed(x.min_seconds, 3), fixed(x.max_seconds, 3)),
            fixed(x.wall_seconds, 3),
            x.moves.to_string(),
            x.held_back.to_string(),
            x.units_moved.to_string(),
        ]);
    }
    crate::out!("{all}");
    crate::out!(
        "Work sleeps, so speeds and predictions do not depend on the machine's load. Accounted \
         seconds: Σ over iterations of the slowest rank's work + Σ over rebalances of the time \
         the last rank to reach the call spends in it (gather, planning every candidate, \
         moving), as measured; wall seconds add the wake-up delays of a loaded machine."
    );
}
