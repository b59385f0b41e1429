//! Measured speeds: units processed per second, smoothed over a window.

use std::collections::VecDeque;

/// A rank's speed from what the application reports between steps: the median of the last
/// `window` rates (units ÷ seconds), so one outlier — a step slowed by the operating system, a
/// step that did no work — moves it by at most one rank in the window.
///
/// # Example
/// ```
/// use hetlb_peer::SpeedMeter;
/// let mut m = SpeedMeter::new(5);
/// assert_eq!(m.speed(), None);
/// for (units, seconds) in [(100, 1.0), (100, 1.0), (100, 10.0), (100, 1.0)] {
///     m.record(units, seconds);
/// }
/// assert_eq!(m.speed(), Some(100.0)); // the slow step is ignored
/// ```
#[derive(Debug, Clone)]
pub struct SpeedMeter {
    window: usize,
    rates: VecDeque<f64>,
}

impl SpeedMeter {
    /// A meter over the last `window` reports (at least 1).
    pub fn new(window: usize) -> Self {
        Self {
            window: window.max(1),
            rates: VecDeque::new(),
        }
    }

    /// Records that `units` of work took `seconds`. Reports with no work or no positive,
    /// finite time carry no speed and are ignored.
    pub fn record(&mut self, units: u64, seconds: f64) {
        if units == 0 || !(seconds.is_finite() && seconds > 0.0) {
            return;
        }
        let rate = units as f64 / seconds;
        if !rate.is_finite() {
            return;
        }
        if self.rates.len() == self.window {
            self.rates.pop_front();
        }
        self.rates.push_back(rate);
    }

    /// The smoothed speed in units per second, or `None` before the first report.
    ///
    /// # Complexity
    /// `O(w log w)` for a window of `w`.
    pub fn speed(&self) -> Option<f64> {
        if self.rates.is_empty() {
            return None;
        }
        let mut sorted: Vec<f64> = self.rates.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        Some(if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        })
    }

    /// Forgets every report.
    pub fn clear(&mut self) {
        self.rates.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outlier_does_not_move_the_median_far() {
        let mut m = SpeedMeter::new(3);
        m.record(10, 1.0);
        m.record(10, 1.0);
        assert_eq!(m.speed(), Some(10.0));
        m.record(10, 0.001);
        assert_eq!(m.speed(), Some(10.0));
        m.record(0, 1.0);
        m.record(5, f64::NAN);
        m.record(5, 0.0);
        assert_eq!(m.speed(), Some(10.0));
        m.clear();
        assert_eq!(m.speed(), None);
    }

    #[test]
    fn the_window_slides() {
        let mut m = SpeedMeter::new(2);
        m.record(1, 1.0);
        m.record(2, 1.0);
        m.record(4, 1.0);
        assert_eq!(m.speed(), Some(3.0));
    }
}
