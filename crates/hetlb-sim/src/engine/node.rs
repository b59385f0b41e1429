//! The state of one simulated node.

use std::collections::VecDeque;

/// A node: its FIFO queue of tasks (each task is the time it entered the system), its
/// service epoch, and its accounting.
#[derive(Debug, Clone, Default)]
pub(crate) struct NodeState {
    /// Tasks in FIFO order; the front one is in service.
    pub queue: VecDeque<f64>,
    /// Bumped whenever the task in service is taken away, cancelling its completion.
    pub epoch: u32,
    /// When the current busy period began (valid while the queue is non-empty).
    pub busy_since: f64,
    /// Closed busy time.
    pub busy: f64,
    /// Time of the last completion.
    pub finish: f64,
    pub executed: u64,
    pub sent: u64,
    pub received: u64,
    /// `(time, length)` samples.
    pub series: Vec<(f64, u64)>,
}

impl NodeState {
    pub fn load(&self) -> u64 {
        self.queue.len() as u64
    }
}
