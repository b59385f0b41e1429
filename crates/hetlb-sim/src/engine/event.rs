//! The one event type of the engine.

/// Something that happens at a point in time. Small (12 bytes) so the heap stays compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The task in service at `node` completes, unless the node's epoch moved on (the task
    /// was moved away), in which case the event is stale and cancelled.
    Completion {
        /// The node.
        node: u32,
        /// The node's service epoch when the service started.
        epoch: u32,
    },
    /// One external (Poisson) task arrives at `node`.
    Arrival {
        /// The node.
        node: u32,
    },
    /// The `index`-th injection of the setup enters its node.
    Injection {
        /// Index into the setup's injections.
        index: u32,
    },
    /// The batch in in-flight slot `slot` reaches its destination.
    Delivery {
        /// Slot of the batch.
        slot: u32,
    },
    /// Every node reports its load to its neighbours.
    Status,
    /// A periodic balancing round of the policy.
    Round,
}
