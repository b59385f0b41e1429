//! Threshold-triggered hypercube balancing (Rim et al., 004_… §4).

use super::{Delivery, Order, Policy, PolicyError, PolicyStats, View};
use hetlb_core::{Algorithm, BalanceOptions, balance};

/// When an arrival brings a node's load up to `threshold` tasks, the whole hypercube is
/// balanced at once with a core algorithm (`dem`, `oem`, `dem-improved`, `cwa`, …), phase by
/// phase; the load distribution does not change during balancing (004_… §4).
///
/// The statistics record the max difference, the largest and the mean load right after each
/// balancing.
///
/// # Example
/// ```
/// use hetlb_sim::policy::{HypercubeThreshold, Policy};
/// use hetlb_core::Algorithm;
/// let p = HypercubeThreshold::new(Algorithm::Oem, 4);
/// assert_eq!(p.name(), "oem (threshold 4)");
/// ```
#[derive(Debug, Clone)]
pub struct HypercubeThreshold {
    algorithm: Algorithm,
    threshold: u64,
    balancings: u64,
    max_difference_sum: u64,
    max_load_sum: u64,
    mean_load_sum: f64,
    batch_speedup_sum: f64,
    loads: Vec<u64>,
}

impl HypercubeThreshold {
    /// Balances with `algorithm` whenever an arrival brings a node to `threshold` tasks.
    pub fn new(algorithm: Algorithm, threshold: u64) -> Self {
        Self {
            algorithm,
            threshold,
            balancings: 0,
            max_difference_sum: 0,
            max_load_sum: 0,
            mean_load_sum: 0.0,
            batch_speedup_sum: 0.0,
            loads: Vec::new(),
        }
    }
}

impl Policy for HypercubeThreshold {
    fn name(&self) -> String {
        format!("{} (threshold {})", self.algorithm, self.threshold)
    }

    fn on_arrival(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        if view.load(node) != self.threshold {
            return Ok(());
        }
        self.loads.clear();
        self.loads
            .extend((0..view.node_count()).map(|i| view.load(i)));
        let plan = balance(self.algorithm, &self.loads, &BalanceOptions::default())?;
        orders.extend(plan.transfers().map(|t| Order {
            from: t.from,
            to: t.to,
            tasks: t.units,
            delivery: Delivery::Instant,
        }));
        let max = plan.final_loads.iter().copied().max().unwrap_or(0);
        let min = plan.final_loads.iter().copied().min().unwrap_or(0);
        let total: u64 = plan.final_loads.iter().sum();
        self.balancings += 1;
        self.max_difference_sum += max - min;
        self.max_load_sum += max;
        self.mean_load_sum += total as f64 / plan.final_loads.len().max(1) as f64;
        if max > 0 {
            self.batch_speedup_sum += total as f64 / max as f64;
        }
        Ok(())
    }

    fn stats(&self) -> PolicyStats {
        let n = self.balancings as f64;
        let mean = |x: f64| (self.balancings > 0).then(|| x / n);
        PolicyStats {
            balancings: self.balancings,
            mean_max_difference_after: mean(self.max_difference_sum as f64),
            mean_max_load_after: mean(self.max_load_sum as f64),
            mean_load_after: mean(self.mean_load_sum),
            mean_batch_speedup: mean(self.batch_speedup_sum),
            decisions: Vec::new(),
        }
    }
}
