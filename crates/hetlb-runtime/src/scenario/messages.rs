//! The messages between the ranks of a scenario run.

use serde::{Deserialize, Serialize};

/// One task: a unique id and the scenario time it entered the system (for response times).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Unique over the run: `node << 40 | sequence`.
    pub id: u64,
    /// Scenario time it arrived, was injected, or 0 for initial tasks.
    pub entered: f64,
}

/// What a rank measured of itself, sent to rank 0 at the end.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NodeMeasured {
    /// The node.
    pub node: usize,
    /// Scenario time of its last completion.
    pub finish: f64,
    /// Scenario seconds it had work.
    pub busy: f64,
    /// Tasks it executed.
    pub executed: u64,
    /// Tasks it sent away.
    pub sent: u64,
    /// Tasks it received.
    pub received: u64,
    /// Tasks that arrived at it from outside (Poisson arrivals).
    pub arrived: u64,
    /// Tasks injected into it.
    pub injected: u64,
    /// Σ of its executed tasks' ids (a checksum of exactly-once execution).
    pub id_sum: u128,
    /// Σ of the ids of the tasks it created (initial, injected, arrived).
    pub created_id_sum: u128,
    /// Tasks it created.
    pub created: u64,
    /// Σ of response times of its executed tasks (scenario seconds).
    pub response_sum: f64,
    /// Per neighbour: the link to it as probed before the run.
    pub links: Vec<LinkMeasure>,
    /// Σ over deliveries to this node of (delivery − modelled arrival), scenario seconds.
    pub lateness_sum: f64,
    /// Deliveries to this node.
    pub deliveries: u64,
    /// Transfers it decided (delay-aware decisions, or its part of a hypercube balancing).
    pub decisions: u64,
    /// Hypercube balancings it took part in, with (max − min, max, mean) right after the plan.
    pub balancings: Vec<(u64, u64, f64)>,
    /// Ids of the tasks it executed, when the run keeps them (tests).
    pub executed_ids: Vec<u64>,
    /// How closely the rank kept to its time scale.
    #[serde(default)]
    pub timing: RankTiming,
}

/// How closely one rank kept to the scenario's time scale: what its tasks asked for against
/// what they took, the CPU it got while computing, and how late it noticed due events.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RankTiming {
    /// Real seconds of service its tasks asked for (service time × time scale).
    pub service_intended: f64,
    /// Real seconds they took, from start to completion.
    pub service_taken: f64,
    /// Real seconds spent in the CPU parts of tasks.
    pub cpu_wall: f64,
    /// CPU seconds the rank's thread obtained during those parts.
    pub cpu_obtained: f64,
    /// Σ over due events (deliveries, injections, arrivals, rounds, completions of waited
    /// work) of how late the rank noticed them, scenario seconds.
    pub lateness_sum: f64,
    /// The latest an event was noticed, scenario seconds.
    pub lateness_max: f64,
    /// Due events counted.
    pub events: u64,
}

impl RankTiming {
    /// Records an event due at scenario time `due` and noticed at `now`.
    pub fn late(&mut self, due: f64, now: f64) {
        let late = (now - due).max(0.0);
        self.lateness_sum += late;
        self.lateness_max = self.lateness_max.max(late);
        self.events += 1;
    }
}

/// A link as the file gives it and as the ranks measured it (scenario units).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkMeasure {
    /// The sending node.
    pub from: usize,
    /// The receiving node.
    pub to: usize,
    /// The file's rate (tasks per second; infinite for instant).
    pub file_rate: f64,
    /// The file's mean delay (seconds).
    pub file_delay: f64,
    /// The measured rate: probe tasks ÷ (their round trip − an empty round trip).
    pub measured_rate: f64,
    /// The measured delay: half an empty round trip.
    pub measured_delay: f64,
}

/// A message of a scenario run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Message {
    /// Tasks over an emulated link: to be delivered at scenario time `arrival`.
    Tasks {
        /// The tasks.
        tasks: Vec<Task>,
        /// Modelled arrival time (scenario seconds).
        arrival: f64,
        /// When the sender put them on the link (scenario seconds).
        sent_at: f64,
    },
    /// Tasks moved at once (a synchronous hypercube balancing).
    Instant {
        /// The balancing round.
        round: u64,
        /// The tasks.
        tasks: Vec<Task>,
    },
    /// A status report: the sender's load at `time`.
    Status {
        /// Tasks held.
        load: u64,
        /// Scenario time.
        time: f64,
    },
    /// A hypercube balancing: the sender's load for round `round` (and a request to balance).
    BalanceLoad {
        /// The round, from 1.
        round: u64,
        /// Tasks held (queued and in service) when it joined the round.
        load: u64,
    },
    /// A diffusion round: the sender's load at the round's time, for its neighbours' decisions.
    RoundLoad {
        /// The round, from 0.
        round: u64,
        /// Tasks the sender held.
        load: u64,
    },
    /// Link measurement before the run: hold me for `hold` real seconds (the modelled
    /// transfer), then reply over your link back.
    Probe {
        /// Probe number.
        seq: u32,
        /// Dummy tasks carried (their transfer time measures the rate).
        tasks: Vec<Task>,
        /// Real seconds the link holds the message.
        hold: f64,
    },
    /// The answer to a probe, held `hold` real seconds by the link back.
    ProbeReply {
        /// Probe number.
        seq: u32,
        /// Real seconds the link holds the message.
        hold: f64,
    },
    /// Every rank has finished probing (from rank 0, which then starts the clock).
    Start,
    /// To rank 0: this rank has finished probing.
    Probed,
    /// To rank 0: this rank is idle with these totals (and will have no more arrivals when
    /// `arrivals_done`).
    Idle {
        /// Tasks executed so far.
        executed: u64,
        /// Tasks that arrived from outside so far.
        arrived: u64,
        /// True when no more arrivals or injections will come to it.
        arrivals_done: bool,
    },
    /// From rank 0: the run is over (`Some` with an error when it failed).
    Stop {
        /// Why it failed, when it did.
        error: Option<String>,
    },
    /// To rank 0 after `Stop`: what the rank measured.
    Final(Box<NodeMeasured>),
    /// A rank's loop ended with an error.
    Failed {
        /// The error.
        message: String,
    },
}
