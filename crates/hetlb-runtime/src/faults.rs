//! Injected faults, to show and test that a run survives them.
//!
//! Faults are counted in the tasks a processor *starts* during the run (calibration does not
//! count), so a fault plan is deterministic in where it strikes even though timing is not.

use serde::{Deserialize, Serialize};

/// The faults one processor will suffer. The default is none.
///
/// # Example
/// ```
/// use hetlb_runtime::ProcessorFaults;
/// let f = ProcessorFaults { panic_on_task: Some(5), ..ProcessorFaults::default() };
/// assert!(!f.is_none());
/// assert!(ProcessorFaults::default().is_none());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessorFaults {
    /// Panic when starting the `k`-th task (1-based): the processor dies and its unfinished
    /// tasks are done elsewhere.
    pub panic_on_task: Option<u64>,
    /// Every `k`-th task started returns an error; the task is put back and done elsewhere.
    pub error_every: Option<u64>,
    /// After completing `k` tasks, stop answering: the master's timeout must detect it.
    pub hang_after: Option<u64>,
}

impl ProcessorFaults {
    /// True when no fault is planned.
    pub fn is_none(&self) -> bool {
        *self == Self::default()
    }
}
