//! What the balancer learns from its own calls: the cost of moving (a Hockney model refitted
//! after every measured move) and, one call later, how each prediction turned out.
//!
//! Every rank keeps its own history, but the ranks decide with **rank 0's** model, which
//! reaches them in the call's gather: a rank that missed a call's outcome (in doubt, then
//! resolved) can never make the group decide differently.

use super::decide::Migration;
use hetlb_core::advice::{CostModel, MoveSample};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// The cost model fitted to the last `capacity` measured moves.
#[derive(Debug, Clone)]
pub(crate) struct CostLearner {
    capacity: usize,
    samples: VecDeque<MoveSample>,
    model: Option<CostModel>,
}

impl CostLearner {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            samples: VecDeque::new(),
            model: None,
        }
    }

    /// Adds a committed move: the plan's busiest-rank counts (as the model predicts them)
    /// against the slowest rank's measured seconds; refits.
    pub(crate) fn observe(&mut self, migration: &Migration, measured_seconds: f64) {
        let Some(counts) = migration.busiest else {
            return;
        };
        if !(measured_seconds.is_finite() && measured_seconds > 0.0) {
            return;
        }
        if self.samples.len() == self.capacity {
            self.samples.pop_front();
        }
        self.samples.push_back(MoveSample {
            seconds: measured_seconds,
            ..counts
        });
        let samples: Vec<MoveSample> = self.samples.iter().copied().collect();
        self.model = CostModel::learn(&samples);
    }

    /// Adds the probe's samples (see [`super::probe`]); refits.
    pub(crate) fn observe_probe(&mut self, samples: [MoveSample; 2]) {
        for sample in samples {
            if self.samples.len() == self.capacity {
                self.samples.pop_front();
            }
            self.samples.push_back(sample);
        }
        let samples: Vec<MoveSample> = self.samples.iter().copied().collect();
        self.model = CostModel::learn(&samples);
    }

    /// The fitted model, once a move (or the probe) has been measured.
    pub(crate) fn model(&self) -> Option<CostModel> {
        self.model
    }
}

/// How a call's prediction turned out, reported at the next call
/// ([`Report::outcome`](super::Report::outcome)).
///
/// Iteration times are the slowest rank's last step before each call, as the ranks report
/// them with [`Balancer::record`](super::Balancer::record): the step just before the move,
/// and the step just before the next call.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// The call the prediction belongs to.
    pub epoch: u64,
    /// Predicted seconds saved per iteration.
    pub predicted_gain_per_iteration: f64,
    /// Measured: `iteration_seconds_before − iteration_seconds_after`.
    pub measured_gain_per_iteration: f64,
    /// The slowest rank's step before the move (seconds).
    pub iteration_seconds_before: f64,
    /// The slowest rank's step before the next call (seconds).
    pub iteration_seconds_after: f64,
    /// Predicted seconds of the move.
    pub predicted_move_seconds: f64,
    /// Measured seconds of the move (the slowest rank's, to its last transfer).
    pub measured_move_seconds: f64,
}

/// The last committed move whose outcome is still to be measured.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PendingOutcome {
    pending: Option<(u64, f64, f64, f64, f64)>,
}

impl PendingOutcome {
    /// Remembers a move that committed: its prediction, the iteration time before it, and
    /// its measured seconds.
    pub(crate) fn moved(&mut self, migration: &Migration, measured_move_seconds: f64) {
        let (Some(p), Some(before)) = (migration.prediction, migration.step_seconds) else {
            self.pending = None;
            return;
        };
        self.pending = Some((
            migration.epoch,
            p.gain_per_iteration,
            before,
            p.move_seconds,
            measured_move_seconds,
        ));
    }

    /// The outcome of the remembered move, measured at this call (`step_seconds`: the
    /// slowest rank's last step now); forgets it.
    pub(crate) fn measure(&mut self, step_seconds: Option<f64>) -> Option<Outcome> {
        let (epoch, predicted_gain, before, predicted_move, measured_move) = self.pending.take()?;
        let after = step_seconds?;
        Some(Outcome {
            epoch,
            predicted_gain_per_iteration: predicted_gain,
            measured_gain_per_iteration: before - after,
            iteration_seconds_before: before,
            iteration_seconds_after: after,
            predicted_move_seconds: predicted_move,
            measured_move_seconds: measured_move,
        })
    }
}

/// Most candidates of rule `auto` whose shortfall is learned (by position in the list;
/// candidates beyond count as never tried).
pub(crate) const LEARNED_CANDIDATES: usize = 16;

/// Samples over which a candidate's shortfall is a plain mean; later ones weigh `1/8` each,
/// so that a workload that changes is followed.
const SHORTFALL_WINDOW: u32 = 8;

/// What rule `auto` learns of each candidate from its own moves: the **shortfall**, how much
/// slower the step after a move was than the plan predicted (`measured − predicted`
/// seconds per iteration), a running mean per candidate.
///
/// The predictions of candidates that balance the same loads are often equal, while what
/// follows their moves is not: which items a rule moves decides how the imbalance comes
/// back when the load drifts. The shortfall ranks the candidates (a candidate never tried
/// counts as falling short by nothing, so each is tried once its turn comes); whether to
/// move at all stays the trigger's, on the plan's own prediction (a drift that comes back
/// after any move would come back without one too).
///
/// The group learns with **rank 0's** table, carried by the gather, with the last move still
/// to be measured: every rank settles it alike from the gathered step times.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct Shortfalls {
    /// Per candidate: samples seen and their running mean (seconds per iteration).
    entries: [(u32, f64); LEARNED_CANDIDATES],
    /// The last committed move still to be measured: the candidate's position and its
    /// predicted seconds per iteration after the move.
    pending: Option<(u8, f64)>,
}

impl Shortfalls {
    /// Measures the pending move against `step_seconds`, the slowest rank's last step now.
    pub(crate) fn settle(&mut self, step_seconds: Option<f64>) {
        let (Some((i, predicted_after)), Some(after)) = (self.pending.take(), step_seconds) else {
            return;
        };
        let x = after - predicted_after;
        let Some((count, mean)) = self.entries.get_mut(usize::from(i)) else {
            return;
        };
        if !x.is_finite() {
            return;
        }
        *count = count.saturating_add(1);
        *mean += (x - *mean) / f64::from((*count).min(SHORTFALL_WINDOW));
    }

    /// Remembers a committed move of candidate `position` predicted at `predicted_after`
    /// seconds per iteration (nothing when either is unknown).
    pub(crate) fn moved(&mut self, position: Option<usize>, predicted_after: Option<f64>) {
        self.pending = position
            .and_then(|p| u8::try_from(p).ok())
            .filter(|&p| usize::from(p) < LEARNED_CANDIDATES)
            .zip(predicted_after.filter(|x| x.is_finite()));
    }

    /// Candidate `position`'s mean shortfall, once one of its moves was measured.
    pub(crate) fn of(&self, position: usize) -> Option<f64> {
        self.entries
            .get(position)
            .filter(|(count, _)| *count > 0)
            .map(|&(_, mean)| mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortfall_is_learned_per_candidate_when_the_next_step_is_measured() {
        let mut s = Shortfalls::default();
        s.moved(Some(1), Some(1.0));
        assert_eq!(s.of(1), None, "not measured before the next call");
        s.settle(Some(1.5));
        assert_eq!(s.of(1), Some(0.5));
        assert_eq!(s.of(0), None);
        s.moved(Some(1), Some(1.0));
        s.settle(Some(1.1));
        assert!(
            (s.of(1).unwrap() - 0.3).abs() < 1e-12,
            "the mean of 0.5 and 0.1"
        );
        // Settled once: a second settle without a move learns nothing.
        s.settle(Some(9.0));
        assert!((s.of(1).unwrap() - 0.3).abs() < 1e-12);
    }

    #[test]
    fn a_move_without_a_step_or_beyond_the_table_is_not_learned() {
        let mut s = Shortfalls::default();
        s.moved(Some(0), Some(1.0));
        s.settle(None);
        assert_eq!(s.of(0), None);
        s.moved(Some(LEARNED_CANDIDATES), Some(1.0));
        s.settle(Some(2.0));
        assert!((0..LEARNED_CANDIDATES).all(|i| s.of(i).is_none()));
    }

    #[test]
    fn later_samples_weigh_one_eighth() {
        let mut s = Shortfalls::default();
        for _ in 0..SHORTFALL_WINDOW {
            s.moved(Some(2), Some(0.0));
            s.settle(Some(1.0));
        }
        assert_eq!(s.of(2), Some(1.0));
        s.moved(Some(2), Some(0.0));
        s.settle(Some(9.0));
        assert_eq!(s.of(2), Some(2.0));
    }
}
