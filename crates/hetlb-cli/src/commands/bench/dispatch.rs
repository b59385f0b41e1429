//! `hetlb bench dispatch`: the runtime's cost per task against a bare request–reply loop.

use super::timing::{Case, Comparison, Machine, Report, interleave, timed};
use crate::input::whole;
use crate::output::Format;
use anyhow::{Result, anyhow, bail};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::transport::threads::request_reply_floor;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{Job, RunConfig, run_threads};
use serde::Serialize;
use std::sync::Arc;

/// Arguments of `hetlb bench dispatch`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Empty tasks per run.
    #[arg(long, default_value_t = 20_000, value_parser = crate::input::whole::<u64>(1, 100_000_000))]
    tasks: u64,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 9, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Details {
    tasks: u64,
    /// Median microseconds per task, one task per request (self-scheduling).
    self_scheduling_us_per_task: f64,
    /// Median microseconds per task with EFP batches.
    efp_us_per_task: f64,
    /// Median microseconds per round trip of the bare loop.
    bare_loop_us_per_round_trip: f64,
}

/// The floor: `round_trips` request–reply exchanges between two threads over bare crossbeam
/// channels.
pub(super) fn bare_loop(round_trips: u64) -> Result<()> {
    if request_reply_floor(round_trips) {
        Ok(())
    } else {
        bail!("the bare request–reply loop's worker failed")
    }
}

fn run_policy(job: &Arc<Synthetic>, policy: Policy) -> Result<f64> {
    let mut cfg = RunConfig::new(policy);
    cfg.capacities = Some(vec![1.0, 1.0]);
    cfg.master_computes = false;
    let (out, secs) = timed(|| run_threads(Arc::clone(job), 2, &cfg));
    let out = out.map_err(|e| anyhow!("{e}"))?;
    if out.outputs.len() as u64 != job.tasks() {
        bail!("the run returned {} outputs", out.outputs.len());
    }
    Ok(secs)
}

/// Runs `hetlb bench dispatch`.
pub fn run(a: Args) -> Result<()> {
    if a.tasks == 0 {
        bail!("--tasks: must be at least 1");
    }
    let job = Arc::new(Synthetic::new(a.tasks, 0));
    let cases = vec![
        Case::new("bare", || Ok(timed(|| bare_loop(a.tasks)).1)),
        Case::new("self", || run_policy(&job, Policy::SelfScheduling)),
        Case::new("efp", || run_policy(&job, Policy::Efp)),
    ];
    let samples = interleave(a.repeat, 1, cases)?;
    let per = |name: &str| samples.median(name) / a.tasks as f64 * 1e6;
    let comparisons = vec![
        Comparison::of(
            &samples,
            "threads",
            ("self", "threads, one task per request"),
            ("bare", "bare crossbeam request–reply"),
            Some(3.0),
        )
        .per(a.tasks),
        Comparison::of(
            &samples,
            "efp",
            ("efp", "threads, EFP batches"),
            ("bare", "bare crossbeam request–reply"),
            None,
        )
        .per(a.tasks),
    ];
    let report = Report::new(
        "dispatch",
        Machine::here(2),
        a.repeat,
        Details {
            tasks: a.tasks,
            self_scheduling_us_per_task: per("self"),
            efp_us_per_task: per("efp"),
            bare_loop_us_per_round_trip: per("bare"),
        },
        comparisons,
    );
    let title = format!(
        "Dispatch of {} empty tasks, a master that only dispatches and one worker",
        a.tasks
    );
    report.print(a.format, &title, &[])
}
