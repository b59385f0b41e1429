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
