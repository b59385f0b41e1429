//! Deciding: the core's rule run over the gathered loads, and this rank's part of the plan.

use super::error::{PeerError, PlanError};
use super::wire::RankState;
use hetlb_core::advice::{CostModel, Prediction, Trigger};
use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on};
use hetlb_core::model::Capacities;
use hetlb_core::plan::Plan;
use hetlb_core::topology::Network;
use hetlb_core::transmission::{Schedule, transmit};
use serde::Serialize;

/// One transfer of the plan: `units` from rank `from` to rank `to` in phase `phase`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PlannedTransfer {
    /// Its number in the plan (phase order, then the order within the phase).
    pub id: u32,
    /// The phase (a dimension of the hypercube rules, a round of the diffusion rules).
    pub phase: usize,
    /// Sending rank.
    pub from: usize,
    /// Receiving rank.
    pub to: usize,
    /// Units to carry.
    pub units: u64,
}

/// A decision: what the rule planned for every rank, from the loads gathered at the start of
/// the call. Every rank of the group holds the same migration after [`Balancer::plan`]; hand
/// it to [`Balancer::migrate`] on every rank to carry it out.
///
/// [`Balancer::plan`]: super::Balancer::plan
/// [`Balancer::migrate`]: super::Balancer::migrate
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Migration {
    /// The call this decision belongs to.
    pub epoch: u64,
    /// The rule.
    pub algorithm: Algorithm,
    /// The ranks' topology, as a spec.
    pub topology: String,
    /// The capacities the rule used (`None`: equal ranks).
    pub capacities: Option<Vec<f64>>,
    /// Measured speeds (units per second) per rank, when speeds are measured and known.
    pub measured_speeds: Option<Vec<f64>>,
    /// Units per rank as the rule saw them.
    pub loads_before: Vec<u64>,
    /// Items per rank before the move.
    pub items_before: Vec<u64>,
    /// The rule's final loads.
    pub planned_after: Vec<u64>,
    /// Every transfer of the plan, in phase order.
    pub transfers: Vec<PlannedTransfer>,
    /// Phases (dimensions or rounds) of the plan that move something.
    pub phases: usize,
    /// True when the rule reached its fixed point or ran its schedule.
    pub converged: bool,
    /// How the items will be put on the links.
    pub schedule: Schedule,
    /// The model's transmission time in steps of one unit over one link (Rim, Jang & Kim 2003,
    /// §§5.2, 6): `Σ Tmax` for the phased schedule; the overlapped and pipelined schedules are
    /// computed for hypercube plans only.
    pub predicted_steps: Option<u64>,
    /// Seconds spent deciding on this rank (gather and rule).
    pub decide_seconds: f64,
    /// The plan's predicted gain and cost (`hetlb_core::advice`, units in place of bytes),
    /// when every rank's speed is measured.
    pub prediction: Option<Prediction>,
    /// True when the trigger held the plan back: the migration moves nothing.
    pub held_back: bool,
}

impl Migration {
    /// True when the plan moves nothing.
    pub fn is_empty(&self) -> bool {
        self.transfers.is_empty()
    }

    /// The transfers this rank sends, in plan order.
    pub fn sends(&self, rank: usize) -> impl Iterator<Item = &PlannedTransfer> {
        self.transfers.iter().filter(move |t| t.from == rank)
    }

    /// The transfers this rank receives, in plan order.
    pub fn receives(&self, rank: usize) -> impl Iterator<Item = &PlannedTransfer> {
        self.transfers.iter().filter(move |t| t.to == rank)
    }

    /// The measured speeds that cannot be right (see [`crate::speed_check`]).
    pub fn implausible_speeds(&self) -> Vec<crate::speed_check::Implausible> {
        self.measured_speeds.as_ref().map_or_else(Vec::new, |v| {
            let speeds: Vec<Option<f64>> = v.iter().copied().map(Some).collect();
            crate::speed_check::implausible(&speeds)
        })
    }

    /// The capacities weighing the imbalance: those the rule used, or all 1.
    pub fn weights(&self) -> Vec<f64> {
        self.capacities
            .clone()
            .unwrap_or_else(|| vec![1.0; self.loads_before.len()])
    }
}

/// `max_i (w_i / c_i) ÷ (Σw / Σc)`: 1 is perfect balance (and the value when there is no
/// load).
///
/// # Example
/// ```
/// use hetlb_runtime::peer::imbalance;
/// assert_eq!(imbalance(&[10, 10], &[1.0, 1.0]), 1.0);
/// assert_eq!(imbalance(&[20, 0], &[1.0, 1.0]), 2.0);
/// assert_eq!(imbalance(&[20, 10], &[2.0, 1.0]), 1.0);
/// ```
pub fn imbalance(loads: &[u64], capacities: &[f64]) -> f64 {
    let total: u128 = loads.iter().map(|&w| u128::from(w)).sum();
    if total == 0 {
        return 1.0;
    }
    let cap_total: f64 = capacities.iter().sum();
    let peak = loads
        .iter()
        .zip(capacities)
        .map(|(&w, &c)| w as f64 / c)
        .fold(0.0, f64::max);
    peak / (total as f64 / cap_total)
}

/// The options the rule runs with: those `hetlb balance` would use for the same arguments.
pub(crate) struct RuleInputs<'a> {
    pub(crate) algorithm: Algorithm,
    pub(crate) network: &'a Network,
    pub(crate) label: &'a str,
    pub(crate) capacities: Option<Vec<f64>>,
    pub(crate) measured_speeds: Option<Vec<f64>>,
    pub(crate) procs_per_group: Option<usize>,
    pub(crate) max_rounds: Option<u64>,
    pub(crate) seed: u64,
    pub(crate) lambda: Option<f64>,
    pub(crate) schedule: Schedule,
    pub(crate) trigger: Trigger,
    pub(crate) cost_model: CostModel,
}

/// Runs the rule on the gathered states and lists the plan's transfers.
///
/// # Errors
/// [`PeerError::Plan`] when the rule refuses the loads (an overflowing total), or when the
/// plan has more transfers than a call can number (2³²).
pub(crate) fn decide(
    epoch: u64,
    states: &[RankState],
    inputs: RuleInputs<'_>,
) -> Result<Migration, PeerError> {
    let loads: Vec<u64> = states.iter().map(|s| s.units).collect();
    let items_before: Vec<u64> = states.iter().map(|s| s.items).collect();
    let capacities = inputs
        .capacities
        .as_ref()
        .map(|c| Capacities::new(c.clone()))
        .transpose()
        .map_err(PlanError::Capacities)?;
    let options = BalanceOptions::new()
        .capacities(capacities)
        .procs_per_group(inputs.procs_per_group)
        .max_rounds(inputs.max_rounds)
        .seed(inputs.seed)
        .lambda(inputs.lambda);
    let run =
        balance_on(inputs.network, inputs.algorithm, &loads, &options).map_err(PlanError::Rule)?;
    let prediction = inputs
        .measured_speeds
        .as_deref()
        .and_then(|speeds| Prediction::of(&run.plan, speeds, 1, &inputs.cost_model).ok());
    // Every rank decides the same: the same gathered loads and speeds, the same trigger and
    // cost model (both in the configuration's fingerprint).
    let moves_something = run.plan.transfers().any(|t| t.units > 0);
    let held_back = moves_something && prediction.is_some_and(|p| !inputs.trigger.moves(&p));
    let mut run = run;
    if held_back {
        run.plan = Plan::identity(&loads);
    }
    let transfers = number_transfers(&run.plan)?;
    let phases = run
        .plan
        .phases
        .iter()
        .filter(|p| p.transfers.iter().any(|t| t.units > 0))
        .count();
    let predicted_steps = predict(&run.plan, inputs.network, inputs.schedule);
    Ok(Migration {
        epoch,
        algorithm: inputs.algorithm,
        topology: inputs.label.to_string(),
        capacities: inputs.capacities,
        measured_speeds: inputs.measured_speeds,
        loads_before: loads,
        items_before,
        planned_after: run.plan.final_loads.clone(),
        transfers,
        phases,
        converged: run.converged,
        schedule: inputs.schedule,
        predicted_steps,
        decide_seconds: 0.0,
        prediction,
        held_back,
    })
}

fn number_transfers(plan: &Plan) -> Result<Vec<PlannedTransfer>, PeerError> {
    let mut out = Vec::new();
    for (phase, p) in plan.phases.iter().enumerate() {
        for t in p.transfers.iter().filter(|t| t.units > 0) {
            let id = u32::try_from(out.len()).map_err(|_| PlanError::TooManyTransfers)?;
            out.push(PlannedTransfer {
                id,
                phase,
                from: t.from,
                to: t.to,
                units: t.units,
            });
        }
    }
    Ok(out)
}

/// The model's transmission steps of the plan under `schedule`.
fn predict(plan: &Plan, network: &Network, schedule: Schedule) -> Option<u64> {
    if matches!(network, Network::Hypercube(_)) {
        if let Ok(t) = transmit(plan, schedule) {
            return Some(t.steps);
        }
    }
    (schedule == Schedule::Phased).then(|| {
        plan.phases
            .iter()
            .map(|p| p.transfers.iter().map(|t| t.units).max().unwrap_or(0))
            .fold(0u64, u64::saturating_add)
    })
}
