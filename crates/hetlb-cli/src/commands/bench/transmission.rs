//! `hetlb bench transmission`: the pipelined schedule against the overlapped one.

use super::exchange::random_loads;
use super::timing::{Case, Comparison, Machine, Report, interleave, timed};
use crate::input::whole;
use crate::output::Format;
use anyhow::{Result, anyhow, bail};
use hetlb_core::transmission::{Schedule, transmit};
use hetlb_core::{Algorithm, BalanceOptions, balance};
use serde::Serialize;
use std::hint::black_box;

/// Arguments of `hetlb bench transmission`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Hypercube dimension n (2^n nodes).
    #[arg(long, default_value_t = 16, value_parser = crate::input::whole::<u32>(1, 24))]
    dims: u32,
    /// Loads are uniform on 0..MAX_LOAD (seeded).
    #[arg(long, default_value_t = 1000, value_parser = crate::input::whole::<u64>(0, 1 << 40))]
    max_load: u64,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 5, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Row {
    algorithm: Algorithm,
    schedule: Schedule,
    steps: u64,
    median_ms: f64,
}

#[derive(Serialize)]
struct Details {
    dims: u32,
    max_load: u64,
    /// Every schedule of every plan: its length in steps and its median time.
    rows: Vec<Row>,
}

const ALGORITHMS: [Algorithm; 3] = [Algorithm::Dem, Algorithm::Oem, Algorithm::Cwa];

fn case_name(alg: Algorithm, s: Schedule) -> String {
    format!("{alg}/{s}")
}

/// Runs `hetlb bench transmission`.
pub fn run(a: Args) -> Result<()> {
    if a.dims > 22 {
        bail!("--dims: at most 22");
    }
    if a.max_load == 0 {
        bail!("--max-load: must be at least 1");
    }
    let loads = random_loads(a.dims, a.max_load);
    let mut plans = Vec::new();
    for alg in ALGORITHMS {
        plans.push(
            balance(alg, &loads, &BalanceOptions::default()).map_err(|e| anyhow!("--dims: {e}"))?,
        );
    }
    let mut steps = std::collections::BTreeMap::new();
    for (alg, plan) in ALGORITHMS.iter().zip(&plans) {
        for s in Schedule::ALL {
            let t = transmit(plan, s).map_err(|e| anyhow!("--max-load: {e}"))?;
            steps.insert(case_name(*alg, s), t.steps);
        }
    }
    let mut cases = Vec::new();
    for (alg, plan) in ALGORITHMS.iter().zip(&plans) {
        for s in Schedule::ALL {
            cases.push(Case::new(case_name(*alg, s), move || {
                Ok(timed(|| black_box(transmit(plan, s).map(|t| t.steps))).1)
            }));
        }
    }
    let samples = interleave(a.repeat, 1, cases)?;
    let mut rows = Vec::new();
    let mut comparisons = Vec::new();
    for alg in ALGORITHMS {
        for s in Schedule::ALL {
            let name = case_name(alg, s);
            rows.push(Row {
                algorithm: alg,
                schedule: s,
                steps: steps[&name],
                median_ms: samples.median(&name) * 1e3,
            });
        }
        comparisons.push(Comparison::of(
            &samples,
            &format!("{}_pipeline", alg.name().replace('-', "_")),
            (
                &case_name(alg, Schedule::Pipeline),
                &format!(
                    "{alg}: pipeline ({} steps)",
                    steps[&case_name(alg, Schedule::Pipeline)]
                ),
            ),
            (
                &case_name(alg, Schedule::Overlap),
                &format!(
                    "{alg}: overlap ({} steps)",
                    steps[&case_name(alg, Schedule::Overlap)]
                ),
            ),
            Some(3.0),
        ));
        comparisons.push(Comparison::of(
            &samples,
            &format!("{}_phased", alg.name().replace('-', "_")),
            (
                &case_name(alg, Schedule::Phased),
                &format!(
                    "{alg}: phased ({} steps)",
                    steps[&case_name(alg, Schedule::Phased)]
                ),
            ),
            (
                &case_name(alg, Schedule::Overlap),
                &format!("{alg}: overlap"),
            ),
            None,
        ));
    }
    let report = Report::new(
        "transmission",
        Machine::here(1),
        a.repeat,
        Details {
            dims: a.dims,
            max_load: a.max_load,
            rows,
        },
        comparisons,
    );
    let title = format!(
        "Transmission schedules of a {}-cube plan ({} nodes, loads uniform on 0..{})",
        a.dims,
        loads.len(),
        a.max_load
    );
    report.print(a.format, &title, &[])
}
