//! The threads runtime's cost per task against a bare request–reply loop between two threads.

use crate::BenchError;
use crate::timing::{Case, Comparison, Machine, Progress, Report, interleave, timed};
use crossbeam::channel::{self, Receiver, TryRecvError};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{Job, RunConfig, run_threads};
use hetlb_transport::threads::YIELD_AFTER;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DispatchConfig {
    /// Empty tasks per run (at least 1).
    pub tasks: u64,
    /// Timed repetitions of each case (interleaved, after one untimed).
    pub repeat: usize,
}

impl Default for DispatchConfig {
    fn default() -> Self {
        Self {
            tasks: 20_000,
            repeat: 9,
        }
    }
}

crate::setters!(DispatchConfig {
    tasks: u64,
    repeat: usize
});

impl DispatchConfig {
    /// An estimate of the bytes [`run`] holds at its peak: about 96 a task (the job's tasks,
    /// the messages that carry them, the outputs kept for the check).
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::dispatch::DispatchConfig;
    /// assert_eq!(DispatchConfig::default().tasks(1000).memory_needed(), 96_000);
    /// ```
    pub fn memory_needed(&self) -> u128 {
        u128::from(self.tasks) * 96
    }
}

/// The parameters and per-task figures of a dispatch benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DispatchDetails {
    /// Empty tasks per run.
    pub tasks: u64,
    /// Median microseconds per task, one task per request (self-scheduling).
    pub self_scheduling_us_per_task: f64,
    /// Median microseconds per task with EFP batches.
    pub efp_us_per_task: f64,
    /// Median microseconds per round trip of the bare loop.
    pub bare_loop_us_per_round_trip: f64,
}

/// Polls `rx` until a message comes, as an endpoint of the threads transport does: spinning
/// for [`YIELD_AFTER`], then yielding the core between batches of 32 checks. `None` when the
/// sender is gone.
fn poll_channel<T>(rx: &Receiver<T>) -> Option<T> {
    let start = Instant::now();
    loop {
        for _ in 0..32 {
            match rx.try_recv() {
                Ok(t) => return Some(t),
                Err(TryRecvError::Empty) => std::hint::spin_loop(),
                Err(TryRecvError::Disconnected) => return None,
            }
        }
        if start.elapsed() >= YIELD_AFTER {
            std::thread::yield_now();
        }
    }
}

/// The floor that dispatch over the threads transport is measured against: `round_trips`
/// request–reply exchanges between the calling thread and another over two bare crossbeam
/// channels, each side polling its channel as an endpoint does.
///
/// # Errors
/// [`BenchError::Check`] when the other thread failed.
///
/// # Example
/// ```
/// hetlb_bench::dispatch::request_reply_floor(100).unwrap();
/// ```
pub fn request_reply_floor(round_trips: u64) -> Result<(), BenchError> {
    let (to_worker, requests) = channel::unbounded::<u64>();
    let (to_master, replies) = channel::unbounded::<u64>();
    let worker = std::thread::spawn(move || {
        for _ in 0..round_trips {
            let Some(task) = poll_channel(&requests) else {
                return;
            };
            if to_master.send(task + 1).is_err() {
                return;
            }
        }
    });
    let answered = (0..round_trips)
        .all(|i| to_worker.send(i).is_ok() && poll_channel(&replies) == Some(i + 1));
    if answered && worker.join().is_ok() {
        Ok(())
    } else {
        Err(BenchError::Check(
            "the bare request–reply loop's worker failed".into(),
        ))
    }
}

fn run_policy(job: &Arc<Synthetic>, policy: Policy) -> Result<f64, BenchError> {
    let mut cfg = RunConfig::new(policy);
    cfg.capacities = Some(vec![1.0, 1.0]);
    cfg.master_computes = false;
    let (out, secs) = timed(|| run_threads(Arc::clone(job), 2, &cfg));
    let out = out?;
    if out.outputs.len() as u64 != job.tasks() {
        return Err(BenchError::Check(format!(
            "the run returned {} outputs",
            out.outputs.len()
        )));
    }
    Ok(secs)
}

/// Times dispatching `tasks` empty tasks from a master that only dispatches to one worker,
/// one per request and in EFP batches, against [`request_reply_floor`] with as many round
/// trips; `progress(done, total)` is told after every timed run.
///
/// # Errors
/// [`BenchError::Setting`] for no task or no repetition; [`BenchError::Runtime`] when a run
/// fails; [`BenchError::Check`] when a run returns the wrong number of outputs.
///
/// # Example
/// ```
/// use hetlb_bench::dispatch::{self, DispatchConfig};
/// let cfg = DispatchConfig::default().tasks(200).repeat(1);
/// let r = dispatch::run(&cfg, &mut |_, _| {}).unwrap();
/// assert_eq!(r.comparisons[0].items, Some(200));
/// ```
pub fn run(
    cfg: &DispatchConfig,
    progress: Progress<'_>,
) -> Result<Report<DispatchDetails>, BenchError> {
    if cfg.tasks == 0 {
        return Err(BenchError::setting("tasks", "must be at least 1"));
    }
    let tasks = cfg.tasks;
    let job = Arc::new(Synthetic::new(tasks, 0));
    let cases = vec![
        Case::new("bare", || {
            let (r, secs) = timed(|| request_reply_floor(tasks));
            r.map(|()| secs)
        }),
        Case::new("self", || run_policy(&job, Policy::SelfScheduling)),
        Case::new("efp", || run_policy(&job, Policy::Efp)),
    ];
    let samples = interleave(cfg.repeat, 1, cases, progress)?;
    let per = |name: &str| samples.median(name) / tasks as f64 * 1e6;
    let comparisons = vec![
        Comparison::of(
            &samples,
            "threads",
            ("self", "threads, one task per request"),
            ("bare", "bare crossbeam request–reply"),
            Some(2.0),
        )
        .per(tasks),
        Comparison::of(
            &samples,
            "efp",
            ("efp", "threads, EFP batches"),
            ("bare", "bare crossbeam request–reply"),
            None,
        )
        .per(tasks),
    ];
    Ok(Report::new(
        "dispatch",
        Machine::here(2),
        cfg.repeat,
        DispatchDetails {
            tasks,
            self_scheduling_us_per_task: per("self"),
            efp_us_per_task: per("efp"),
            bare_loop_us_per_round_trip: per("bare"),
        },
        comparisons,
    ))
}
