//! What a run reports: the paper's per-processor table (Aldasht, Ortega & Puntonet, Tables 2–6) and
//! more.

use hetlb_core::rules::self_scheduling::Policy;
use serde::{Deserialize, Serialize};

/// One processor's line of the report, like a row of the paper's Tables 2–6.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProcessorReport {
    /// The processor's index (its rank).
    pub processor: usize,
    /// Its EFP role: `P0` is the master, `P1` … the workers by increasing capacity.
    pub role: String,
    /// Work units done (rows of C for matrix multiplication); results accepted by the master.
    pub rows: u64,
    /// Tasks done.
    pub tasks: u64,
    /// Batches received.
    pub batches: u64,
    /// Seconds from the start until it was stopped (the master: the makespan).
    pub t_exec: f64,
    /// Seconds computing.
    pub t_comp: f64,
    /// Seconds in communication (the master: attending to messages).
    pub t_comm: f64,
    /// Seconds waiting (a worker: for the master to attend to it; the master: for results).
    pub t_wait: f64,
    /// The capacity it started with (calibrated tasks per second, or given).
    pub capacity: f64,
    /// Why it failed, if it did.
    pub failed: Option<String>,
}

/// One batch decision of the master, for following the balancer over time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Dispatch {
    /// Seconds since the start.
    pub at: f64,
    /// The processor served.
    pub processor: usize,
    /// Tasks sent; 0 when the processor was stopped.
    pub tasks: u64,
    /// Its speed factor `S = θ/θ_0` at that moment.
    pub speed_factor: f64,
    /// Tasks left in the queue after this batch.
    pub queue: u64,
}

/// What went wrong during a run that still completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// A task returned an error; it was put back.
    TaskError,
    /// A processor panicked; its tasks were put back and it took no more.
    Panic,
    /// A processor's thread ended unexpectedly.
    Lost,
    /// A stopped processor never sent its totals.
    NoTotals,
    /// A processor holding tasks sent nothing, not even a heartbeat, for the timeout; its
    /// tasks were put back.
    Silent,
}

/// A failure the run survived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// The processor.
    pub processor: usize,
    /// What happened.
    pub kind: FailureKind,
    /// The task involved, if one.
    pub task: Option<u64>,
    /// The message.
    pub message: String,
}

/// The report of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunReport {
    /// The policy.
    pub policy: Policy,
    /// `threads` or `mpi`.
    pub backend: String,
    /// One line per processor, by index.
    pub processors: Vec<ProcessorReport>,
    /// Tasks in the job (the granularity `G`).
    pub tasks: u64,
    /// Work units in the job (rows).
    pub units: u64,
    /// The name of a unit.
    pub unit: String,
    /// The master.
    pub master: usize,
    /// True when the capacities were measured by calibration.
    pub calibrated: bool,
    /// Seconds from the start until the last result arrived.
    pub makespan: f64,
    /// The ideal makespan: total work ÷ the speed of every processor
    /// ([`RunReport::ideal_makespan`]).
    pub ideal: f64,
    /// `ideal / makespan`.
    pub efficiency: f64,
    /// Every batch decision.
    pub timeline: Vec<Dispatch>,
    /// Failures survived.
    pub failures: Vec<Failure>,
    /// Tasks put back after an error or a failure.
    pub requeued: u64,
    /// Results that arrived for tasks already done, and were dropped.
    pub duplicates_dropped: u64,
}

impl RunReport {
    /// The ideal makespan `W / Σ_i v_i`: the time the job would take if every processor
    /// computed all the time, with no communication or wait, at its speed `v_i`.
    ///
    /// A processor that did work has its measured speed `v_i = w_i / T_comp,i`. One that
    /// did none (an idle master, a worker never served) still counts, at the speed its
    /// capacity implies: `v_i = c_i · Σ_j v_j / Σ_j c_j` over the processors that did
    /// work. Only processors that failed without doing any work are left out. So a run
    /// that leaves a fast processor idle cannot look efficient.
    ///
    /// # Example
    /// ```
    /// use hetlb_runtime::{ProcessorReport, RunReport};
    /// let p = |processor, rows, t_comp, capacity| {
    ///     let mut p = ProcessorReport::default();
    ///     (p.processor, p.rows, p.tasks, p.batches) = (processor, rows, rows, 1);
    ///     (p.t_exec, p.t_comp, p.capacity) = (t_comp, t_comp, capacity);
    ///     p
    /// };
    /// // 30 rows at 3 rows/s and 10 rows at 1 row/s: 40 rows / 4 rows/s = 10 s.
    /// assert_eq!(RunReport::ideal_makespan(&[p(0, 30, 10.0, 3.0), p(1, 10, 10.0, 1.0)]), 10.0);
    /// // An idle processor of capacity 3 beside one doing 10 rows/s at capacity 1: 40 rows/s.
    /// assert_eq!(RunReport::ideal_makespan(&[p(0, 0, 0.0, 3.0), p(1, 40, 4.0, 1.0)]), 1.0);
    /// ```
    pub fn ideal_makespan(processors: &[ProcessorReport]) -> f64 {
        let units: u64 = processors.iter().map(|p| p.rows).sum();
        let worked = |p: &&ProcessorReport| p.rows > 0 && p.t_comp > 0.0;
        let measured: f64 = processors
            .iter()
            .filter(worked)
            .map(|p| p.rows as f64 / p.t_comp)
            .sum();
        let measured_capacity: f64 = processors.iter().filter(worked).map(|p| p.capacity).sum();
        let per_capacity = if measured_capacity > 0.0 {
            measured / measured_capacity
        } else {
            0.0
        };
        let idle: f64 = processors
            .iter()
            .filter(|p| !worked(p) && p.failed.is_none() && p.capacity.is_finite())
            .map(|p| p.capacity.max(0.0) * per_capacity)
            .sum();
        let speed = measured + idle;
        if speed > 0.0 && speed.is_finite() {
            units as f64 / speed
        } else {
            0.0
        }
    }

    /// The spread of the finishing times of the processors that did work:
    /// `(max − min) / max` of their `T_exec`.
    pub fn finish_spread(&self) -> f64 {
        let t: Vec<f64> = self
            .processors
            .iter()
            .filter(|p| p.rows > 0)
            .map(|p| p.t_exec)
            .collect();
        let max = t.iter().copied().fold(0.0, f64::max);
        let min = t.iter().copied().fold(f64::INFINITY, f64::min);
        if max > 0.0 { (max - min) / max } else { 0.0 }
    }
}

/// A finished run: the report and the outputs in task order, each exactly once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunOutcome<O> {
    /// The report.
    pub report: RunReport,
    /// `outputs[i]` is task `i`'s output.
    pub outputs: Vec<O>,
}
