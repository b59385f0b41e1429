//! The state of one simulated node.

use super::tasks::{QueueFull, TaskQueue};
use rand_pcg::Pcg64;

/// A node: its FIFO queue of tasks (each task is the time it entered the system), its
/// service epoch, its random streams and its accounting.
///
/// Laid out in three cache lines by use, so that an event touches one or two of them: the
/// first holds what every completion reads and writes (with the first tasks of the queue
/// inline), the second what an arrival needs, the third the service stream and the model's
/// parameter of the node (used when a service starts) and what is rarely touched.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub(crate) struct NodeState {
    /// Tasks in FIFO order; the front one is in service.
    pub queue: TaskQueue,
    /// Bumped whenever the task in service is taken away, cancelling its completion.
    pub epoch: u32,
    /// The load changed since the last status report (set only when reports are made).
    pub changed: bool,
    pub executed: u64,
    /// Time of the last completion.
    pub finish: f64,

    /// The node's stream of Poisson arrivals.
    pub arrival_rng: Pcg64,
    /// Arrivals still to come.
    pub arrivals_left: u64,
    /// Mean time between arrivals, `1 / rate`.
    pub arrival_mean: f64,
    /// Closed busy time.
    pub busy: f64,
    /// When the current busy period began (valid while the queue is non-empty).
    pub busy_since: f64,

    /// The node's stream of service times.
    pub service_rng: Pcg64,
    /// What the node model's service time reads of this node
    /// ([`NodeModel::service_parameter`](crate::model::NodeModel::service_parameter)), kept
    /// beside its stream.
    pub service_parameter: f64,
    pub received: u64,
    pub sent: u64,
}

impl NodeState {
    /// A node holding `initial` tasks that entered at time 0.
    ///
    /// # Errors
    /// [`QueueFull`] when `initial` is above [`TaskQueue::MAX`].
    pub fn new(
        initial: u64,
        service_rng: Pcg64,
        service_parameter: f64,
        arrival_rng: Pcg64,
    ) -> Result<Self, QueueFull> {
        Ok(Self {
            queue: TaskQueue::repeat(0.0, initial)?,
            epoch: 0,
            changed: false,
            executed: 0,
            finish: 0.0,
            arrival_rng,
            arrivals_left: 0,
            arrival_mean: f64::INFINITY,
            busy: 0.0,
            busy_since: 0.0,
            service_rng,
            service_parameter,
            received: 0,
            sent: 0,
        })
    }

    pub fn load(&self) -> u64 {
        self.queue.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_cache_lines() {
        assert_eq!(std::mem::size_of::<NodeState>(), 192);
        assert_eq!(std::mem::offset_of!(NodeState, arrival_rng), 64);
        assert_eq!(std::mem::offset_of!(NodeState, service_rng), 128);
    }
}
