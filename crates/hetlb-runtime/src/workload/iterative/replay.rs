//! Other rules, offline, on the rebalances a run recorded ([`super::dump`]): each rule is run
//! by the core's planner on exactly the inputs the recorded rule saw (loads per rank, the
//! capacities it weighed, the topology), and the outcomes are set beside what the run did:
//! imbalance after, units moved, task-hops and Σ Tmax (Rim, Jang & Kim 2003, §5.2).

use super::dump::DumpLine;
use hetlb_core::Metrics;
use hetlb_core::advice::{CostModel, Prediction, Trigger, choose};
use hetlb_core::algorithm::{Algorithm, BalanceError, BalanceOptions, balance_on_within};
use hetlb_core::model::{Capacities, ModelError};
use hetlb_core::table::{Table, Text, fixed};
use hetlb_core::topology::Network;
use hetlb_peer::imbalance;
use serde::Serialize;
use thiserror::Error;

/// One rule's outcome on one recorded step, or the recorded run's own.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ReplayOutcome {
    /// The recorded step.
    pub step: u64,
    /// The rule replayed, or `NAME (recorded)` for what the run did.
    pub algorithm: String,
    /// True for what the run did.
    pub recorded: bool,
    /// `max (load ÷ capacity) ÷ average` before.
    pub imbalance_before: f64,
    /// The same after.
    pub imbalance_after: f64,
    /// Units that changed rank.
    pub units_moved: u64,
    /// Units × links crossed (replayed rules only).
    pub task_hops: Option<u128>,
    /// Σ over phases of the largest transfer (replayed rules only).
    pub sum_tmax: Option<u128>,
    /// Phases or rounds of the plan (replayed rules only).
    pub phases: Option<usize>,
}

/// One rule's outcomes averaged over the steps.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Mean {
    /// The rule (or the recorded run), as in [`ReplayOutcome::algorithm`].
    pub algorithm: String,
    /// Mean imbalance after.
    pub imbalance_after: f64,
    /// Mean units moved.
    pub units_moved: f64,
    /// Mean task-hops, over the steps that count them.
    pub task_hops: Option<f64>,
    /// Mean Σ Tmax, over the steps that count it.
    pub sum_tmax: Option<f64>,
}

/// The outcomes of each rule (and of the recorded run) averaged over the steps, in the order
/// the rules first appear.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::iterative::{dump, replay};
/// use hetlb_core::topology::TopologySpec;
/// let text = "{\"step\":1,\"algorithm\":\"dishet\",\"topology\":\"ring:3\",\"capacities\":[1,1,1],\
///             \"loads_before\":[6,0,0],\"loads_after\":[2,2,2]}";
/// let line = dump::read(text.as_bytes()).next().unwrap().unwrap();
/// let ring = "ring:3".parse::<TopologySpec>().unwrap().build().unwrap();
/// let rules = replay::rules_for(&ring);
/// let means = replay::means(&replay::step(&line, &ring, &rules, u64::MAX).unwrap());
/// assert_eq!(means[0].algorithm, "dishet (recorded)");
/// assert_eq!(means[0].units_moved, 4.0);
/// assert_eq!(means[0].task_hops, None);
/// ```
pub fn means(outcomes: &[ReplayOutcome]) -> Vec<Mean> {
    let mut names: Vec<&str> = Vec::new();
    for o in outcomes {
        if !names.contains(&o.algorithm.as_str()) {
            names.push(&o.algorithm);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let rows: Vec<&ReplayOutcome> =
                outcomes.iter().filter(|o| o.algorithm == name).collect();
            let n = rows.len() as f64;
            let mean = |f: &dyn Fn(&ReplayOutcome) -> Option<f64>| {
                let v: Vec<f64> = rows.iter().filter_map(|o| f(o)).collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            Mean {
                algorithm: name.to_string(),
                imbalance_after: rows.iter().map(|o| o.imbalance_after).sum::<f64>() / n,
                units_moved: rows.iter().map(|o| o.units_moved as f64).sum::<f64>() / n,
                task_hops: mean(&|o| o.task_hops.map(|x| x as f64)),
                sum_tmax: mean(&|o| o.sum_tmax.map(|x| x as f64)),
            }
        })
        .collect()
}

/// Why a step could not be replayed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ReplayError {
    /// The recorded capacities are not capacities.
    #[error("step {step}: capacities")]
    Capacities {
        /// The recorded step.
        step: u64,
        /// What the model found.
        #[source]
        source: ModelError,
    },
    /// A rule runs on hypercubes only and the recorded ranks are not one.
    #[error("{rule} runs on a hypercube only, and the recorded ranks are not one")]
    NotOnHypercube {
        /// The rule.
        rule: Algorithm,
    },
    /// A rule refused the recorded inputs (or outgrew `max_transfers`).
    #[error("step {step}: {rule}")]
    Rule {
        /// The recorded step.
        step: u64,
        /// The rule.
        rule: Algorithm,
        /// The planner's refusal.
        #[source]
        source: BalanceError,
    },
}

/// Every rule that can run on `network`: all of them on a hypercube, the others elsewhere.
///
/// # Example
/// ```
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_runtime::workload::iterative::replay::rules_for;
/// let ring = "ring:6".parse::<TopologySpec>().unwrap().build().unwrap();
/// assert!(rules_for(&ring).iter().all(|r| !r.needs_hypercube()));
/// ```
pub fn rules_for(network: &Network) -> Vec<Algorithm> {
    let cube = matches!(network, Network::Hypercube(_));
    Algorithm::all()
        .filter(|a| cube || !a.needs_hypercube())
        .collect()
}

/// `rule` if it can run on `network`.
///
/// # Errors
/// [`ReplayError::NotOnHypercube`] for a hypercube rule on another network.
pub fn check_rule(rule: Algorithm, network: &Network) -> Result<(), ReplayError> {
    if rule.needs_hypercube() && !matches!(network, Network::Hypercube(_)) {
        return Err(ReplayError::NotOnHypercube { rule });
    }
    Ok(())
}

/// What the run did at `line`, then each of `rules` on the same inputs on `network` (the
/// network the line names, with as many nodes as it has loads): one [`ReplayOutcome`] each. A
/// rule's plan may record at most `max_transfers` transfers.
///
/// # Errors
/// [`ReplayError`] for capacities that are not, or a rule that refuses the inputs.
///
/// # Complexity
/// As one `balance_on` per rule.
///
/// # Example
/// ```
/// use hetlb_core::algorithm::Algorithm;
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_runtime::workload::iterative::{dump, replay};
/// let text = r#"{"step":1,"algorithm":"cwa","topology":"hypercube:2","capacities":[1,1,1,1],"loads_before":[8,0,0,0],"loads_after":[2,2,2,2]}"#;
/// let line = dump::read(text.as_bytes()).next().unwrap().unwrap();
/// let cube = "hypercube:2".parse::<TopologySpec>().unwrap().build().unwrap();
/// let out = replay::step(&line, &cube, &[Algorithm::Dishet], u64::MAX).unwrap();
/// assert_eq!(out[0].algorithm, "cwa (recorded)");
/// assert_eq!(out[0].units_moved, 6);
/// assert!(out[1].imbalance_after < out[1].imbalance_before);
/// ```
pub fn step(
    line: &DumpLine,
    network: &Network,
    rules: &[Algorithm],
    max_transfers: u64,
) -> Result<Vec<ReplayOutcome>, ReplayError> {
    let caps = &line.capacities;
    let before = imbalance(&line.loads_before, caps);
    let mut out = vec![ReplayOutcome {
        step: line.step,
        algorithm: format!("{} (recorded)", line.algorithm),
        recorded: true,
        imbalance_before: before,
        imbalance_after: imbalance(&line.loads_after, caps),
        units_moved: line
            .loads_before
            .iter()
            .zip(&line.loads_after)
            .map(|(&b, &a)| a.saturating_sub(b))
            .sum(),
        task_hops: None,
        sum_tmax: None,
        phases: None,
    }];
    for &rule in rules {
        let capacities =
            Some(
                Capacities::new(caps.clone()).map_err(|source| ReplayError::Capacities {
                    step: line.step,
                    source,
                })?,
            );
        let options = BalanceOptions::new().capacities(capacities.clone());
        let run = balance_on_within(network, rule, &line.loads_before, &options, max_transfers)
            .map_err(|source| ReplayError::Rule {
                step: line.step,
                rule,
                source,
            })?;
        let m = Metrics::of(&run.plan, capacities.as_ref());
        out.push(ReplayOutcome {
            step: line.step,
            algorithm: rule.name().to_string(),
            recorded: false,
            imbalance_before: before,
            imbalance_after: m.weighted_imbalance,
            units_moved: m.units_moved,
            task_hops: Some(m.task_hops),
            sum_tmax: Some(m.sum_tmax),
            phases: Some(m.phases),
        });
    }
    Ok(out)
}

/// What rule `auto` with a trigger would have decided at one recorded step: every
/// candidate's prediction at the recorded speeds, the one it follows, and whether it moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AutoDecision {
    /// The recorded step.
    pub step: u64,
    /// The rule the run followed.
    pub recorded: String,
    /// The candidate `auto` follows.
    pub chosen: Algorithm,
    /// Its prediction.
    pub prediction: Prediction,
    /// Predicted net seconds over the horizon: `horizon · gain − move`.
    pub net_gain: f64,
    /// True when the trigger lets the move go ahead (and the plan moves something).
    pub moves: bool,
    /// Every candidate, in the order given.
    pub candidates: Vec<(Algorithm, Prediction)>,
}

/// What `auto` over `rules`, with `trigger` and the move cost `model` (seconds per message
/// and per unit), would have decided at `line` — the peer balancer's own decision on the
/// recorded inputs: each rule planned with the capacities the run weighed, predicted at the
/// speeds it measured ([`hetlb_core::advice::choose`], [`Trigger::moves`]). `None` when the
/// step recorded no measured speeds.
///
/// # Errors
/// [`ReplayError`] for capacities that are not, or a rule that refuses the inputs.
///
/// # Example
/// ```
/// use hetlb_core::advice::{CostModel, Trigger};
/// use hetlb_core::algorithm::Algorithm;
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_runtime::workload::iterative::{dump, replay};
/// let text = r#"{"step":1,"algorithm":"cwa","topology":"hypercube:2","capacities":[1,1,1,1],"measured_speeds":[100,100,100,100],"loads_before":[800,0,0,0],"loads_after":[200,200,200,200]}"#;
/// let line = dump::read(text.as_bytes()).next().unwrap().unwrap();
/// let cube = "hypercube:2".parse::<TopologySpec>().unwrap().build().unwrap();
/// let trigger = Trigger::Auto { horizon: 10, margin: 1.0 };
/// let dear = CostModel { seconds_per_message: 0.0, seconds_per_byte: 1.0 };
/// let d = replay::auto_step(&line, &cube, &[Algorithm::Cwa, Algorithm::Oem], trigger, dear, u64::MAX)
///     .unwrap()
///     .unwrap();
/// assert_eq!(d.prediction.gain_per_iteration, 6.0); // 8 s → 2 s per iteration
/// assert!(!d.moves); // 60 s of gain against 600 units at 1 s each
/// ```
pub fn auto_step(
    line: &DumpLine,
    network: &Network,
    rules: &[Algorithm],
    trigger: Trigger,
    model: CostModel,
    max_transfers: u64,
) -> Result<Option<AutoDecision>, ReplayError> {
    let Some(speeds) = &line.measured_speeds else {
        return Ok(None);
    };
    let capacities =
        Capacities::new(line.capacities.clone()).map_err(|source| ReplayError::Capacities {
            step: line.step,
            source,
        })?;
    let mut candidates = Vec::with_capacity(rules.len());
    for &rule in rules {
        let options = BalanceOptions::new().capacities(Some(capacities.clone()));
        let plan = balance_on_within(network, rule, &line.loads_before, &options, max_transfers)
            .map_err(|source| ReplayError::Rule {
                step: line.step,
                rule,
                source,
            })?
            .plan;
        let Ok(p) = Prediction::of(&plan, speeds, 1, &model) else {
            return Ok(None);
        };
        candidates.push((rule, p));
    }
    let horizon = match trigger {
        Trigger::Auto { horizon, .. } => horizon,
        _ => 1,
    };
    let predictions: Vec<Prediction> = candidates.iter().map(|c| c.1).collect();
    let Some(i) = choose(&predictions, horizon) else {
        return Ok(None);
    };
    let (chosen, prediction) = candidates[i];
    Ok(Some(AutoDecision {
        step: line.step,
        recorded: line.algorithm.clone(),
        chosen,
        prediction,
        net_gain: prediction.net_gain(horizon),
        moves: prediction.units_moved > 0 && trigger.moves(&prediction),
        candidates,
    }))
}

/// [`auto_step`]'s decisions as CSV: step, recorded rule, the rule `auto` follows, its
/// predicted gain per iteration, move and net gain (seconds), and whether it moves.
pub fn decisions_csv(decisions: &[AutoDecision]) -> Table {
    let mut t = Table::new([
        "step",
        "recorded",
        "auto_chooses",
        "gain_per_iteration",
        "move_seconds",
        "net_gain",
        "moves",
    ]);
    for d in decisions {
        t.row([
            d.step.to_string(),
            d.recorded.clone(),
            d.chosen.name().to_string(),
            format!("{:.9}", d.prediction.gain_per_iteration),
            format!("{:.9}", d.prediction.move_seconds),
            format!("{:.9}", d.net_gain),
            d.moves.to_string(),
        ]);
    }
    t
}

/// [`auto_step`]'s decisions as a table, and how often `auto` would have moved.
pub fn decisions_text(decisions: &[AutoDecision], trigger: Trigger) -> Text {
    let mut text = Text::new();
    text.line(format!(
        "What rule auto with the trigger {trigger} would have decided, at the speeds the run \
         measured:"
    ));
    let mut t = Table::new([
        "step",
        "recorded",
        "auto follows",
        "gain / iteration s",
        "move s",
        "net gain s",
        "decision",
    ]);
    for d in decisions {
        t.row([
            d.step.to_string(),
            d.recorded.clone(),
            d.chosen.name().to_string(),
            fixed(d.prediction.gain_per_iteration, 6),
            fixed(d.prediction.move_seconds, 6),
            fixed(d.net_gain, 6),
            if d.moves { "move" } else { "hold" }.to_string(),
        ]);
    }
    text.table(t);
    let held = decisions.iter().filter(|d| !d.moves).count();
    text.line(format!(
        "auto would have moved at {} of {} steps and held back at {held}.",
        decisions.len() - held,
        decisions.len()
    ));
    text
}
