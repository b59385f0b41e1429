//! The master-worker runtime driven for a comparison: EFP and its baselines (Aldasht, Ortega
//! & Puntonet, §§3–4) run in turn on one workload, on threads or on an MPI job; every result
//! checked against a single-threaded reference; one ideal makespan for the workload; each
//! policy's efficiency and speedups.
//!
//! ```
//! use hetlb_core::rules::self_scheduling::Policy;
//! use hetlb_runtime::master_worker::{self, Grain, Settings};
//! use hetlb_runtime::workload::synthetic::Synthetic;
//! use std::sync::Arc;
//! let mut settings = Settings::new(vec![Policy::Efp, Policy::StaticEqual]);
//! settings.capacities = Some(vec![1.0, 1.0, 1.0]); // no calibration
//! let job = Arc::new(Synthetic::new(60, 10));
//! let outcomes = master_worker::on_threads(&job, 3, &settings, &mut |_| None).unwrap();
//! let grain = Grain::per_unit(60);
//! let runs = master_worker::assess(&*job, (60, &grain), &outcomes, &settings, 3, true).unwrap();
//! assert_eq!(runs.len(), 2);
//! assert_eq!(runs[0].max_error, Some(0.0)); // every task's output checked
//! assert!(runs[1].speedup_vs_static.is_some());
//! assert_eq!(runs[0].processors.iter().map(|p| p.rows).sum::<u64>(), 60);
//! ```

use crate::config::{Progress, RunConfig};
use crate::error::{RuntimeError, TaskError};
pub use crate::grain::Grain;
use crate::job::Job;
use crate::report::{ProcessorReport, RunOutcome, RunReport};
use crate::slowdown::Slowdown;
use crate::workload::matmul::MatmulJob;
use crate::workload::synthetic::Synthetic;
use hetlb_core::rules::self_scheduling::Policy;
use serde::Serialize;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// The longest time accepted for a slowdown change, in seconds (about 11.6 days).
pub const MAX_CHANGE_SECONDS: f64 = 1e6;

/// A job whose outputs can be checked against a single-threaded reference.
pub trait Checked: Job {
    /// The largest error of `outputs` against the reference (for a matrix product
    /// `max |C − C_ref|`; for synthetic tasks the number of wrong outputs).
    ///
    /// # Errors
    /// Outputs that do not make a result (a product of the wrong size, say).
    fn check(&self, outputs: &[Self::Output]) -> Result<f64, TaskError>;
    /// What the job computes, for people (`matmul 1000×1000`).
    fn describe(&self) -> String;
}

impl Checked for MatmulJob {
    fn check(&self, outputs: &[Vec<f64>]) -> Result<f64, TaskError> {
        Ok(self.assemble(outputs)?.max_abs_diff(&self.reference()))
    }
    fn describe(&self) -> String {
        let n = self.order();
        format!("matmul {n}×{n}")
    }
}

impl Checked for Synthetic {
    fn check(&self, outputs: &[u64]) -> Result<f64, TaskError> {
        let wrong = outputs
            .iter()
            .enumerate()
            .filter(|(i, o)| self.run(&(*i as u64)).ok() != Some(**o))
            .count();
        Ok(wrong as f64)
    }
    fn describe(&self) -> String {
        format!("synthetic, {} tasks", self.tasks())
    }
}

/// One processor's slowdown factor changed during a run: `PROC:FACTOR@SECONDS`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct SlowdownChange {
    /// The processor.
    pub processor: usize,
    /// Its factor from then on (at least 1).
    pub factor: u32,
    /// Seconds into the run, 0 to [`MAX_CHANGE_SECONDS`].
    pub at: f64,
}

impl FromStr for SlowdownChange {
    type Err = String;

    /// Reads `PROC:FACTOR@SECONDS` (`2:6@0.5`; the seconds may end in `s`).
    fn from_str(spec: &str) -> Result<Self, String> {
        let bad = || format!("'{spec}' is not PROC:FACTOR@SECONDS (e.g. 2:6@0.5)");
        let (proc_factor, at) = spec.split_once('@').ok_or_else(bad)?;
        let (p, f) = proc_factor.split_once(':').ok_or_else(bad)?;
        let processor: usize = p.trim().parse().map_err(|_| bad())?;
        let factor: u32 = f.trim().parse().map_err(|_| bad())?;
        let at: f64 = at.trim().trim_end_matches('s').parse().map_err(|_| bad())?;
        if factor == 0 {
            return Err("the factor must be at least 1".into());
        }
        if !(at.is_finite() && (0.0..=MAX_CHANGE_SECONDS).contains(&at)) {
            return Err(format!(
                "the time must be between 0 and {MAX_CHANGE_SECONDS} seconds"
            ));
        }
        Ok(Self {
            processor,
            factor,
            at,
        })
    }
}

/// The workloads a comparison runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Workload {
    /// `C = A·B` split by rows ([`MatmulJob`]).
    Matmul,
    /// CPU-bound tasks of a given cost ([`Synthetic`]).
    Synthetic,
}

/// What every policy of a comparison runs with.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Settings {
    /// The policies, in the order they run.
    pub policies: Vec<Policy>,
    /// Slowdown factor per processor (`None`: all 1).
    pub slowdowns: Option<Vec<u32>>,
    /// One processor's factor changed during each run.
    pub change: Option<SlowdownChange>,
    /// Given capacities, one per processor, instead of a calibration.
    pub capacities: Option<Vec<f64>>,
    /// Time each processor runs the calibration task.
    pub calibration: Duration,
    /// Silence after which a worker is given up.
    pub timeout: Duration,
}

/// A setting that does not fit the processors.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{setting}: {message}")]
#[non_exhaustive]
pub struct SettingsError {
    /// The setting (`procs`, `slowdown`, `capacities`, `slowdown_change`).
    pub setting: &'static str,
    /// Why.
    pub message: String,
}

impl Settings {
    /// `policies` with equal processors, a calibration of 100 ms and a timeout of 60 s.
    #[must_use]
    pub fn new(policies: Vec<Policy>) -> Self {
        Self {
            policies,
            slowdowns: None,
            change: None,
            capacities: None,
            calibration: Duration::from_millis(100),
            timeout: Duration::from_secs(60),
        }
    }

    /// Checks the per-processor lists and the change against `workers` processors.
    ///
    /// # Errors
    /// [`SettingsError`] naming the setting.
    pub fn check(&self, workers: usize) -> Result<(), SettingsError> {
        let bad = |setting, message: String| Err(SettingsError { setting, message });
        if workers == 0 {
            return bad("procs", "at least one processor is needed".into());
        }
        if let Some(s) = &self.slowdowns
            && s.len() != workers
        {
            return bad(
                "slowdown",
                format!("{} values given for {workers} processors", s.len()),
            );
        }
        if let Some(c) = &self.capacities
            && c.len() != workers
        {
            return bad(
                "capacities",
                format!("{} values given for {workers} processors", c.len()),
            );
        }
        if let Some(c) = self.change
            && c.processor >= workers
        {
            return bad(
                "slowdown_change",
                format!(
                    "processor {} does not exist ({workers} processors)",
                    c.processor
                ),
            );
        }
        Ok(())
    }

    /// Bytes a comparison holds at its peak for `workload` of `size` (matrix order or
    /// tasks), `checked` or not against the reference.
    pub fn memory(&self, workload: Workload, size: u64, checked: bool) -> u128 {
        let n = u128::from(size);
        let runs = self.policies.len() as u128;
        match workload {
            // A and B, every policy's product, the reference and the assembled product, and
            // the rows of A in flight.
            Workload::Matmul => {
                let checks = if checked { 2 } else { 0 };
                8 * n * n * (3 + runs + checks)
            }
            // Per task: its queue entry, attempts, result slot and output, for every run,
            // and the one-worker reference.
            Workload::Synthetic => n * (48 * runs + 16),
        }
    }

    /// Processor `p`'s slowdown factor before any change.
    pub fn slowdown_of(&self, p: usize) -> u32 {
        self.slowdowns
            .as_ref()
            .and_then(|s| s.get(p).copied())
            .unwrap_or(1)
    }

    /// The slowdowns of `workers` processors, the change included.
    pub fn slowdowns(&self, workers: usize) -> Vec<Slowdown> {
        let mut s: Vec<Slowdown> = (0..workers)
            .map(|i| Slowdown::constant(self.slowdown_of(i)))
            .collect();
        if let Some(c) = self.change
            && let Some(x) = s.get_mut(c.processor)
        {
            *x = x.then(Duration::from_secs_f64(c.at), c.factor);
        }
        s
    }

    /// The configuration of `policy`'s run on `workers` processors.
    pub fn config(&self, policy: Policy, workers: usize) -> RunConfig {
        let mut cfg = RunConfig::new(policy);
        cfg.slowdowns = self.slowdowns(workers);
        cfg.capacities = self.capacities.clone();
        cfg.calibration = self.calibration;
        cfg.timeout = self.timeout;
        cfg
    }

    /// The factor processor `p` ran with after the change, when the change came before it
    /// stopped.
    pub fn changed(&self, p: &ProcessorReport) -> Option<u32> {
        match self.change {
            Some(c) if c.processor == p.processor && c.at < p.t_exec => Some(c.factor),
            _ => None,
        }
    }
}

/// Why a comparison failed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CompareError {
    /// A policy's run failed.
    #[error("{policy} run failed")]
    Run {
        /// The policy.
        policy: Policy,
        /// Why.
        #[source]
        source: RuntimeError,
    },
    /// The one-worker reference failed.
    #[error("one-worker reference")]
    Reference(#[source] RuntimeError),
    /// A run's outputs do not make a result.
    #[error("result")]
    Result(#[source] TaskError),
}

/// Runs `policies` in turn, each with its configuration from `settings` and the progress
/// `progress(policy)` returns, by `execute` (a run on threads or on MPI; `None` on ranks
/// that do not lead).
fn in_turn<O>(
    settings: &Settings,
    workers: usize,
    progress: &mut dyn FnMut(Policy) -> Option<Progress>,
    mut execute: impl FnMut(&RunConfig) -> Result<Option<RunOutcome<O>>, RuntimeError>,
) -> Result<Vec<RunOutcome<O>>, CompareError> {
    let mut outcomes = Vec::new();
    for &policy in &settings.policies {
        let mut cfg = settings.config(policy, workers);
        cfg.progress = progress(policy);
        let outcome = execute(&cfg).map_err(|source| CompareError::Run { policy, source })?;
        outcomes.extend(outcome);
    }
    Ok(outcomes)
}

/// Runs `job` under every policy of `settings` in turn on `workers` threads; before each run
/// `progress(policy)` may return a callback for its tasks.
///
/// # Errors
/// [`CompareError::Run`] naming the policy whose run failed.
pub fn on_threads<J>(
    job: &Arc<J>,
    workers: usize,
    settings: &Settings,
    progress: &mut dyn FnMut(Policy) -> Option<Progress>,
) -> Result<Vec<RunOutcome<J::Output>>, CompareError>
where
    J: Job + 'static,
    J::Task: 'static,
    J::Output: 'static,
{
    in_turn(settings, workers, progress, |cfg| {
        crate::run_threads(Arc::clone(job), workers, cfg).map(Some)
    })
}

/// Runs `job` under every policy of `settings` in turn on the ranks of `mpi` — every rank
/// calls it — and returns the outcomes on rank 0, `None` on the others; before each run
/// `progress(policy)` may return a callback for its tasks.
///
/// # Errors
/// [`CompareError::Run`] naming the policy whose run failed on this rank. Other ranks may
/// then be waiting for messages that will never come: end the job
/// ([`hetlb_transport::mpi::Mpi::abort`]) rather than return.
#[cfg(feature = "mpi")]
pub fn on_mpi<J>(
    mpi: &hetlb_transport::mpi::Mpi<'_>,
    job: &J,
    settings: &Settings,
    progress: &mut dyn FnMut(Policy) -> Option<Progress>,
) -> Result<Option<Vec<RunOutcome<J::Output>>>, CompareError>
where
    J: Job,
    J::Task: hetlb_transport::Message,
    J::Output: hetlb_transport::Message,
{
    let outcomes = in_turn(settings, mpi.size(), progress, |cfg| {
        crate::run_mpi(mpi, job, cfg)
    })?;
    Ok((mpi.rank() == 0).then_some(outcomes))
}

/// The processors given up as silent in any of `outcomes` (they may still be stopped or
/// hung).
pub fn silent<O>(outcomes: &[RunOutcome<O>]) -> Vec<usize> {
    let mut silent: Vec<usize> = outcomes
        .iter()
        .flat_map(|o| &o.report.failures)
        .filter(|f| f.kind == crate::FailureKind::Silent)
        .map(|f| f.processor)
        .collect();
    silent.sort_unstable();
    silent.dedup();
    silent
}

/// One processor of a policy's run, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ProcessorRow {
    /// The processor.
    pub processor: usize,
    /// `P0`…, by speed (the master is `P0`).
    pub role: String,
    /// Its slowdown factor.
    pub slowdown: u32,
    /// Its factor after the change, when the change came before it stopped.
    pub slowdown_after: Option<u32>,
    /// Units (rows) computed.
    pub rows: u64,
    /// Tasks computed.
    pub tasks: u64,
    /// Batches received.
    pub batches: u64,
    /// Seconds from the start to its last result.
    pub t_exec: f64,
    /// Seconds computing.
    pub t_comp: f64,
    /// Seconds communicating.
    pub t_comm: f64,
    /// Seconds waiting.
    pub t_wait: f64,
    /// The capacity the master used.
    pub capacity: f64,
    /// Why it was given up, when it was.
    pub failed: Option<String>,
}

/// One policy's run judged: the per-processor table of Aldasht, Ortega & Puntonet's Tables
/// 2–6, the makespan beside the workload's ideal, the speedups, the check.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PolicyReport {
    /// What the job computes ([`Checked::describe`]).
    pub workload: String,
    /// Matrix order or tasks, as given.
    pub size: u64,
    /// Processors, the master included.
    pub workers: usize,
    /// The policy.
    pub policy: Policy,
    /// `threads` or `mpi`.
    pub backend: String,
    /// How many tasks, and why.
    pub granularity: Grain,
    /// The master's processor.
    pub master: usize,
    /// Whether capacities were calibrated (or given).
    pub calibrated: bool,
    /// Every processor.
    pub processors: Vec<ProcessorRow>,
    /// Seconds of the run.
    pub makespan: f64,
    /// The workload's ideal makespan, the same for every policy run on it.
    pub ideal: f64,
    /// How `ideal` was obtained, for people.
    pub ideal_basis: String,
    /// `ideal ÷ makespan` (0 for a zero makespan).
    pub efficiency: f64,
    /// (latest − earliest finish) ÷ makespan.
    pub finish_spread: f64,
    /// Seconds of every task in order on one thread without slowdown, when checked.
    pub one_worker: Option<f64>,
    /// The one-worker time over the makespan.
    pub speedup: Option<f64>,
    /// The static policy's makespan over this one, when static ran.
    pub speedup_vs_static: Option<f64>,
    /// The largest error against the reference ([`Checked::check`]), when checked.
    pub max_error: Option<f64>,
    /// Failures survived.
    pub failures: Vec<crate::Failure>,
    /// Tasks put back after a failure.
    pub requeued: u64,
    /// Duplicate results dropped.
    pub duplicates_dropped: u64,
    /// Every dispatch, in order.
    pub timeline: Vec<crate::Dispatch>,
}

/// Judges `outcomes` of `job` (of `size`, cut as `grain`) on `workers` processors: with
/// `check`, times the one-worker reference and checks every outcome's outputs against the
/// reference; computes one ideal makespan for the workload, and each run's efficiency and
/// speedups.
///
/// The ideal: with the one-worker time `T1` and the slowdown factors, `T1 ÷ Σ 1/s_i` over
/// the `min(P, cores)` fastest processors on threads (more threads than cores only share the
/// cores) and over all on MPI. Without `T1` it is `W ÷ Σ v_i` with each processor's speed
/// `v_i` pooled over every run (rows ÷ computing seconds), as
/// [`RunReport::ideal_makespan`] counts it.
///
/// # Errors
/// [`CompareError::Reference`] when the reference fails, [`CompareError::Result`] for
/// outputs that do not make a result.
pub fn assess<J: Checked>(
    job: &J,
    (size, grain): (u64, &Grain),
    outcomes: &[RunOutcome<J::Output>],
    settings: &Settings,
    workers: usize,
    check: bool,
) -> Result<Vec<PolicyReport>, CompareError> {
    let one = if check {
        Some(
            crate::run_sequential(job)
                .map_err(CompareError::Reference)?
                .1,
        )
    } else {
        None
    };
    let mut errors = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        errors.push(if check {
            Some(job.check(&o.outputs).map_err(CompareError::Result)?)
        } else {
            None
        });
    }
    let reports: Vec<&RunReport> = outcomes.iter().map(|o| &o.report).collect();
    let (ideal, ideal_basis) = workload_ideal(one, settings, workers, &reports);
    let static_makespan = reports
        .iter()
        .find(|r| r.policy == Policy::StaticEqual)
        .map(|r| r.makespan);
    Ok(reports
        .iter()
        .zip(errors)
        .map(|(r, max_error)| PolicyReport {
            workload: job.describe(),
            size,
            workers,
            policy: r.policy,
            backend: r.backend.clone(),
            granularity: grain.clone(),
            master: r.master,
            calibrated: r.calibrated,
            processors: r
                .processors
                .iter()
                .map(|p| ProcessorRow {
                    processor: p.processor,
                    role: p.role.clone(),
                    slowdown: settings.slowdown_of(p.processor),
                    slowdown_after: settings.changed(p),
                    rows: p.rows,
                    tasks: p.tasks,
                    batches: p.batches,
                    t_exec: p.t_exec,
                    t_comp: p.t_comp,
                    t_comm: p.t_comm,
                    t_wait: p.t_wait,
                    capacity: p.capacity,
                    failed: p.failed.clone(),
                })
                .collect(),
            makespan: r.makespan,
            ideal,
            ideal_basis: ideal_basis.clone(),
            efficiency: if r.makespan > 0.0 {
                ideal / r.makespan
            } else {
                0.0
            },
            finish_spread: r.finish_spread(),
            one_worker: one,
            speedup: one.map(|t| t / r.makespan),
            speedup_vs_static: static_makespan.map(|s| s / r.makespan),
            max_error,
            failures: r.failures.clone(),
            requeued: r.requeued,
            duplicates_dropped: r.duplicates_dropped,
            timeline: r.timeline.clone(),
        })
        .collect())
}

/// One ideal makespan for the workload and how it was obtained (see [`assess`]).
fn workload_ideal(
    one: Option<f64>,
    settings: &Settings,
    workers: usize,
    reports: &[&RunReport],
) -> (f64, String) {
    if let Some(t1) = one.filter(|t| *t > 0.0) {
        let mut speeds: Vec<f64> = (0..workers)
            .map(|p| 1.0 / f64::from(settings.slowdown_of(p)))
            .collect();
        speeds.sort_by(|a, b| b.total_cmp(a));
        let on_threads = reports.first().is_none_or(|r| r.backend == "threads");
        let cores = if on_threads {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            workers
        };
        let used = workers.min(cores);
        let speed: f64 = speeds.iter().take(used).sum();
        let basis = format!(
            "one worker's time {t1:.3} s ÷ Σ 1/slowdown over the {used} fastest of {workers} \
             processors{}",
            if used < workers {
                format!(" (they share {cores} cores)")
            } else {
                String::new()
            }
        );
        return (t1 / speed, basis);
    }
    let mut pooled: Vec<ProcessorReport> = Vec::new();
    for r in reports {
        for p in &r.processors {
            match pooled.iter_mut().find(|q| q.processor == p.processor) {
                Some(q) => {
                    q.rows += p.rows;
                    q.t_comp += p.t_comp;
                    q.failed = q.failed.take().and(p.failed.clone());
                }
                None => pooled.push(p.clone()),
            }
        }
    }
    let units: u64 = reports
        .first()
        .map_or(0, |r| r.processors.iter().map(|p| p.rows).sum());
    // `ideal_makespan` divides the pooled rows by the pooled speed: scale back to one run.
    let pooled_ideal = RunReport::ideal_makespan(&pooled);
    let pooled_rows: u64 = pooled.iter().map(|p| p.rows).sum();
    let ideal = if pooled_rows > 0 {
        pooled_ideal * units as f64 / pooled_rows as f64
    } else {
        0.0
    };
    (
        ideal,
        "work ÷ Σ speed, each processor's speed pooled over every run of the command".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_read_and_checked() {
        let c: SlowdownChange = "2:6@0.5s".parse().unwrap();
        assert_eq!((c.processor, c.factor, c.at), (2, 6, 0.5));
        assert_eq!(
            "2:0@1".parse::<SlowdownChange>().unwrap_err(),
            "the factor must be at least 1"
        );
        assert!(
            "x".parse::<SlowdownChange>()
                .unwrap_err()
                .contains("PROC:FACTOR@SECONDS")
        );
        let mut s = Settings::new(vec![Policy::Efp]);
        s.change = Some(c);
        assert_eq!(s.check(2).unwrap_err().setting, "slowdown_change");
        assert!(s.check(3).is_ok());
    }

    #[test]
    fn lists_must_fit_the_processors() {
        let mut s = Settings::new(vec![Policy::Efp]);
        s.slowdowns = Some(vec![1, 3]);
        assert_eq!(
            s.check(3).unwrap_err().to_string(),
            "slowdown: 2 values given for 3 processors"
        );
        assert_eq!(s.slowdown_of(1), 3);
        assert_eq!(s.config(Policy::Efp, 2).slowdowns.len(), 2);
    }

    #[test]
    fn a_wrong_output_is_counted() {
        let job = Synthetic::new(4, 3);
        let good: Vec<u64> = (0..4).map(|i| job.run(&i).unwrap()).collect();
        assert_eq!(job.check(&good).unwrap(), 0.0);
        let mut bad = good.clone();
        bad[2] ^= 1;
        assert_eq!(job.check(&bad).unwrap(), 1.0);
    }
}
