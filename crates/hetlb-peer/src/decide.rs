//! Deciding: the core's rule run over the gathered loads, and this rank's part of the plan.

use super::error::{PeerError, PlanError};
use super::locality::{self, Moments, Position};
use super::shortfalls::Shortfalls;
use super::wire::RankState;
use hetlb_core::advice::{Advice, Candidate, CostModel, MoveSample, Prediction, Trigger, choose};
use hetlb_core::algorithm::{Algorithm, BalanceOptions, Family, balance_on};
use hetlb_core::model::Capacities;
use hetlb_core::plan::Plan;
use hetlb_core::routing::Routing;
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
    /// Rule `auto`: every candidate's prediction, in the order tried (empty for one rule).
    pub alternatives: Vec<CandidatePrediction>,
    /// How the units travel.
    pub routing: Routing,
    /// The cost model the prediction used (the configured one, or the learned one).
    pub cost_model: CostModel,
    /// The busiest rank's messages and units over the plan's phases, as the cost model
    /// counts them (`None` when nothing moves): what a measured move is fitted against.
    pub busiest: Option<MoveSample>,
    /// The slowest rank's last step before the call (seconds), when every rank reported
    /// one ([`Balancer::record`](super::Balancer::record)).
    pub step_seconds: Option<f64>,
    /// Every rank's items' centroid, when items give positions (`None` for a rank without
    /// items): a transfer to rank `q` carries the items furthest towards `q`'s.
    pub centroids: Option<Vec<Option<Position>>>,
    /// The spread of the ranks' regions before the call, when items give positions (see
    /// [`Report::spread_before`](super::Report::spread_before)).
    pub spread_before: Option<f64>,
    /// True when every rank's store said each of its items has one unit.
    pub unit_items: bool,
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

    /// Where each of this rank's items goes when the load moves straight from where it is
    /// to where the plan ends it ([`hetlb_core::destinations::of_node`]): `Some(rank)` or
    /// `None` (it stays), one per entry of `item_loads` — this rank's items' loads, in the
    /// order the application holds them. For an application that moves its own data
    /// (Zoltan's export lists) instead of calling [`Balancer::migrate`]; every item is sent
    /// at most once, and with unit items the ranks end exactly on `planned_after`.
    ///
    /// # Errors
    /// [`PeerError::Plan`] when `rank` is not in the group.
    ///
    /// [`Balancer::migrate`]: super::Balancer::migrate
    pub fn destinations(
        &self,
        rank: usize,
        item_loads: &[u64],
    ) -> Result<Vec<Option<usize>>, PeerError> {
        if rank >= self.loads_before.len() {
            return Err(PeerError::Plan(PlanError::NotInGroup {
                rank,
                size: self.loads_before.len(),
            }));
        }
        hetlb_core::destinations::of_node(&self.loads_before, &self.planned_after, rank, item_loads)
            .map_err(|e| PeerError::Plan(PlanError::Routing(Box::new(e))))
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
/// use hetlb_peer::imbalance;
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
    /// Rule `auto`'s candidates (`None`: `algorithm` alone).
    pub(crate) candidates: Option<Vec<Algorithm>>,
    pub(crate) routing: Routing,
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
    /// Rule `auto`: what each candidate's moves fell short of their predictions.
    pub(crate) shortfalls: Shortfalls,
    /// Every rank's centroid, when items give positions: direct routing then matches each
    /// surplus to the nearest ranks that lack units.
    pub(crate) centroids: Option<Vec<Option<Position>>>,
    /// The rank graph of this call built from the centroids, when the rule follows the
    /// geometry (`crate::geometry`); it replaces `network` and `label`.
    pub(crate) geometry: Option<Network>,
}

impl RuleInputs<'_> {
    /// The network the rules run on in this call.
    fn network(&self) -> &Network {
        self.geometry.as_ref().unwrap_or(self.network)
    }

    /// Its label in the report.
    fn label(&self) -> &str {
        if self.geometry.is_some() {
            crate::geometry::LABEL
        } else {
            self.label
        }
    }
}

/// One candidate of rule `auto`, as predicted at the call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct CandidatePrediction {
    /// The rule.
    pub algorithm: Algorithm,
    /// Its plan's prediction at the measured speeds.
    pub prediction: Prediction,
    /// Learned from its earlier moves: how much slower the step after them was than
    /// predicted (seconds per iteration, the mean); `None` until one was measured. The
    /// candidates are ranked by `net gain − horizon × shortfall`.
    pub shortfall: Option<f64>,
}

/// A rule's plan with the options that rule takes, routed as configured. `options` holds
/// what every rule shares (the capacities, the seed); the rest is set here for `algorithm`.
fn plan_for(
    algorithm: Algorithm,
    loads: &[u64],
    options: &mut BalanceOptions,
    inputs: &RuleInputs<'_>,
) -> Result<(Plan, bool), PeerError> {
    options.procs_per_group = inputs
        .procs_per_group
        .filter(|_| algorithm == Algorithm::Hybrid);
    options.max_rounds = inputs
        .max_rounds
        .filter(|_| algorithm.family() == Family::Diffusion);
    options.lambda = inputs.lambda.filter(|_| algorithm == Algorithm::Gdem);
    let run = balance_on(inputs.network(), algorithm, loads, options).map_err(PlanError::Rule)?;
    let plan = match (&inputs.centroids, inputs.routing) {
        (Some(c), Routing::Direct) => run
            .plan
            .direct_nearest(|a, b| locality::distance(c[a], c[b])),
        (_, routing) => routing.route(run.plan),
    }
    .map_err(|e| PlanError::Routing(Box::new(e)))?;
    Ok((plan, run.converged))
}

/// One candidate planned: the rule, its routed plan, whether it converged, and its
/// prediction (when every speed is measured).
type Planned = (Algorithm, Plan, bool, Option<Prediction>);

/// Every candidate planned and predicted, and the one to follow.
struct Evaluation {
    planned: Vec<Planned>,
    /// Rule `auto`: each candidate's learned shortfall (empty for one candidate).
    shortfalls: Vec<Option<f64>>,
    /// The candidate followed: the best ranked net gain (ties to the first).
    choice: usize,
    /// The horizon the net gains are ranked over.
    horizon: u64,
}

/// Plans and predicts the candidates on `loads` and picks the one to follow. With
/// `every_candidate` false, a call that no plan can pay for plans its first candidate only.
fn evaluate(
    loads: &[u64],
    inputs: &RuleInputs<'_>,
    every_candidate: bool,
) -> Result<Evaluation, PeerError> {
    let capacities = inputs
        .capacities
        .as_ref()
        .map(|c| Capacities::new(c.clone()))
        .transpose()
        .map_err(PlanError::Capacities)?;
    let mut options = BalanceOptions::new()
        .capacities(capacities)
        .seed(inputs.seed);
    let predict_plan = |plan: &Plan| {
        inputs
            .measured_speeds
            .as_deref()
            .and_then(|speeds| Prediction::of(plan, speeds, 1, &inputs.cost_model).ok())
    };
    // Rule auto compares predictions, so it needs them: until every speed is measured, its
    // first candidate runs alone.
    let candidates: &[Algorithm] = match (&inputs.candidates, &inputs.measured_speeds) {
        (Some(list), Some(_)) if !list.is_empty() => list,
        (Some(list), None) if !list.is_empty() => &list[..1],
        _ => std::slice::from_ref(&inputs.algorithm),
    };
    // When no plan can pass the trigger, one candidate's plan is enough to report what was
    // held back.
    let candidates =
        if !every_candidate && cannot_pay(loads, inputs.measured_speeds.as_deref(), inputs) {
            &candidates[..1]
        } else {
            candidates
        };
    let mut planned = Vec::with_capacity(candidates.len());
    for &algorithm in candidates {
        let (plan, converged) = plan_for(algorithm, loads, &mut options, inputs)?;
        let prediction = predict_plan(&plan);
        planned.push((algorithm, plan, converged, prediction));
    }
    let horizon = match inputs.trigger {
        Trigger::Auto { horizon, .. } => horizon,
        _ => 1,
    };
    if planned.len() == 1 {
        return Ok(Evaluation {
            planned,
            shortfalls: Vec::new(),
            choice: 0,
            horizon,
        });
    }
    let shortfalls: Vec<Option<f64>> = (0..planned.len())
        .map(|position| inputs.shortfalls.of(position))
        .collect();
    // Ranked by the net gain less what each candidate's moves fell short by so far; whether
    // to move stays the trigger's, on the chosen plan's own prediction.
    let ranked: Vec<Prediction> = planned
        .iter()
        .zip(&shortfalls)
        .filter_map(|(p, shortfall)| {
            p.3.map(|mut prediction| {
                prediction.gain_per_iteration -= shortfall.unwrap_or(0.0);
                prediction
            })
        })
        .collect();
    let choice = if ranked.len() == planned.len() {
        choose(&ranked, horizon).unwrap_or(0)
    } else {
        0
    };
    Ok(Evaluation {
        planned,
        shortfalls,
        choice,
        horizon,
    })
}

/// What a call would do, without doing it: every candidate's prediction (as
/// [`hetlb_core::advice::Candidate`]s, in the configured order), and the one `rebalance`
/// would follow — `None` when it would move nothing (the trigger holds the plan back, or the
/// plan moves nothing).
///
/// # Errors
/// [`PeerError::Plan`] when a rule refuses the loads, or when a rank's speed is not
/// measured (a prediction needs every rank's).
pub(crate) fn advise(states: &[RankState], inputs: RuleInputs<'_>) -> Result<Advice, PeerError> {
    if inputs.measured_speeds.is_none() {
        return Err(PlanError::SpeedsNotMeasured.into());
    }
    let loads: Vec<u64> = states.iter().map(|s| s.units).collect();
    let evaluation = evaluate(&loads, &inputs, true)?;
    let mut candidates = Vec::with_capacity(evaluation.planned.len());
    for (algorithm, plan, _, prediction) in evaluation.planned {
        let prediction = prediction.ok_or(PlanError::SpeedsNotMeasured)?;
        let moves = plan.transfers().any(|t| t.units > 0) && inputs.trigger.moves(&prediction);
        candidates.push(Candidate::new(
            algorithm,
            inputs.routing,
            plan.final_loads,
            prediction,
            moves,
        ));
    }
    let choice = Some(evaluation.choice).filter(|&c| candidates[c].moves);
    Ok(Advice::new(candidates, choice, evaluation.horizon))
}

/// Runs the rule on the gathered states and lists the plan's transfers. Rule `auto` plans
/// every candidate and follows the one with the best predicted net gain.
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
    let Evaluation {
        mut planned,
        shortfalls,
        choice,
        ..
    } = evaluate(&loads, &inputs, false)?;
    let alternatives: Vec<CandidatePrediction> = if planned.len() > 1 {
        planned
            .iter()
            .zip(&shortfalls)
            .filter_map(|(p, &shortfall)| {
                p.3.map(|prediction| CandidatePrediction {
                    algorithm: p.0,
                    prediction,
                    shortfall,
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    let (algorithm, mut plan, converged, prediction) = planned.swap_remove(choice);
    // Every rank decides the same: the same gathered loads and speeds, the same trigger and
    // cost model (in the configuration's fingerprint, or rank 0's learned one).
    let moves_something = plan.transfers().any(|t| t.units > 0);
    let held_back = moves_something && prediction.is_some_and(|p| !inputs.trigger.moves(&p));
    if held_back {
        plan = Plan::identity(&loads);
    }
    let transfers = number_transfers(&plan)?;
    let phases = plan
        .phases
        .iter()
        .filter(|p| p.transfers.iter().any(|t| t.units > 0))
        .count();
    let predicted_steps = predict(&plan, inputs.network(), inputs.schedule);
    let busiest = (!transfers.is_empty()).then(|| inputs.cost_model.predict(&plan, 1).1);
    let step_seconds = max_step(states);
    let spread_before = if states.iter().any(|s| s.moments.is_some()) {
        let moments: Vec<Option<Moments>> = states.iter().map(|s| s.moments).collect();
        locality::spread(&moments)
    } else {
        None
    };
    Ok(Migration {
        epoch,
        algorithm,
        topology: inputs.label().to_string(),
        capacities: inputs.capacities,
        measured_speeds: inputs.measured_speeds,
        loads_before: loads,
        items_before,
        planned_after: plan.final_loads.clone(),
        transfers,
        phases,
        converged,
        schedule: inputs.schedule,
        predicted_steps,
        decide_seconds: 0.0,
        prediction,
        held_back,
        alternatives,
        routing: inputs.routing,
        cost_model: inputs.cost_model,
        busiest,
        step_seconds,
        centroids: inputs.centroids,
        spread_before,
        unit_items: states.iter().all(|s| s.unit_items),
    })
}

/// The slowest rank's last step, when every rank reported one.
pub(crate) fn max_step(states: &[RankState]) -> Option<f64> {
    let steps: Option<Vec<f64>> = states.iter().map(|s| s.step_seconds).collect();
    steps.map(|v| v.into_iter().fold(0.0, f64::max))
}

/// With the trigger `auto` and measured speeds: true when no plan can pass the trigger, so
/// that rule `auto` need not plan every candidate. `bound = T(x) − Σx ÷ Σs` is the most any plan
/// can save per iteration (no integer plan beats the fractional optimum), and any move costs
/// at least one message of one unit at each end of its busiest phase (`α + β`): when
/// `horizon · bound ≤ margin · (α + β)` the trigger holds every plan back.
fn cannot_pay(loads: &[u64], speeds: Option<&[f64]>, inputs: &RuleInputs<'_>) -> bool {
    let (Trigger::Auto { horizon, margin }, Some(speeds)) = (inputs.trigger, speeds) else {
        return false;
    };
    if speeds.len() != loads.len() || speeds.iter().any(|s| !(s.is_finite() && *s > 0.0)) {
        return false;
    }
    let now = hetlb_core::advice::iteration_seconds(loads, speeds);
    let total: f64 = loads.iter().map(|&x| x as f64).sum();
    let ideal = total / speeds.iter().sum::<f64>();
    let bound = (now - ideal).max(0.0);
    let least_cost = inputs.cost_model.seconds(1.0, 1.0);
    // Rounding of the two sums: a bound within a millionth of the iteration is no gain.
    let bound = if bound <= now * 1e-9 { 0.0 } else { bound };
    horizon as f64 * bound <= margin * least_cost
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
    let hypercube = matches!(network, Network::Hypercube(_));
    if plan.transfers().all(|t| t.units == 0) {
        // Nothing to carry takes no step, wherever the model has a schedule.
        return (hypercube || schedule == Schedule::Phased).then_some(0);
    }
    if hypercube && let Ok(t) = transmit(plan, schedule) {
        return Some(t.steps);
    }
    (schedule == Schedule::Phased).then(|| {
        plan.phases
            .iter()
            .map(|p| p.transfers.iter().map(|t| t.units).max().unwrap_or(0))
            .fold(0u64, u64::saturating_add)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::topology::{Topology, TopologySpec};

    /// The shortcut for a plan that moves nothing gives what the schedules compute.
    #[test]
    fn a_plan_that_moves_nothing_is_predicted_as_the_schedules_compute_it() {
        let schedules = [
            Schedule::Phased,
            Schedule::Overlap,
            Schedule::Pipeline,
            Schedule::PipelinePerProcessor,
        ];
        for (spec, rule) in [
            ("hypercube:0", Algorithm::Cwa),
            ("hypercube:1", Algorithm::Cwa),
            ("hypercube:3", Algorithm::Dem),
            ("ring:6", Algorithm::Diffusion),
        ] {
            let network = spec.parse::<TopologySpec>().unwrap().build().unwrap();
            // Balanced loads: the rule's phases carry nothing.
            let loads = vec![5u64; network.node_count()];
            let options = BalanceOptions::new();
            let plan = balance_on(&network, rule, &loads, &options).unwrap().plan;
            assert!(plan.transfers().all(|t| t.units == 0), "{spec}");
            for schedule in schedules {
                let computed = if matches!(network, Network::Hypercube(_)) {
                    transmit(&plan, schedule).ok().map(|t| t.steps)
                } else {
                    (schedule == Schedule::Phased).then_some(0)
                };
                assert_eq!(
                    predict(&plan, &network, schedule),
                    computed,
                    "{spec} {schedule:?}"
                );
                assert_eq!(computed.unwrap_or(0), 0, "{spec} {schedule:?}");
            }
        }
    }
}
