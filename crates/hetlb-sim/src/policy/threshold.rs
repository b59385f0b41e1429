//! Threshold-triggered hypercube balancing (Rim, Jang & Kim 2003, §4).

use super::incremental::IncrementalExchange;
use super::{Delivery, Order, Policy, PolicyError, PolicyStats, View};
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::model::total_load;
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::topology::Hypercube;
use hetlb_core::{
    Algorithm, BalanceError, BalanceOptions, Capacities, ModelError, Transfer, balance,
};

/// When an arrival brings a node's load up to `threshold` tasks, the whole hypercube is
/// balanced at once with a core algorithm (`dem`, `oem`, `dem-improved`, `cwa`, …), phase by
/// phase; the load distribution does not change during balancing (Rim, Jang & Kim 2003 §4).
///
/// The statistics record the max difference, the largest and the mean load right after each
/// balancing.
///
/// # Complexity
/// Every pair of every dimension is decided, as the policy requires, but a pair rule (`dem`,
/// `oem`, `dem-improved`, `dem-fixed`, `dem-hetero`) is evaluated again only on the pairs whose
/// loads differ from the previous balancing's ([`IncrementalExchange`]): `O(N log N)` for the
/// first balancing, then `O(D log D + T)` for `D` nodes whose load changed in between (read
/// from [`View::take_load_changes`] when the view keeps that record, otherwise found by one
/// pass over the loads) and `T` transfers. Other algorithms plan from scratch,
/// `O(N log N)` and more. The buffers are kept from one balancing to the next.
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
    transfers: Vec<Transfer>,
    /// Equal capacities for `dem-hetero`, made once.
    uniform: Option<Capacities>,
    /// The previous balancing of a pair rule, for the next.
    exchange: IncrementalExchange,
    /// Total load at the previous balancing.
    total: u64,
    moved_nodes: Vec<usize>,
    changed: Vec<(usize, u64)>,
}

/// What a pair rule balances: every load, or the changes since the previous balancing.
enum Input<'a> {
    All(&'a [u64]),
    Changed(&'a [(usize, u64)]),
}

/// A pair rule's transfers, from the previous balancing where there was one.
struct Exchange<'a> {
    exchange: &'a mut IncrementalExchange,
    input: Input<'a>,
    transfers: &'a mut Vec<Transfer>,
}

impl PairRuleVisitor for Exchange<'_> {
    type Output = ();
    fn visit<R: PairRule>(self, rule: &R) {
        match self.input {
            Input::All(loads) => self.exchange.exchange(rule, loads, self.transfers),
            Input::Changed(changed) => self.exchange.update(rule, changed, self.transfers),
        }
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
            transfers: Vec::new(),
            uniform: None,
            exchange: IncrementalExchange::default(),
            total: 0,
            moved_nodes: Vec::new(),
            changed: Vec::new(),
        }
    }

    /// Balances the cube with the pair rule, from the previous balancing when there was one;
    /// the transfers go to `self.transfers`. Returns the total, largest and smallest load after.
    fn pair_rule(&mut self, view: &dyn View) -> Result<(u64, u64, u64), PolicyError> {
        let nodes = view.node_count();
        if self.uniform.as_ref().is_none_or(|c| c.len() != nodes) {
            self.uniform = Some(Capacities::uniform(nodes.max(1)));
        }
        self.changed.clear();
        self.moved_nodes.clear();
        let input = if !self.exchange.is_ready_for(nodes) {
            self.loads.clear();
            view.loads_into(&mut self.loads);
            Hypercube::for_nodes(nodes).map_err(BalanceError::from)?;
            self.total = total_load(&self.loads).map_err(BalanceError::from)?;
            // what changes from now on is what the next balancing looks at
            view.take_load_changes(&mut self.moved_nodes);
            Input::All(&self.loads)
        } else {
            let before = self.exchange.inputs_of_last();
            if view.take_load_changes(&mut self.moved_nodes) {
                self.changed
                    .extend(self.moved_nodes.iter().map(|&v| (v, view.load(v))));
            } else {
                self.loads.clear();
                view.loads_into(&mut self.loads);
                self.changed.extend(
                    (0..nodes)
                        .filter(|&v| self.loads[v] != before[v])
                        .map(|v| (v, self.loads[v])),
                );
            }
            let mut total = self.total;
            for &(v, w) in &self.changed {
                total = (total - before[v])
                    .checked_add(w)
                    .ok_or(BalanceError::from(ModelError::TotalOverflow))?;
            }
            self.total = total;
            Input::Changed(&self.changed)
        };
        let caps = self.uniform.as_ref().expect("made above");
        let visitor = Exchange {
            exchange: &mut self.exchange,
            input,
            transfers: &mut self.transfers,
        };
        visit_pair_rule(self.algorithm, caps, visitor).expect("a pair rule");
        let (max, min) = self.exchange.max_min();
        Ok((self.total, max, min))
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
        self.transfers.clear();
        let (total, max, min) = if self.algorithm.is_pair_rule() {
            self.pair_rule(view)?
        } else {
            self.loads.clear();
            view.loads_into(&mut self.loads);
            let plan = balance(self.algorithm, &self.loads, &BalanceOptions::default())?;
            self.transfers.extend(plan.transfers());
            self.loads.copy_from_slice(&plan.final_loads);
            let (mut max, mut min, mut total) = (0u64, u64::MAX, 0u64);
            for &w in &self.loads {
                max = max.max(w);
                min = min.min(w);
                total += w;
            }
            (total, max, min.min(max))
        };
        orders.extend(self.transfers.iter().map(|t| Order {
            from: t.from,
            to: t.to,
            tasks: t.units,
            delivery: Delivery::Instant,
        }));
        let nodes = view.node_count();
        self.balancings += 1;
        self.max_difference_sum += max - min;
        self.max_load_sum += max;
        self.mean_load_sum += total as f64 / nodes.max(1) as f64;
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
