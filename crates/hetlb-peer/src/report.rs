//! What one rank's rebalance did.

use super::decide::{Migration, imbalance};
use super::learning::Outcome;
use super::migrate::MoveStats;
use super::session::Traffic;
use hetlb_core::transmission::Schedule;
use serde::Serialize;

/// One rank's account of a rebalance. The vectors (`loads_before`, `planned_after`,
/// `loads_after`, …) are the whole group's and the same on every rank.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Report {
    /// The call, counted from 1.
    pub epoch: u64,
    /// This rank.
    pub rank: usize,
    /// The backend (`threads`, `mpi`).
    pub backend: &'static str,
    /// The rule.
    pub algorithm: String,
    /// The ranks' topology.
    pub topology: String,
    /// How items were put on the links.
    pub schedule: Schedule,
    /// Items this rank held before the call.
    pub items_before: u64,
    /// Items this rank holds after it.
    pub items_after: u64,
    /// Units (Σ of item loads) before.
    pub units_before: u64,
    /// Units after.
    pub units_after: u64,
    /// Items this rank sent (forwarded items count at every hop).
    pub items_sent: u64,
    /// Items this rank received.
    pub items_received: u64,
    /// Units sent.
    pub units_sent: u64,
    /// Units received.
    pub units_received: u64,
    /// Bytes of item messages sent (serialised size; on threads, what they would take).
    pub bytes_sent: u64,
    /// Bytes received (on threads: 0, items move as values).
    pub bytes_received: u64,
    /// Messages this rank sent: gather, items, acknowledgements, agreement.
    pub messages_sent: u64,
    /// Messages this rank received in the call (the same kinds).
    pub messages_received: u64,
    /// Phases (dimensions or rounds) of the plan that moved something.
    pub phases: usize,
    /// `max (load ÷ capacity) ÷ average` before the call (1 is perfect).
    pub imbalance_before: f64,
    /// The same after the move.
    pub imbalance_after: f64,
    /// The same for the rule's planned loads.
    pub planned_imbalance_after: f64,
    /// True when the rule moved work (false: the loads were already as balanced as the rule
    /// makes them, and the call cost one all-gather).
    pub balanced: bool,
    /// True when the rule reached its fixed point or ran its schedule.
    pub converged: bool,
    /// Σ over this rank's transfers of planned − carried units (weighted items only; 0 with
    /// unit items).
    pub residual: i64,
    /// Seconds this rank spent deciding (the gather and the rule).
    pub decide_seconds: f64,
    /// Seconds this rank spent moving, agreement included.
    pub move_seconds: f64,
    /// The longest move of any rank, to its last transfer (seconds).
    pub slowest_move_seconds: f64,
    /// The model's transmission time in steps of one unit over one link.
    pub predicted_steps: Option<u64>,
    /// Measured seconds per unit over a link: Σ (first send → acknowledgement) ÷ Σ units,
    /// over every rank's transfers.
    pub seconds_per_unit: Option<f64>,
    /// `predicted_steps × seconds_per_unit`: the model's prediction of the move, to compare
    /// with `slowest_move_seconds`.
    pub predicted_move_seconds: Option<f64>,
    /// Capacities the rule used (`None`: equal ranks).
    pub capacities: Option<Vec<f64>>,
    /// Measured speeds (units per second), when measured.
    pub measured_speeds: Option<Vec<f64>>,
    /// Units per rank as the rule saw them.
    pub loads_before: Vec<u64>,
    /// The rule's final loads.
    pub planned_after: Vec<u64>,
    /// Units per rank after the move (equal to `planned_after` with unit items).
    pub loads_after: Vec<u64>,
    /// Items per rank after the move.
    pub items_after_all: Vec<u64>,
    /// Measured speeds that cannot be right (a work loop the compiler removed, a step timed
    /// below the clock's resolution): the rule weighed them anyway, so the move is suspect.
    pub implausible_speeds: Vec<crate::speed_check::Implausible>,
    /// What the move was predicted to bring and cost (`hetlb_core::advice`), when every
    /// rank's speed is measured: compare `gain_per_iteration` with the iteration times the
    /// application sees next, and `move_seconds` with `slowest_move_seconds`.
    pub prediction: Option<hetlb_core::advice::Prediction>,
    /// True when the trigger held the move back (predicted gain below the cost × margin):
    /// nothing moved.
    pub held_back: bool,
    /// Rule `auto`: every candidate's prediction (empty for one rule); `algorithm` names the
    /// one followed.
    pub alternatives: Vec<super::decide::CandidatePrediction>,
    /// How the units travelled.
    pub routing: hetlb_core::routing::Routing,
    /// The cost model of the prediction (configured, or learned on line).
    pub cost_model: hetlb_core::advice::CostModel,
    /// How the previous move's prediction turned out, measured at this call.
    pub outcome: Option<Outcome>,
    /// When items give positions: how compact the ranks' regions were before the call — the
    /// RMS distance of each rank's items from that rank's centroid, divided by the RMS
    /// distance of all items from the global centroid (1.0 for a random assignment, lower
    /// for compact regions). From the call's gather, at no extra message.
    pub spread_before: Option<f64>,
    /// The same after the call (from the ranks' votes when the move committed).
    pub spread_after: Option<f64>,
    /// False when the trigger `auto` skipped this call without a message (its check budget,
    /// [`BalancerConfig::check_budget`](super::BalancerConfig::check_budget)): nothing moved,
    /// and the group's vectors (`loads_before`, …) are empty.
    pub checked: bool,
}

/// What a rank knows of a move that committed, for its report.
pub(crate) struct Committed<'a> {
    pub(crate) migration: &'a Migration,
    pub(crate) rank: usize,
    pub(crate) backend: &'static str,
    /// This rank's items before and after, and its units after.
    pub(crate) items: (u64, u64),
    pub(crate) units_after: u64,
    pub(crate) stats: &'a MoveStats,
    /// The move's messages, and the call's gather and probe before it.
    pub(crate) traffic: Traffic,
    pub(crate) gathered: Traffic,
    pub(crate) move_seconds: f64,
    pub(crate) slowest_move_seconds: f64,
    pub(crate) outcome: Option<Outcome>,
}

impl Report {
    /// The report of a call whose move committed.
    pub(crate) fn committed(c: Committed<'_>) -> Self {
        let (m, stats) = (c.migration, c.stats);
        let dones = &stats.dones;
        let loads_after: Vec<u64> = dones.iter().map(|d| d.units).collect();
        let items_after_all: Vec<u64> = dones.iter().map(|d| d.items).collect();
        let link_seconds: f64 = dones.iter().map(|d| d.link_seconds).sum();
        let link_units: u64 = dones.iter().map(|d| d.link_units).sum();
        let seconds_per_unit = (link_units > 0).then(|| link_seconds / link_units as f64);
        let weights = m.weights();
        Report {
            epoch: m.epoch,
            rank: c.rank,
            backend: c.backend,
            algorithm: m.algorithm.name().to_string(),
            topology: m.topology.clone(),
            schedule: m.schedule,
            items_before: c.items.0,
            items_after: c.items.1,
            units_before: m.loads_before[c.rank],
            units_after: c.units_after,
            items_sent: stats.items_sent,
            items_received: stats.items_received,
            units_sent: stats.units_sent,
            units_received: stats.units_received,
            bytes_sent: c.traffic.bytes_sent,
            bytes_received: c.traffic.bytes_received,
            messages_sent: c.traffic.messages_sent + c.gathered.messages_sent,
            messages_received: c.traffic.messages_received + c.gathered.messages_received,
            phases: m.phases,
            imbalance_before: imbalance(&m.loads_before, &weights),
            imbalance_after: imbalance(&loads_after, &weights),
            planned_imbalance_after: imbalance(&m.planned_after, &weights),
            balanced: true,
            converged: m.converged,
            residual: stats.residual,
            decide_seconds: m.decide_seconds,
            move_seconds: c.move_seconds,
            slowest_move_seconds: c.slowest_move_seconds,
            predicted_steps: m.predicted_steps,
            seconds_per_unit,
            predicted_move_seconds: m
                .predicted_steps
                .zip(seconds_per_unit)
                .map(|(s, t)| s as f64 * t),
            capacities: m.capacities.clone(),
            measured_speeds: m.measured_speeds.clone(),
            loads_before: m.loads_before.clone(),
            planned_after: m.planned_after.clone(),
            loads_after,
            items_after_all,
            implausible_speeds: m.implausible_speeds(),
            prediction: m.prediction,
            held_back: false,
            alternatives: m.alternatives.clone(),
            routing: m.routing,
            cost_model: m.cost_model,
            outcome: c.outcome,
            spread_before: m.spread_before,
            spread_after: crate::locality::spread(
                &dones.iter().map(|d| d.moments).collect::<Vec<_>>(),
            ),
            checked: true,
        }
    }

    /// The report of a call that moved nothing, made of its migration's vectors.
    pub(crate) fn unchanged(m: Migration, rank: usize, backend: &'static str) -> Self {
        let imbalance = match &m.capacities {
            Some(c) => imbalance(&m.loads_before, c),
            None => imbalance(&m.loads_before, &m.weights()),
        };
        let implausible_speeds = m.implausible_speeds();
        Self {
            epoch: m.epoch,
            rank,
            backend,
            algorithm: m.algorithm.name().to_string(),
            topology: m.topology,
            schedule: m.schedule,
            items_before: m.items_before[rank],
            items_after: m.items_before[rank],
            units_before: m.loads_before[rank],
            units_after: m.loads_before[rank],
            items_sent: 0,
            items_received: 0,
            units_sent: 0,
            units_received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            messages_sent: 0,
            messages_received: 0,
            phases: 0,
            imbalance_before: imbalance,
            imbalance_after: imbalance,
            planned_imbalance_after: imbalance,
            balanced: false,
            converged: m.converged,
            residual: 0,
            decide_seconds: m.decide_seconds,
            move_seconds: 0.0,
            slowest_move_seconds: 0.0,
            predicted_steps: m.predicted_steps,
            seconds_per_unit: None,
            predicted_move_seconds: None,
            capacities: m.capacities,
            measured_speeds: m.measured_speeds,
            loads_after: m.loads_before.clone(),
            loads_before: m.loads_before,
            planned_after: m.planned_after,
            items_after_all: m.items_before,
            implausible_speeds,
            prediction: m.prediction,
            held_back: m.held_back,
            alternatives: m.alternatives,
            routing: m.routing,
            cost_model: m.cost_model,
            outcome: None,
            spread_before: m.spread_before,
            spread_after: m.spread_before,
            checked: true,
        }
    }

    /// The report of a call the trigger skipped: this rank's own counts only.
    pub(crate) fn skipped(
        epoch: u64,
        rank: usize,
        backend: &'static str,
        names: (&str, &str),
        (schedule, routing): (Schedule, hetlb_core::routing::Routing),
        items: u64,
        units: u64,
    ) -> Self {
        Self {
            epoch,
            rank,
            backend,
            algorithm: names.0.to_string(),
            topology: names.1.to_string(),
            schedule,
            items_before: items,
            items_after: items,
            units_before: units,
            units_after: units,
            items_sent: 0,
            items_received: 0,
            units_sent: 0,
            units_received: 0,
            bytes_sent: 0,
            bytes_received: 0,
            messages_sent: 0,
            messages_received: 0,
            phases: 0,
            imbalance_before: f64::NAN,
            imbalance_after: f64::NAN,
            planned_imbalance_after: f64::NAN,
            balanced: false,
            converged: true,
            residual: 0,
            decide_seconds: 0.0,
            move_seconds: 0.0,
            slowest_move_seconds: 0.0,
            predicted_steps: None,
            seconds_per_unit: None,
            predicted_move_seconds: None,
            capacities: None,
            measured_speeds: None,
            loads_before: Vec::new(),
            planned_after: Vec::new(),
            loads_after: Vec::new(),
            items_after_all: Vec::new(),
            implausible_speeds: Vec::new(),
            prediction: None,
            held_back: false,
            alternatives: Vec::new(),
            routing,
            cost_model: hetlb_core::advice::CostModel::FREE,
            outcome: None,
            spread_before: None,
            spread_after: None,
            checked: false,
        }
    }
}
