//! Threshold-triggered hypercube balancing (Rim, Jang & Kim 2003, §4).

use super::{Delivery, Order, Policy, PolicyError, PolicyStats, View};
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::exchange::transfers_of;
use hetlb_core::model::{LoadSummary, load_summary};
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::{Algorithm, BalanceOptions, Capacities, ModelError, Transfer, balance};

/// When an arrival brings a node's load up to `threshold` tasks, the whole hypercube is
/// balanced at once with a core algorithm (`dem`, `oem`, `dem-improved`, `cwa`, …), phase by
/// phase; the load distribution does not change during balancing (Rim, Jang & Kim 2003 §4).
///
/// The statistics record the max difference, the largest and the mean load right after each
/// balancing.
///
/// # Complexity
/// `O(N log N)` per balancing (every pair of every dimension is decided, as the policy
/// requires), plus the transfers; the buffers are kept from one balancing to the next, and
/// the loads are read where the engine keeps them, in one array for this policy
/// ([`Policy::reads_all_loads`], [`View::all_loads`]), without a copy when they lie within
/// four values (the bit planes of [`hetlb_core::exchange::transfers_of`]).
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
    /// The loads, copied when the engine keeps no array of them.
    loads: Vec<u64>,
    /// A copy of the loads for the exchange engine when it needs one.
    scratch: Vec<u64>,
    transfers: Vec<Transfer>,
    /// Equal capacities for `dem-hetero`, made once.
    uniform: Option<Capacities>,
}

/// A pair rule's transfers and the loads' extremes and total after them.
struct Recorded<'a> {
    loads: &'a [u64],
    scratch: &'a mut Vec<u64>,
    transfers: &'a mut Vec<Transfer>,
}

impl PairRuleVisitor for Recorded<'_> {
    type Output = Result<LoadSummary, ModelError>;
    fn visit<R: PairRule>(self, rule: &R) -> Self::Output {
        transfers_of(rule, self.loads, self.scratch, self.transfers)
    }
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
            scratch: Vec::new(),
            transfers: Vec::new(),
            uniform: None,
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
        if view.all_loads().is_none() {
            self.loads.clear();
            view.loads_into(&mut self.loads);
        }
        let loads = view.all_loads().unwrap_or(&self.loads);
        self.transfers.clear();
        let after = if self.algorithm.is_pair_rule() {
            let nodes = loads.len();
            if self.uniform.as_ref().is_none_or(|c| c.len() != nodes) {
                self.uniform = Some(Capacities::uniform(nodes.max(1)));
            }
            let caps = self.uniform.as_ref().expect("made above");
            let visitor = Recorded {
                loads,
                scratch: &mut self.scratch,
                transfers: &mut self.transfers,
            };
            visit_pair_rule(self.algorithm, caps, visitor)
                .expect("a pair rule")
                .map_err(hetlb_core::BalanceError::from)?
        } else {
            let plan = balance(self.algorithm, loads, &BalanceOptions::default())?;
            self.transfers.extend(plan.transfers());
            load_summary(&plan.final_loads).map_err(hetlb_core::BalanceError::from)?
        };
        orders.extend(self.transfers.iter().map(|t| Order {
            from: t.from,
            to: t.to,
            tasks: t.units,
            delivery: Delivery::Instant,
        }));
        let LoadSummary { min, max, total } = after;
        let nodes = loads.len();
        self.balancings += 1;
        self.max_difference_sum += max - min;
        self.max_load_sum += max;
        self.mean_load_sum += total as f64 / nodes.max(1) as f64;
        if max > 0 {
            self.batch_speedup_sum += total as f64 / max as f64;
        }
        Ok(())
    }

    /// Every balancing reads the whole cube's loads.
    fn reads_all_loads(&self) -> bool {
        true
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
