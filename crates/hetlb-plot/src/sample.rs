//! Sampling a vector that changes step by step down to what a chart can show.

use crate::line::{MAX_POINTS, Series};

/// The lines of a vector of values that changes step by step (a load per node, round after
/// round), sampled down to at most [`MAX_POINTS`] points a line, fed one step at a time so
/// that no per-step table is held.
///
/// With at most `each_up_to` components, every component is a line of its own; with more,
/// three lines stand for them all: the largest, the mean and the smallest value. A point
/// stands for `stride` steps: the largest and smallest over those steps (so that no spike is
/// lost), the mean at its last step.
///
/// # Example
/// ```
/// use hetlb_plot::Downsampler;
/// let mut d = Downsampler::new(3, 1, 2, |i| format!("node {i}"));
/// d.record(0, &[4, 0, 2]);
/// d.record(1, &[2, 2, 2]);
/// let lines = d.finish();
/// assert_eq!(lines[0].label, "largest");
/// assert_eq!(lines[0].points, [(0.0, 4.0), (1.0, 2.0)]);
/// assert_eq!(lines[1].points[0], (0.0, 2.0)); // the mean
/// ```
#[derive(Debug, Clone)]
pub struct Downsampler {
    lines: Vec<Series>,
    each: bool,
    stride: usize,
    steps: usize,
    high: u64,
    low: u64,
}

impl Downsampler {
    /// Lines for `n` components over `steps` steps after the first (step 0), each component
    /// labelled `label(i)` when there are at most `each_up_to`.
    pub fn new(n: usize, steps: usize, each_up_to: usize, label: impl Fn(usize) -> String) -> Self {
        let each = n <= each_up_to;
        let labels: Vec<String> = if each {
            (0..n).map(label).collect()
        } else {
            vec!["largest".into(), "mean".into(), "smallest".into()]
        };
        Self {
            lines: labels
                .into_iter()
                .map(|l| Series::new(l, Vec::new()))
                .collect(),
            each,
            stride: steps.div_ceil(MAX_POINTS).max(1),
            steps,
            high: 0,
            low: u64::MAX,
        }
    }

    /// Names the three lines that stand for many components (`largest`, `mean`, `smallest`
    /// by default).
    #[must_use]
    pub fn envelope_labels(mut self, largest: &str, mean: &str, smallest: &str) -> Self {
        if !self.each {
            for (line, label) in self.lines.iter_mut().zip([largest, mean, smallest]) {
                line.label = label.to_string();
            }
        }
        self
    }

    /// True when every component is a line of its own.
    pub fn each(&self) -> bool {
        self.each
    }

    /// Steps a point stands for.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The values after `step` (0 for the start, then 1, 2, … up to `steps`, each once).
    pub fn record(&mut self, step: usize, values: &[u64]) {
        if !self.each {
            self.high = self.high.max(values.iter().copied().max().unwrap_or(0));
            self.low = self.low.min(values.iter().copied().min().unwrap_or(0));
        }
        if step != 0 && !step.is_multiple_of(self.stride) && step != self.steps {
            return;
        }
        let x = step as f64;
        if self.each {
            for (line, &w) in self.lines.iter_mut().zip(values) {
                line.points.push((x, w as f64));
            }
        } else {
            let total: u128 = values.iter().map(|&w| u128::from(w)).sum();
            let mean = total as f64 / values.len() as f64;
            self.lines[0].points.push((x, self.high as f64));
            self.lines[1].points.push((x, mean));
            self.lines[2].points.push((x, self.low as f64));
        }
        (self.high, self.low) = (0, u64::MAX);
    }

    /// The lines.
    pub fn finish(self) -> Vec<Series> {
        self.lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_is_sampled_and_keeps_its_extremes() {
        let steps = 10 * MAX_POINTS;
        let mut d = Downsampler::new(40, steps, 16, |i| i.to_string());
        assert!(!d.each());
        assert_eq!(d.stride(), 10);
        let mut v = vec![1u64; 40];
        d.record(0, &v);
        for step in 1..=steps {
            v[0] = if step == 5 { 1000 } else { 1 };
            d.record(step, &v);
        }
        let lines = d.finish();
        assert_eq!(lines[0].points.len(), MAX_POINTS + 1);
        // The spike at step 5 is in the point that stands for steps 1 to 10.
        assert_eq!(lines[0].points[1], (10.0, 1000.0));
        assert_eq!(lines[2].points[1], (10.0, 1.0));
    }

    #[test]
    fn few_components_are_drawn_each() {
        let mut d = Downsampler::new(2, 2, 16, |i| format!("node {i}"));
        for (s, v) in [[3, 1], [2, 2], [2, 2]].iter().enumerate() {
            d.record(s, v);
        }
        let lines = d.finish();
        assert_eq!(lines[1].label, "node 1");
        assert_eq!(lines[1].points, [(0.0, 1.0), (1.0, 2.0), (2.0, 2.0)]);
    }
}
