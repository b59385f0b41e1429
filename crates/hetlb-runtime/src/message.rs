//! The messages of the master-worker protocol.
//!
//! ```text
//! rank 0            every rank              master                 worker
//!   Calibrate  ──────►  Calibrated ──► rank 0
//!   Lead (to the fastest) ──────────► master
//!                                          Tasks ───────────────►
//!                                                ◄─────────────── Results (speed data)
//!                                          Tasks / Stop ────────►
//!                                                ◄─────────────── Bye (totals)
//!                                          Tasks (a stopped worker woken) / End ──►
//!   ◄── Finished / Failed (when the master is not rank 0)
//!
//! every rank, all the time:  Alive ──► its coordinator (the leader: ──► everyone)
//! ```

use crate::report::RunOutcome;
use hetlb_core::rules::self_scheduling::Observation;
use serde::{Deserialize, Serialize};

/// What one processor measured over the whole run, sent when it is stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Seconds from the start of the run until the processor was stopped.
    pub t_exec: f64,
    /// Seconds computing.
    pub t_comp: f64,
    /// Seconds in communication.
    pub t_comm: f64,
    /// Seconds waiting for the master.
    pub t_wait: f64,
    /// Tasks the processor ran (successful or not).
    pub tasks_run: u64,
}

/// One message between ranks. `T` is a job's task, `O` its output.
#[derive(Debug, Serialize, Deserialize)]
pub enum Msg<T, O> {
    /// Run `task` repeatedly for `seconds` and report the rate.
    Calibrate {
        /// The sample task.
        task: T,
        /// How long to keep running it.
        seconds: f64,
    },
    /// Tasks per second of the calibration task.
    Calibrated {
        /// The rate.
        rate: f64,
    },
    /// The calibration task failed.
    CalibrationFailed {
        /// Why.
        message: String,
    },
    /// You are the master; here are the capacities.
    Lead {
        /// One per processor.
        capacities: Vec<f64>,
        /// True when they were measured.
        calibrated: bool,
    },
    /// A batch of tasks.
    Tasks {
        /// `(task number, task)` pairs.
        tasks: Batch<T>,
        /// Seconds the request this answers waited before the master attended to it.
        queued_for: f64,
        /// Seconds since the master started the run, when it sent this.
        since_start: f64,
    },
    /// The results of a batch, with the time split the speed factor is computed from.
    Results {
        /// `(task number, output or error)` pairs.
        results: Batch<Result<O, String>>,
        /// The batch's computation, communication and wait.
        obs: Observation,
        /// Set when the processor panicked and will take no more tasks.
        panic: Option<String>,
    },
    /// No more tasks: report your totals.
    Stop {
        /// As in `Tasks`.
        queued_for: f64,
        /// As in `Tasks`.
        since_start: f64,
    },
    /// The run is over: a stopped worker ends.
    End,
    /// A heartbeat: the sender is alive (it may be computing a long task).
    Alive {
        /// True when the sender leads the run (rank 0 while it launches, then the master).
        leading: bool,
    },
    /// A stopped processor's totals (cumulative over the run).
    Bye {
        /// The totals.
        totals: Totals,
    },
    /// A processor's thread ended unexpectedly.
    Gone {
        /// Why, as far as known.
        reason: String,
    },
    /// The finished run, from the master to rank 0.
    Finished(Box<RunOutcome<O>>),
    /// The run failed on the master.
    Failed {
        /// The error.
        message: String,
    },
}

/// `(task number, item)` pairs sent in one message: the tasks of a batch, or their results.
///
/// A single pair is held inline, so the one-task-per-request dispatch of self-scheduling
/// moves its task and its result without a heap allocation; it serialises as a sequence, like
/// a `Vec`.
///
/// # Example
/// ```ignore
/// use hetlb_runtime::message::Batch;
/// let mut b: Batch<&str> = Batch::new();
/// b.push((7, "seven"));
/// assert!(!b.spilled());
/// b.push((8, "eight"));
/// assert_eq!(b.as_slice(), &[(7, "seven"), (8, "eight")]);
/// assert_eq!(b.into_iter().map(|(id, _)| id).sum::<u64>(), 15);
/// ```
pub type Batch<X> = smallvec::SmallVec<[(u64, X); 1]>;
