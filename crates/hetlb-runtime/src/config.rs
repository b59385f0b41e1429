//! How a run is set up.

use crate::error::RunConfigError;
use crate::faults::ProcessorFaults;
use crate::slowdown::Slowdown;
use hetlb_core::rules::self_scheduling::{EfpParams, Policy};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Called by the master with `(tasks done, tasks in all)` after every result.
pub type Progress = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// The settings of one run. Every rank of an MPI run must use the same settings.
///
/// # Example
/// ```
/// use hetlb_runtime::{RunConfig, Slowdown};
/// use hetlb_core::rules::self_scheduling::Policy;
/// let mut cfg = RunConfig::new(Policy::Efp);
/// cfg.slowdowns = vec![Slowdown::constant(1), Slowdown::constant(3)];
/// assert!(cfg.validate(2).is_ok());
/// assert!(cfg.validate(3).is_err()); // two slowdowns for three workers
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct RunConfig {
    /// EFP or a baseline.
    pub policy: Policy,
    /// EFP's batch-size tuning.
    pub params: EfpParams,
    /// Given capacities, one per processor; `None` to measure them by calibration.
    pub capacities: Option<Vec<f64>>,
    /// How long each processor runs the calibration task, one processor at a time, before
    /// the run.
    pub calibration: Duration,
    /// Silence after which a processor is given up: a worker that sends nothing, not even a
    /// heartbeat, for this long while holding tasks has its tasks done by the others; a
    /// master silent this long makes every other processor end the run with an error.
    /// Processors send heartbeats while they compute, so a long task is never silence.
    pub timeout: Duration,
    /// A task that returns an error is tried at most this many times in all.
    pub max_attempts: u32,
    /// Emulated slowdown per processor (empty: none). The balancer never reads it.
    pub slowdowns: Vec<Slowdown>,
    /// Injected faults per processor (empty: none).
    pub faults: Vec<ProcessorFaults>,
    /// Whether the master computes tasks too, as in EFP (Aldasht, Ortega & Puntonet, §3). Without
    /// it the master only dispatches, which isolates the cost of dispatching.
    pub master_computes: bool,
    /// Progress callback, run on the master.
    pub progress: Option<Progress>,
}

impl fmt::Debug for RunConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunConfig")
            .field("policy", &self.policy)
            .field("params", &self.params)
            .field("capacities", &self.capacities)
            .field("calibration", &self.calibration)
            .field("timeout", &self.timeout)
            .field("max_attempts", &self.max_attempts)
            .field("slowdowns", &self.slowdowns)
            .field("faults", &self.faults)
            .field("master_computes", &self.master_computes)
            .finish_non_exhaustive()
    }
}

impl RunConfig {
    /// Defaults: calibration 100 ms per processor, timeout 60 s, 3 attempts per task, no
    /// slowdown, no fault, the master computes.
    pub fn new(policy: Policy) -> Self {
        Self {
            policy,
            params: EfpParams::default(),
            capacities: None,
            calibration: Duration::from_millis(100),
            timeout: Duration::from_secs(60),
            max_attempts: 3,
            slowdowns: Vec::new(),
            faults: Vec::new(),
            master_computes: true,
            progress: None,
        }
    }

    /// Checks the settings against `processors` processors.
    ///
    /// # Errors
    /// The first inconsistency found, as a [`RunConfigError`].
    pub fn validate(&self, processors: usize) -> Result<(), RunConfigError> {
        if processors == 0 {
            return Err(RunConfigError::NoWorkers);
        }
        let lengths = [
            ("slowdown", self.slowdowns.len()),
            ("faults", self.faults.len()),
            ("capacities", self.capacities.as_ref().map_or(0, Vec::len)),
        ];
        for (setting, given) in lengths {
            if given != 0 && given != processors {
                return Err(RunConfigError::Length {
                    setting,
                    given,
                    workers: processors,
                });
            }
        }
        if let Some(worker) = self
            .slowdowns
            .iter()
            .position(|s| s.factor == 0 || s.change.is_some_and(|c| c.1 == 0))
        {
            return Err(RunConfigError::ZeroSlowdown { worker });
        }
        if let Some(caps) = &self.capacities {
            if caps.is_empty() {
                return Err(RunConfigError::Length {
                    setting: "capacities",
                    given: 0,
                    workers: processors,
                });
            }
            if let Some((worker, &value)) = caps
                .iter()
                .enumerate()
                .find(|(_, c)| !(c.is_finite() && **c > 0.0))
            {
                return Err(RunConfigError::Capacity { worker, value });
            }
        }
        if self.timeout.is_zero() {
            return Err(RunConfigError::Duration("timeout"));
        }
        if self.max_attempts == 0 {
            return Err(RunConfigError::Attempts);
        }
        Ok(())
    }

    /// Processor `p`'s slowdown.
    pub fn slowdown(&self, p: usize) -> Slowdown {
        self.slowdowns.get(p).copied().unwrap_or_default()
    }

    /// Processor `p`'s faults.
    pub fn faults(&self, p: usize) -> ProcessorFaults {
        self.faults.get(p).copied().unwrap_or_default()
    }
}
