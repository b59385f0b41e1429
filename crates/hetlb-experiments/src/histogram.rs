//! Histograms of the final max difference.

use serde::Serialize;
use std::collections::BTreeMap;

/// How many load vectors ended with each max difference.
///
/// Serialises as a JSON object from difference (as a string key) to count.
///
/// # Example
/// ```
/// use hetlb_experiments::Histogram;
/// let mut h = Histogram::default();
/// h.add(1, 3);
/// h.add(2, 1);
/// assert_eq!(h.total(), 4);
/// assert_eq!(h.average(), 1.25);
/// assert_eq!(h.count(0), 0);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Histogram {
    counts: BTreeMap<u64, u64>,
}

impl Histogram {
    /// Builds a histogram from dense counts: `counts[d]` vectors with difference `d`.
    pub fn from_dense(counts: &[u64]) -> Self {
        let mut h = Self::default();
        for (d, &c) in counts.iter().enumerate() {
            h.add(d as u64, c);
        }
        h
    }

    /// Adds `count` vectors with max difference `difference`.
    pub fn add(&mut self, difference: u64, count: u64) {
        if count > 0 {
            *self.counts.entry(difference).or_default() += count;
        }
    }

    /// Adds every count of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (&d, &c) in &other.counts {
            self.add(d, c);
        }
    }

    /// Vectors with max difference exactly `difference`.
    pub fn count(&self, difference: u64) -> u64 {
        self.counts.get(&difference).copied().unwrap_or(0)
    }

    /// Vectors with max difference at least `difference`.
    pub fn count_at_least(&self, difference: u64) -> u64 {
        self.counts.range(difference..).map(|(_, &c)| c).sum()
    }

    /// Number of vectors counted.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The largest difference seen (0 when empty).
    pub fn max_difference(&self) -> u64 {
        self.counts.keys().next_back().copied().unwrap_or(0)
    }

    /// Mean max difference (0 when empty).
    pub fn average(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            return 0.0;
        }
        let sum: u128 = self
            .counts
            .iter()
            .map(|(&d, &c)| u128::from(d) * u128::from(c))
            .sum();
        sum as f64 / total as f64
    }

    /// `(difference, count)` pairs in increasing difference.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts.iter().map(|(&d, &c)| (d, c))
    }
}
