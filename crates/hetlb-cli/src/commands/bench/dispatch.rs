//! `hetlb bench dispatch`: the runtime's cost per task against a bare request–reply loop.

use super::timing::{Case, Comparison, Machine, Report, interleave, timed};
use crate::input::whole;
use crate::output::Format;
use anyhow::{Result, anyhow, bail};
use crossbeam::channel;
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::transport::threads::YIELD_AFTER;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{Job, RunConfig, run_threads};
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

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

/// Polls `rx` until a message comes, as the threads transport does: spinning for
/// [`YIELD_AFTER`], then yielding the core between batches of 32 checks (so that two threads
/// that share a core on a loaded machine take turns instead of spinning out their time
/// slices).
fn poll<T>(rx: &channel::Receiver<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        for _ in 0..32 {
            match rx.try_recv() {
                Ok(t) => return Some(t),
                Err(channel::TryRecvError::Empty) => std::hint::spin_loop(),
                Err(channel::TryRecvError::Disconnected) => return None,
            }
        }
        if start.elapsed() >= YIELD_AFTER {
            std::thread::yield_now();
        }
    }
}

/// The floor: `round_trips` request–reply exchanges between this thread and another over two
/// crossbeam channels, each side polling its channel.
pub(super) fn bare_loop(round_trips: u64) -> Result<()> {
    let (to_worker, requests) = channel::unbounded::<u64>();
    let (to_master, replies) = channel::unbounded::<u64>();
    let worker = std::thread::spawn(move || {
        for _ in 0..round_trips {
            let Some(task) = poll(&requests) else {
                return;
            };
            if to_master.send(task + 1).is_err() {
                return;
            }
        }
    });
    for i in 0..round_trips {
        to_worker.send(i).map_err(|_| anyhow!("worker gone"))?;
        if poll(&replies).is_none() {
            bail!("worker gone");
        }
    }
    worker.join().map_err(|_| anyhow!("worker panicked"))
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
