//! What a run produces: the summary, per-node figures and queue-length series.

use crate::policy::PolicyStats;
use serde::Serialize;

/// The figures of one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct NodeReport {
    /// Node id.
    pub node: usize,
    /// Time of its last task completion (0 if it executed nothing).
    pub finish: f64,
    /// Seconds it had work, up to the horizon.
    pub busy: f64,
    /// Seconds it had none, up to the horizon.
    pub idle: f64,
    /// Seconds it had none before its last completion: time spent waiting for load that was
    /// still on its way (Mirtaheri & Grandinetti 2017 §5 calls this the standby time).
    pub waiting: f64,
    /// Tasks it executed.
    pub executed: u64,
    /// Tasks it sent away.
    pub sent: u64,
    /// Tasks it received from other nodes.
    pub received: u64,
    /// Tasks it held at the end.
    pub final_load: u64,
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The policy's name.
    pub policy: String,
    /// The seed of every random stream.
    pub seed: u64,
    /// Time of the last task completion: the total execution time.
    pub makespan: f64,
    /// The end of the accounting period: the makespan if all work was done, else the end
    /// time.
    pub horizon: f64,
    /// Σ over nodes of their idle time up to the horizon.
    pub total_idle: f64,
    /// Events processed (cancelled service completions not included).
    pub events: u64,
    /// Service completions cancelled because the task in service was moved away.
    pub cancelled_events: u64,
    /// Tasks moved between nodes (a task moved twice counts twice).
    pub tasks_moved: u64,
    /// Transfer orders carried out.
    pub transfers: u64,
    /// Tasks present at time 0.
    pub initial: u64,
    /// Tasks injected.
    pub injected: u64,
    /// Tasks that arrived from outside (Poisson arrivals).
    pub arrived: u64,
    /// Tasks executed.
    pub executed: u64,
    /// Tasks still queued at the end.
    pub queued_at_end: u64,
    /// Tasks still on a link at the end.
    pub in_transit_at_end: u64,
    /// Mean time from a task's arrival in the system to its completion.
    pub mean_response_time: Option<f64>,
    /// Per-node figures.
    pub nodes: Vec<NodeReport>,
    /// What the policy did.
    pub policy_stats: PolicyStats,
    /// Per node, `(time, queue length)` at its changes (thinned to the sampling interval);
    /// empty when not recorded.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Vec<(f64, u64)>>,
    /// `(time, tasks on links)` at its changes, recorded with the queue lengths; empty when
    /// not recorded or when nothing ever moved.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transit_series: Vec<(f64, u64)>,
}
