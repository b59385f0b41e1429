//! What rule `auto` learns of each candidate from its own moves: how far each fell short of
//! its prediction.

use serde::{Deserialize, Serialize};

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
