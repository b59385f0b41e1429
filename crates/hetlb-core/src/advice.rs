//! Whether a move pays: the predicted gain of a plan against its predicted cost, before any
//! unit moves.
//!
//! An iterative application whose ranks hold `x_i` units and process `s_i` units per second
//! spends `T(x) = max_i x_i / s_i` seconds per iteration (the slowest rank sets the pace).
//! A plan that ends at `y` saves `T(x) − T(y)` seconds per iteration; over a horizon of `H`
//! iterations the gain is `H · (T(x) − T(y))`. Moving costs time too, and [`CostModel`]
//! predicts it from the plan's own transfers:
//!
//! * a transfer of `b` bytes costs its two ends `α + β·b` seconds (`α` per message, `β` per
//!   byte — Hockney's model);
//! * within a phase, a rank's sends and receives are serialised and ranks work in parallel,
//!   so a phase lasts as long as its busiest rank; phases follow each other.
//!
//! The move is worth it when `gain > margin · cost` ([`Trigger::Auto`]); [`Trigger::Always`]
//! moves whatever the prediction (the behaviour of every balancer that does not predict).
//! [`CostModel::learn`] fits `α` and `β` to the moves already measured (least squares,
//! both kept non-negative), so the model follows the machine it runs on.
//!
//! ```
//! use hetlb_core::advice::{CostModel, Prediction, Trigger};
//! use hetlb_core::{balance, Algorithm, BalanceOptions};
//! let loads = [800, 100, 100, 0];
//! let speeds = [1000.0; 4];                       // units per second, measured
//! let plan = balance(Algorithm::Cwa, &loads, &BalanceOptions::default()).unwrap();
//! let model = CostModel { seconds_per_message: 1e-4, seconds_per_byte: 1e-8 };
//! let p = Prediction::of(&plan, &speeds, 64, &model).unwrap();
//! assert_eq!(p.iteration_seconds_before, 0.8);
//! assert_eq!(p.iteration_seconds_after, 0.25);
//! assert!(Trigger::Auto { horizon: 10, margin: 2.0 }.moves(&p));
//! assert!(!Trigger::Auto { horizon: 10, margin: 2.0 }.moves(&Prediction::of(
//!     &balance(Algorithm::Cwa, &[250; 4], &BalanceOptions::default()).unwrap(),
//!     &speeds, 64, &model).unwrap()));
//! ```

use crate::plan::Plan;
use crate::routing::{Routing, RoutingError};
use crate::topology::Network;
use crate::{Algorithm, BalanceError, BalanceOptions, Capacities, balance_on_within};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why a prediction could not be made.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum AdviceError {
    /// The speeds do not match the plan's nodes.
    #[error("speeds: {speeds} values for {nodes} nodes")]
    SpeedCount {
        /// Values given.
        speeds: usize,
        /// Nodes in the plan.
        nodes: usize,
    },
    /// A speed is zero, negative or not finite.
    #[error("speeds: value {index} ({value}) must be positive and finite")]
    Speed {
        /// Position of the bad value.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A cost coefficient is negative or not finite.
    #[error("cost model: {field} ({value}) must be finite and not negative")]
    Cost {
        /// The coefficient's name.
        field: &'static str,
        /// The value.
        value: f64,
    },
    /// The trigger's margin is negative or not finite.
    #[error("margin ({0}) must be finite and not negative")]
    Margin(f64),
}

/// Hockney's cost of moving data: `seconds_per_message + seconds_per_byte · bytes` for each
/// message, at each of its two ends.
///
/// The bytes are `units × bytes_per_unit` of the prediction ([`Prediction::of`]). The peer
/// balancer's trigger predicts with one byte per unit, so there `seconds_per_byte` is seconds
/// per *unit* of load (its option `move_cost=ALPHA,BETA`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// Start-up cost of one message, in seconds (`α`).
    pub seconds_per_message: f64,
    /// Cost of one byte, in seconds (`β`, the inverse of the bandwidth).
    pub seconds_per_byte: f64,
}

/// One move measured: how many messages and bytes the busiest rank handled, and how long
/// the move took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MoveSample {
    /// Messages sent or received by the busiest rank, summed over phases.
    pub messages: f64,
    /// Bytes sent or received by the busiest rank, summed over phases.
    pub bytes: f64,
    /// Measured seconds of the move.
    pub seconds: f64,
}

impl CostModel {
    /// A model with no cost (every move free): the prediction before anything was measured
    /// on a machine with no probe.
    pub const FREE: CostModel = CostModel {
        seconds_per_message: 0.0,
        seconds_per_byte: 0.0,
    };

    /// Checks that both coefficients are finite and not negative.
    ///
    /// # Errors
    /// [`AdviceError::Cost`] naming the bad coefficient.
    pub fn validate(&self) -> Result<(), AdviceError> {
        for (field, value) in [
            ("seconds_per_message", self.seconds_per_message),
            ("seconds_per_byte", self.seconds_per_byte),
        ] {
            if !value.is_finite() || value < 0.0 {
                return Err(AdviceError::Cost { field, value });
            }
        }
        Ok(())
    }

    /// Seconds for `messages` messages carrying `bytes` bytes in all, handled one after the
    /// other.
    pub fn seconds(&self, messages: f64, bytes: f64) -> f64 {
        self.seconds_per_message * messages + self.seconds_per_byte * bytes
    }

    /// The least-squares fit of `α` and `β` to measured moves (`seconds ≈ α·messages +
    /// β·bytes`), each kept non-negative (a coefficient that would fit negative is set to 0
    /// and the other refitted alone). `None` without a sample that moved something.
    ///
    /// # Complexity
    /// `O(samples)`.
    ///
    /// ```
    /// use hetlb_core::advice::{CostModel, MoveSample};
    /// let truth = CostModel { seconds_per_message: 2e-5, seconds_per_byte: 1e-9 };
    /// let samples: Vec<MoveSample> = [(4.0, 1e6), (8.0, 4e6), (2.0, 5e5)]
    ///     .iter()
    ///     .map(|&(m, b)| MoveSample { messages: m, bytes: b, seconds: truth.seconds(m, b) })
    ///     .collect();
    /// let fit = CostModel::learn(&samples).unwrap();
    /// assert!((fit.seconds_per_message - 2e-5).abs() < 1e-12);
    /// assert!((fit.seconds_per_byte - 1e-9).abs() < 1e-15);
    /// ```
    pub fn learn(samples: &[MoveSample]) -> Option<CostModel> {
        let usable: Vec<&MoveSample> = samples
            .iter()
            .filter(|s| {
                s.seconds.is_finite()
                    && s.seconds >= 0.0
                    && s.messages.is_finite()
                    && s.bytes.is_finite()
                    && (s.messages > 0.0 || s.bytes > 0.0)
            })
            .collect();
        if usable.is_empty() {
            return None;
        }
        let (mut mm, mut bb, mut mb, mut mt, mut bt) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for s in &usable {
            mm += s.messages * s.messages;
            bb += s.bytes * s.bytes;
            mb += s.messages * s.bytes;
            mt += s.messages * s.seconds;
            bt += s.bytes * s.seconds;
        }
        let alone = |xt: f64, xx: f64| if xx > 0.0 { (xt / xx).max(0.0) } else { 0.0 };
        let det = mm * bb - mb * mb;
        if det > 1e-12 * mm * bb {
            let alpha = (mt * bb - bt * mb) / det;
            let beta = (bt * mm - mt * mb) / det;
            if alpha >= 0.0 && beta >= 0.0 {
                return Some(CostModel {
                    seconds_per_message: alpha,
                    seconds_per_byte: beta,
                });
            }
        }
        // Degenerate or a negative coefficient: the better of the two one-coefficient fits.
        let by_message = CostModel {
            seconds_per_message: alone(mt, mm),
            seconds_per_byte: 0.0,
        };
        let by_byte = CostModel {
            seconds_per_message: 0.0,
            seconds_per_byte: alone(bt, bb),
        };
        let residual = |m: &CostModel| {
            usable
                .iter()
                .map(|s| (m.seconds(s.messages, s.bytes) - s.seconds).powi(2))
                .sum::<f64>()
        };
        Some(if residual(&by_message) <= residual(&by_byte) {
            by_message
        } else {
            by_byte
        })
    }

    /// The predicted seconds of `plan` when each unit is `bytes_per_unit` bytes: for each
    /// phase, the busiest rank's messages and bytes (sent plus received), summed over phases.
    /// Also returns the busiest rank's totals, the [`MoveSample`] to compare with the
    /// measured move.
    ///
    /// # Complexity
    /// `O(N · phases + T)`.
    pub fn predict(&self, plan: &Plan, bytes_per_unit: u64) -> (f64, MoveSample) {
        let n = plan.nodes();
        let mut total = MoveSample {
            messages: 0.0,
            bytes: 0.0,
            seconds: 0.0,
        };
        let mut messages = vec![0u64; n];
        let mut bytes = vec![0u128; n];
        for phase in &plan.phases {
            messages.iter_mut().for_each(|m| *m = 0);
            bytes.iter_mut().for_each(|b| *b = 0);
            for t in &phase.transfers {
                let b = u128::from(t.units) * u128::from(bytes_per_unit);
                for end in [t.from, t.to] {
                    if end < n {
                        messages[end] += 1;
                        bytes[end] += b;
                    }
                }
            }
            let busiest = (0..n)
                .map(|i| (self.seconds(messages[i] as f64, bytes[i] as f64), i))
                .max_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((seconds, i)) = busiest {
                total.seconds += seconds;
                total.messages += messages[i] as f64;
                total.bytes += bytes[i] as f64;
            }
        }
        (total.seconds, total)
    }
}

/// What a plan is predicted to bring and to cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Prediction {
    /// Seconds per iteration before the move: `max_i x_i / s_i`.
    pub iteration_seconds_before: f64,
    /// Seconds per iteration after the move: `max_i y_i / s_i`.
    pub iteration_seconds_after: f64,
    /// Seconds saved per iteration (negative when the plan makes things worse).
    pub gain_per_iteration: f64,
    /// Predicted seconds of the move ([`CostModel::predict`]).
    pub move_seconds: f64,
    /// Units moved, each hop counted.
    pub units_moved: u128,
    /// Bytes moved, each hop counted.
    pub bytes_moved: u128,
    /// Task messages of the plan.
    pub messages: u64,
}

impl Prediction {
    /// Predicts `plan` at the measured `speeds` (units per second, one per node), units of
    /// `bytes_per_unit` bytes, and `model`'s transfer cost.
    ///
    /// # Errors
    /// [`AdviceError`] for a speed count or value, or a cost coefficient, that is not usable.
    ///
    /// # Complexity
    /// `O(N · phases + T)`.
    pub fn of(
        plan: &Plan,
        speeds: &[f64],
        bytes_per_unit: u64,
        model: &CostModel,
    ) -> Result<Self, AdviceError> {
        model.validate()?;
        if speeds.len() != plan.nodes() {
            return Err(AdviceError::SpeedCount {
                speeds: speeds.len(),
                nodes: plan.nodes(),
            });
        }
        if let Some((index, &value)) = speeds
            .iter()
            .enumerate()
            .find(|(_, s)| !s.is_finite() || **s <= 0.0)
        {
            return Err(AdviceError::Speed { index, value });
        }
        let before = iteration_seconds(&plan.initial, speeds);
        let after = iteration_seconds(&plan.final_loads, speeds);
        let units_moved: u128 = plan.transfers().map(|t| u128::from(t.units)).sum();
        Ok(Prediction {
            iteration_seconds_before: before,
            iteration_seconds_after: after,
            gain_per_iteration: before - after,
            move_seconds: model.predict(plan, bytes_per_unit).0,
            units_moved,
            bytes_moved: units_moved * u128::from(bytes_per_unit),
            messages: plan.transfers().count() as u64,
        })
    }

    /// Predicted net seconds saved over `horizon` iterations: `horizon · gain − move`.
    pub fn net_gain(&self, horizon: u64) -> f64 {
        horizon as f64 * self.gain_per_iteration - self.move_seconds
    }
}

/// The seconds of one iteration: the slowest rank's `x_i / s_i`.
///
/// # Complexity
/// `O(N)`.
pub fn iteration_seconds(loads: &[u64], speeds: &[f64]) -> f64 {
    loads
        .iter()
        .zip(speeds)
        .map(|(&x, &s)| x as f64 / s)
        .fold(0.0, f64::max)
}

/// When a balancer moves.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Trigger {
    /// Move at every call, whatever the prediction.
    #[default]
    Always,
    /// Move only when the gain over `horizon` iterations exceeds `margin` times the move's
    /// predicted cost.
    Auto {
        /// Iterations the application expects to run before the next call.
        horizon: u64,
        /// Safety factor on the cost (≥ 0; 1 moves as soon as the gain covers the cost).
        margin: f64,
    },
}

impl Trigger {
    /// The default horizon of `auto` (iterations).
    pub const DEFAULT_HORIZON: u64 = 10;
    /// The default margin of `auto`.
    pub const DEFAULT_MARGIN: f64 = 1.5;

    /// Whether a move predicted as `p` goes ahead.
    pub fn moves(&self, p: &Prediction) -> bool {
        match *self {
            Trigger::Always => true,
            Trigger::Auto { horizon, margin } => {
                p.gain_per_iteration > 0.0
                    && horizon as f64 * p.gain_per_iteration > margin * p.move_seconds
            }
        }
    }
}

impl std::str::FromStr for Trigger {
    type Err = String;

    /// `always`, or `auto[:HORIZON[:MARGIN]]` (defaults 10 and 1.5).
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.trim().split(':');
        match parts.next() {
            Some("always") if parts.clone().next().is_none() => Ok(Trigger::Always),
            Some("auto") => {
                let horizon = match parts.next() {
                    None => Self::DEFAULT_HORIZON,
                    Some(h) => h
                        .parse::<u64>()
                        .ok()
                        .filter(|&h| h >= 1)
                        .ok_or_else(|| format!("horizon '{h}' is not a whole number ≥ 1"))?,
                };
                let margin = match parts.next() {
                    None => Self::DEFAULT_MARGIN,
                    Some(m) => m
                        .parse::<f64>()
                        .ok()
                        .filter(|m| m.is_finite() && *m >= 0.0)
                        .ok_or_else(|| format!("margin '{m}' is not a number ≥ 0"))?,
                };
                if parts.next().is_some() {
                    return Err(format!("'{s}': expected auto[:HORIZON[:MARGIN]]"));
                }
                Ok(Trigger::Auto { horizon, margin })
            }
            _ => Err(format!(
                "'{s}' is not a trigger (expected always or auto[:HORIZON[:MARGIN]])"
            )),
        }
    }
}

impl std::fmt::Display for Trigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trigger::Always => f.write_str("always"),
            Trigger::Auto { horizon, margin } => write!(f, "auto:{horizon}:{margin}"),
        }
    }
}

/// One candidate of [`Advice`]: a rule, a routing, and its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Candidate {
    /// The rule.
    pub algorithm: Algorithm,
    /// How its units travel.
    pub routing: Routing,
    /// The loads the rule ends at.
    pub final_loads: Vec<u64>,
    /// Its prediction.
    pub prediction: Prediction,
    /// Whether the trigger lets this candidate move.
    pub moves: bool,
}

impl Candidate {
    /// A candidate as another planner (the peer balancer's `advise`) evaluated it.
    pub fn new(
        algorithm: Algorithm,
        routing: Routing,
        final_loads: Vec<u64>,
        prediction: Prediction,
        moves: bool,
    ) -> Self {
        Self {
            algorithm,
            routing,
            final_loads,
            prediction,
            moves,
        }
    }
}

/// Every candidate's prediction and the one to follow: what `advise` answers before anything
/// moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Advice {
    /// The candidates, in the order asked.
    pub candidates: Vec<Candidate>,
    /// The candidate with the best net gain over the horizon among those the trigger lets
    /// move (`None`: stay as you are).
    pub choice: Option<usize>,
    /// The horizon the net gains were computed over.
    pub horizon: u64,
    /// Calls the trigger `auto` will skip before it looks at the loads again (the peer
    /// balancer's: after a check that found nothing worth moving it waits longer). While it
    /// is above 0 the next `rebalance` moves nothing, and `choice` is `None` to say so.
    pub skips: u64,
}

impl Advice {
    /// Advice from candidates evaluated elsewhere (the peer balancer's `advise`): `choice`
    /// is the candidate to follow, `None` to stay.
    pub fn new(candidates: Vec<Candidate>, choice: Option<usize>, horizon: u64) -> Self {
        Self {
            candidates,
            choice,
            horizon,
            skips: 0,
        }
    }

    /// The same advice when the next `skips` calls are skipped by the trigger: no choice
    /// while `skips > 0` (the next `rebalance` moves nothing).
    #[must_use]
    pub fn skipping(mut self, skips: u64) -> Self {
        self.skips = skips;
        if skips > 0 {
            self.choice = None;
        }
        self
    }
}

/// Why `advise` could not answer.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum AdviseError {
    /// A rule refused the loads or the network.
    #[error("{algorithm}: {source}")]
    Balance {
        /// The rule.
        algorithm: Algorithm,
        /// Its error.
        #[source]
        source: BalanceError,
    },
    /// The speeds or the cost model are not usable.
    #[error(transparent)]
    Advice(#[from] AdviceError),
    /// A plan did not conserve its load (a defect in a rule).
    #[error(transparent)]
    Routing(#[from] RoutingError),
}

/// What an application asks `advise`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Question<'a> {
    /// Units each node holds now.
    pub loads: &'a [u64],
    /// Units each node processes per second (measured).
    pub speeds: &'a [f64],
    /// Bytes of one unit on the wire.
    pub bytes_per_unit: u64,
    /// The cost of moving.
    pub model: CostModel,
    /// When a move goes ahead; `Always` still ranks the candidates by net gain.
    pub trigger: Trigger,
    /// The most transfers one candidate's plan may hold (24 bytes each) before it is refused
    /// ([`balance_on_within`]); unlimited by default.
    pub max_transfers: u64,
}

impl<'a> Question<'a> {
    /// A question with units of 8 bytes, a free cost model and the trigger `auto` with its
    /// defaults.
    pub fn new(loads: &'a [u64], speeds: &'a [f64]) -> Self {
        Self {
            loads,
            speeds,
            bytes_per_unit: 8,
            model: CostModel::FREE,
            trigger: Trigger::Auto {
                horizon: Trigger::DEFAULT_HORIZON,
                margin: Trigger::DEFAULT_MARGIN,
            },
            max_transfers: u64::MAX,
        }
    }

    /// The horizon net gains are ranked over (the trigger's, or 1 for `always`).
    pub fn horizon(&self) -> u64 {
        match self.trigger {
            Trigger::Auto { horizon, .. } => horizon,
            Trigger::Always => 1,
        }
    }
}

/// Plans every `(algorithm, routing)` candidate on `network` with capacities equal to the
/// measured speeds (for the rules that use capacities), predicts each, and picks the one to
/// follow. Nothing moves.
///
/// # Errors
/// [`AdviseError`] when a rule refuses the input, or the speeds or the cost model are not
/// usable.
///
/// # Complexity
/// The sum of the candidates' planning costs, plus `O(N · phases + T)` per prediction.
///
/// ```
/// use hetlb_core::advice::{advise, CostModel, Question};
/// use hetlb_core::routing::Routing;
/// use hetlb_core::topology::{Hypercube, Network};
/// use hetlb_core::Algorithm;
/// let net = Network::Hypercube(Hypercube::new(3).unwrap());
/// let loads = [900, 0, 0, 0, 0, 0, 0, 0];
/// let speeds = [100.0; 8];
/// let mut q = Question::new(&loads, &speeds);
/// q.model = CostModel { seconds_per_message: 1e-3, seconds_per_byte: 1e-7 };
/// let candidates = [(Algorithm::Cwa, Routing::Paper), (Algorithm::Cwa, Routing::Direct)];
/// let a = advise(&net, &candidates, &q).unwrap();
/// let (paper, direct) = (&a.candidates[0].prediction, &a.candidates[1].prediction);
/// assert_eq!((paper.units_moved, direct.units_moved), (1_348, 787)); // every hop counted
/// // Yet the hop-by-hop route is predicted faster here: node 0 is the bottleneck either
/// // way, and it sends 3 messages (one per dimension) instead of 7.
/// assert!(paper.move_seconds < direct.move_seconds);
/// assert_eq!(a.candidates[a.choice.unwrap()].routing, Routing::Paper);
/// ```
pub fn advise(
    network: &Network,
    candidates: &[(Algorithm, Routing)],
    question: &Question<'_>,
) -> Result<Advice, AdviseError> {
    let capacities = Capacities::new(question.speeds.to_vec()).ok();
    let mut out = Vec::with_capacity(candidates.len());
    for &(algorithm, routing) in candidates {
        let options = BalanceOptions {
            capacities: capacities.clone().filter(|_| algorithm.uses_capacities()),
            ..BalanceOptions::default()
        };
        let plan = balance_on_within(
            network,
            algorithm,
            question.loads,
            &options,
            question.max_transfers,
        )
        .map_err(|source| AdviseError::Balance { algorithm, source })?
        .plan;
        let plan = routing.route(plan)?;
        let prediction = Prediction::of(
            &plan,
            question.speeds,
            question.bytes_per_unit,
            &question.model,
        )?;
        out.push(Candidate {
            algorithm,
            routing,
            final_loads: plan.final_loads,
            moves: question.trigger.moves(&prediction),
            prediction,
        });
    }
    let horizon = question.horizon();
    let movable: Vec<Prediction> = out
        .iter()
        .map(|c| {
            let mut p = c.prediction;
            if !c.moves {
                p.gain_per_iteration = f64::NEG_INFINITY;
            }
            p
        })
        .collect();
    Ok(Advice::new(out, best(&movable, horizon), horizon))
}

/// The candidate with the best predicted net gain over `horizon` iterations (ties go to the
/// first), or `None` when no candidate gains anything: what rule `auto` picks.
///
/// # Complexity
/// `O(candidates)`.
pub fn best(predictions: &[Prediction], horizon: u64) -> Option<usize> {
    predictions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.net_gain(horizon) > 0.0)
        .fold(None, |best: Option<(usize, f64)>, (i, p)| {
            let g = p.net_gain(horizon);
            match best {
                Some((_, b)) if b >= g => best,
                _ => Some((i, g)),
            }
        })
        .map(|(i, _)| i)
}

/// The candidate rule `auto` follows: the best net gain over `horizon` ([`best`]), or, when
/// none gains, the least loss (whether to move at all is the trigger's business). Ties go to
/// the first. `None` only without candidates.
///
/// # Complexity
/// `O(candidates)`.
///
/// ```
/// use hetlb_core::advice::{choose, CostModel, Prediction};
/// use hetlb_core::{balance, Algorithm, BalanceOptions};
/// let plan = balance(Algorithm::Cwa, &[8, 0, 0, 0], &BalanceOptions::default()).unwrap();
/// let p = Prediction::of(&plan, &[1.0; 4], 1, &CostModel::FREE).unwrap();
/// let mut worse = p;
/// worse.gain_per_iteration -= 1.0;
/// assert_eq!(choose(&[worse, p], 1), Some(1));
/// assert_eq!(choose(&[], 1), None);
/// ```
pub fn choose(predictions: &[Prediction], horizon: u64) -> Option<usize> {
    best(predictions, horizon).or_else(|| {
        (0..predictions.len()).max_by(|&a, &b| {
            predictions[a]
                .net_gain(horizon)
                .total_cmp(&predictions[b].net_gain(horizon))
                .then(b.cmp(&a))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, BalanceOptions, balance};
    use proptest::prelude::*;

    fn model() -> CostModel {
        CostModel {
            seconds_per_message: 1e-4,
            seconds_per_byte: 1e-8,
        }
    }

    #[test]
    fn a_balanced_vector_is_never_worth_moving() {
        let plan = balance(Algorithm::Dem, &[5; 8], &BalanceOptions::default()).unwrap();
        let p = Prediction::of(&plan, &[10.0; 8], 64, &model()).unwrap();
        assert_eq!(p.gain_per_iteration, 0.0);
        assert_eq!(p.move_seconds, 0.0);
        let auto = Trigger::Auto {
            horizon: 1_000_000,
            margin: 0.0,
        };
        assert!(!auto.moves(&p));
        assert!(Trigger::Always.moves(&p));
        assert_eq!(best(&[p], 1_000_000), None);
    }

    #[test]
    fn the_horizon_decides_a_costly_move() {
        // 8 units too many on node 0 at 1 unit/s: 4 s saved per iteration; the move of 4
        // units costs 2 s on each end (one message, 4 units of 0.5 s).
        let plan = balance(Algorithm::Dem, &[12, 4], &BalanceOptions::default()).unwrap();
        let m = CostModel {
            seconds_per_message: 0.0,
            seconds_per_byte: 0.5,
        };
        let p = Prediction::of(&plan, &[1.0, 1.0], 1, &m).unwrap();
        assert_eq!(p.gain_per_iteration, 4.0);
        assert_eq!(p.move_seconds, 2.0);
        // Gain 4 s over one iteration against 2 s × margin.
        assert!(
            !Trigger::Auto {
                horizon: 1,
                margin: 2.0
            }
            .moves(&p)
        );
        assert!(
            Trigger::Auto {
                horizon: 1,
                margin: 1.5
            }
            .moves(&p)
        );
        assert!(
            Trigger::Auto {
                horizon: 2,
                margin: 2.0
            }
            .moves(&p)
        );
    }

    #[test]
    fn bad_inputs_are_named() {
        let plan = Plan::identity(&[1, 2]);
        assert!(matches!(
            Prediction::of(&plan, &[1.0], 8, &model()),
            Err(AdviceError::SpeedCount {
                speeds: 1,
                nodes: 2
            })
        ));
        assert!(matches!(
            Prediction::of(&plan, &[1.0, 0.0], 8, &model()),
            Err(AdviceError::Speed { index: 1, .. })
        ));
        let bad = CostModel {
            seconds_per_message: -1.0,
            seconds_per_byte: 0.0,
        };
        assert!(matches!(
            Prediction::of(&plan, &[1.0, 1.0], 8, &bad),
            Err(AdviceError::Cost {
                field: "seconds_per_message",
                ..
            })
        ));
    }

    #[test]
    fn triggers_parse_and_print() {
        assert_eq!("always".parse::<Trigger>(), Ok(Trigger::Always));
        assert_eq!(
            "auto".parse::<Trigger>(),
            Ok(Trigger::Auto {
                horizon: 10,
                margin: 1.5
            })
        );
        assert_eq!(
            "auto:50:2".parse::<Trigger>(),
            Ok(Trigger::Auto {
                horizon: 50,
                margin: 2.0
            })
        );
        for bad in [
            "sometimes",
            "auto:0",
            "auto:x",
            "auto:5:-1",
            "auto:5:1:9",
            "always:3",
        ] {
            assert!(bad.parse::<Trigger>().is_err(), "{bad}");
        }
        assert_eq!(
            Trigger::Auto {
                horizon: 50,
                margin: 2.0
            }
            .to_string(),
            "auto:50:2"
        );
    }

    #[test]
    fn learning_keeps_coefficients_non_negative() {
        // Seconds that fall with the bytes would fit a negative β: the fit keeps β at 0.
        let samples = [
            MoveSample {
                messages: 1.0,
                bytes: 100.0,
                seconds: 2.0,
            },
            MoveSample {
                messages: 1.0,
                bytes: 1000.0,
                seconds: 1.0,
            },
        ];
        let m = CostModel::learn(&samples).unwrap();
        assert!(m.seconds_per_message >= 0.0 && m.seconds_per_byte >= 0.0);
        assert_eq!(CostModel::learn(&[]), None);
    }

    proptest! {
        /// The prediction agrees with the plan: the iteration times come from its start and
        /// end vectors, and a plan that does not reduce the slowest rank's time never moves
        /// under `auto`.
        #[test]
        fn predictions_follow_the_plan(
            loads in prop::collection::vec(0u64..1000, 8),
            speeds in prop::collection::vec(1u32..10, 8),
            horizon in 1u64..100,
        ) {
            let speeds: Vec<f64> = speeds.into_iter().map(f64::from).collect();
            let options = BalanceOptions {
                capacities: Some(crate::Capacities::new(speeds.clone()).unwrap()),
                ..BalanceOptions::default()
            };
            let plan = balance(Algorithm::Cwa, &loads, &options).unwrap();
            let p = Prediction::of(&plan, &speeds, 8, &model()).unwrap();
            prop_assert_eq!(p.iteration_seconds_before, iteration_seconds(&loads, &speeds));
            prop_assert_eq!(p.iteration_seconds_after, iteration_seconds(&plan.final_loads, &speeds));
            prop_assert!(p.move_seconds >= 0.0);
            let auto = Trigger::Auto { horizon, margin: 1.0 };
            if p.gain_per_iteration <= 0.0 {
                prop_assert!(!auto.moves(&p));
            }
            if auto.moves(&p) {
                prop_assert!(p.net_gain(horizon) > 0.0);
            }
        }
    }
}
