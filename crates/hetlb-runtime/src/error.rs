//! What can go wrong in a run.

use hetlb_core::rules::self_scheduling::SchedulingError;
use hetlb_transport::TransportError;
use std::fmt;
use thiserror::Error;

/// Why a run could not complete.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RuntimeError {
    /// A message could not be moved.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// A processor sent nothing, not even a heartbeat, for longer than the timeout while it
    /// was expected to answer (the master reports such a worker as a survived
    /// [`FailureKind::Silent`](crate::FailureKind::Silent) failure).
    #[error(
        "processor {processor} sent nothing for {seconds:.1} s while holding {tasks} task(s): \
         it has stopped answering (timeout {timeout:.1} s)"
    )]
    Unresponsive {
        /// The silent processor.
        processor: usize,
        /// How long it has been silent.
        seconds: f64,
        /// How many tasks it holds.
        tasks: usize,
        /// The timeout in force.
        timeout: f64,
    },
    /// The master (or, before it is chosen, rank 0) sent nothing, not even a heartbeat, for
    /// longer than the timeout.
    #[error(
        "processor {processor}, which leads the run, sent nothing for {seconds:.1} s: it has \
         stopped answering (timeout {timeout:.1} s)"
    )]
    MasterSilent {
        /// The silent processor.
        processor: usize,
        /// How long it has been silent.
        seconds: f64,
        /// The timeout in force.
        timeout: f64,
    },
    /// A task kept failing.
    #[error("task {task} failed {attempts} times; last error: {error}")]
    TaskFailed {
        /// The task.
        task: u64,
        /// How many times it was tried.
        attempts: u32,
        /// The last error it returned.
        error: String,
    },
    /// Every processor that could run the remaining tasks has failed.
    #[error("no processor is left to run the {left} remaining task(s)")]
    NoProcessorLeft {
        /// Tasks not done.
        left: u64,
    },
    /// A processor could not run the calibration task.
    #[error("calibration failed on processor {processor}: {message}")]
    Calibration {
        /// The processor.
        processor: usize,
        /// What happened.
        message: String,
    },
    /// The run failed on another rank, which reported why.
    #[error("{message} (reported by processor {processor})")]
    Remote {
        /// The rank that failed the run.
        processor: usize,
        /// Its error.
        message: String,
    },
    /// The configuration is inconsistent.
    #[error(transparent)]
    Config(#[from] RunConfigError),
    /// A scheduling parameter is invalid.
    #[error(transparent)]
    Scheduling(#[from] SchedulingError),
    /// A message arrived that the protocol does not allow at this point.
    #[error("protocol error: {0}")]
    Protocol(String),
}

/// An inconsistent run configuration. Each variant names the setting at fault, so a command
/// line can print it after the option it came from.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RunConfigError {
    /// No processors.
    #[error("workers: at least one worker is needed")]
    NoWorkers,
    /// A per-processor list of the wrong length.
    #[error("{setting}: {given} values given for {workers} workers")]
    Length {
        /// The setting (`slowdown`, `capacities`, `faults`).
        setting: &'static str,
        /// How many values were given.
        given: usize,
        /// How many processors there are.
        workers: usize,
    },
    /// A slowdown factor of zero.
    #[error("slowdown: factor of worker {worker} is 0; factors are whole numbers from 1")]
    ZeroSlowdown {
        /// The processor.
        worker: usize,
    },
    /// A capacity that is not positive and finite.
    #[error("capacities: value of worker {worker} is {value}; capacities must be positive")]
    Capacity {
        /// The processor.
        worker: usize,
        /// The value.
        value: f64,
    },
    /// A zero or non-finite duration where a positive one is needed.
    #[error("{0}: must be positive")]
    Duration(&'static str),
    /// `max_attempts` of zero.
    #[error("attempts: at least one attempt per task is needed")]
    Attempts,
}

/// The error a task returns; it travels back to the master as text.
///
/// # Example
/// ```
/// use hetlb_runtime::TaskError;
/// let e = TaskError::new(format!("row {} is empty", 3));
/// assert_eq!(e.to_string(), "row 3 is empty");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskError(String);

impl TaskError {
    /// An error with this message.
    pub fn new(message: impl fmt::Display) -> Self {
        Self(message.to_string())
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TaskError {}

impl From<String> for TaskError {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<&str> for TaskError {
    fn from(s: &str) -> Self {
        Self(s.to_string())
    }
}
