//! Mirtaheri & Grandinetti, *Dynamic load balancing in distributed exascale computing
//! systems*, Cluster Computing (2017), §5: the numbers its text gives for the 6-node
//! scenarios (Figs. 8–11) and the inputs of eq. 25.
//!
//! The values are kept as printed (strings where the text is approximate or contradicts
//! itself); nothing in the experiment is derived from them.

/// What the paper reports of a scenario run, and `crate::mirtaheri` measures (`Measure::of`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Measure {
    /// The time of the last completion, seconds.
    Makespan,
    /// Idle time summed over the nodes, seconds.
    TotalIdle,
    /// How long the receiver (paper node 5) waits for work, seconds.
    ReceiverWaiting,
    /// Tasks moved over links.
    TasksMoved,
}

impl Measure {
    /// A label for tables: `finish time (s)`, ….
    pub fn label(self) -> &'static str {
        match self {
            Measure::Makespan => "finish time (s)",
            Measure::TotalIdle => "total idle (s)",
            Measure::ReceiverWaiting => "standby of paper node 5 (s)",
            Measure::TasksMoved => "tasks moved",
        }
    }
}

/// What the text gives for Fig. 8 (no balancing).
pub const FIG8: [(Measure, &str); 3] = [
    (Measure::Makespan, "2.6"),
    (Measure::TotalIdle, "about 10"),
    (Measure::TasksMoved, "0"),
];

/// What the text gives for Fig. 9 (balancing, no transfer delay).
pub const FIG9: [(Measure, &str); 3] = [
    (Measure::Makespan, "1.32"),
    (Measure::TotalIdle, "2.34"),
    (Measure::TasksMoved, "almost 660"),
];

/// What the text says of Fig. 9 with the 0.033 s transfer it mentions: "the same".
pub const FIG9_TRANSFER: [(Measure, &str); 3] = [
    (Measure::Makespan, "\"the same\" (1.32)"),
    (Measure::TotalIdle, "\"the same\" (2.34)"),
    (Measure::TasksMoved, "\"the same\""),
];

/// What the text gives for Fig. 10 (delayed transfer, `k = 1`).
pub const FIG10: [(Measure, &str); 4] = [
    (Measure::Makespan, "7.13"),
    (Measure::ReceiverWaiting, "4.89 (0.17 to 5.05)"),
    (Measure::TotalIdle, "—"),
    (Measure::TasksMoved, "495"),
];

/// What the text gives for Fig. 11 (delayed transfer, compensating factor).
pub const FIG11: [(Measure, &str); 4] = [
    (Measure::Makespan, "4.8"),
    (Measure::ReceiverWaiting, "1.2 (\"3 s\" in the text)"),
    (Measure::TotalIdle, "—"),
    (Measure::TasksMoved, "311"),
];

/// §5: "the load-transfer delay from node 1 to node 2 and node 5 ... is 0.033 s", for this
/// many tasks.
pub const TRANSFER_TASKS: f64 = 333.0;
/// The transfer time of [`TRANSFER_TASKS`] the text states, seconds.
pub const TRANSFER_SECONDS: f64 = 0.033;

/// `T` of eq. 25 as the paper states it (§5, Figs. 10–11), seconds.
pub const T: f64 = 2.24;
/// The arrival the paper uses, `Δt`, seconds.
pub const DT: f64 = 5.05;
/// The sender's execution rate `λ_r`, tasks per second.
pub const SENDER_RATE: f64 = 200.0;
/// The link's transfer rate `λ_rl`, tasks per second.
pub const LINK_RATE: f64 = 100.0;
/// The planned transfer without compensation (Fig. 10).
pub const PLANNED: u64 = 495;
/// The compensated transfer the paper reports (Fig. 11).
pub const TASKS: u64 = 311;
