//! The yardstick of the delayed sweep: the single transfer size with the smallest finish time,
//! found by search.
//!
//! The policy that carries it out, [`SendFixed`], is part of this experiment rather than of
//! the simulator: it balances nothing (it sends a number of tasks chosen in advance, whatever
//! the loads), and it exists only to measure how far eq. 25 lies from the best one-shot
//! decision on the same scenario.

use hetlb_sim::engine::Engine;
use hetlb_sim::policy::{Delivery, Order, Policy, PolicyError, View};
use hetlb_sim::{Report, Scenario, SimError};
use rayon::prelude::*;

/// Sends a fixed number of tasks to each neighbour of the node the load enters, once per
/// injection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendFixed(pub u64);

impl Policy for SendFixed {
    fn name(&self) -> String {
        format!("send {}", self.0)
    }

    fn on_injection(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        orders.extend(view.neighbors(node).iter().map(|&to| Order {
            from: node,
            to,
            tasks: self.0,
            delivery: Delivery::Link,
        }));
        Ok(())
    }
}

/// Runs `s` (its nodes, links and set-up, without series) under [`SendFixed`]`(tasks)`.
///
/// # Errors
/// [`SimError`] when the engine refuses the scenario.
pub fn run_fixed(s: &Scenario, tasks: u64) -> Result<Report, SimError> {
    let mut setup = s.setup.clone();
    setup.series.enabled = false;
    Engine::new(s.nodes.clone(), s.links.clone(), SendFixed(tasks), setup)?.run()
}

/// The single transfer size in `0..=upto` with the smallest makespan (ties: fewer tasks
/// moved), and its run: a coarse scan of about 100 sizes, then every size around the best.
///
/// # Complexity
/// About `100 + 2·⌈upto / 100⌉` runs of the scenario, in parallel.
///
/// # Errors
/// The first run that failed.
pub fn best_single_transfer(s: &Scenario, upto: u64) -> Result<Report, SimError> {
    let step = (upto / 100).max(1);
    let coarse: Vec<u64> = (0..=upto).step_by(step as usize).collect();
    let reports = coarse
        .par_iter()
        .map(|&x| run_fixed(s, x))
        .collect::<Result<Vec<_>, _>>()?;
    let best = coarse[index_of_min(&reports)];
    let fine: Vec<u64> = (best.saturating_sub(step)..=(best + step).min(upto)).collect();
    let mut reports = fine
        .par_iter()
        .map(|&x| run_fixed(s, x))
        .collect::<Result<Vec<_>, _>>()?;
    let i = index_of_min(&reports);
    Ok(reports.swap_remove(i))
}

fn index_of_min(reports: &[Report]) -> usize {
    (0..reports.len())
        .min_by(|&a, &b| {
            reports[a]
                .makespan
                .total_cmp(&reports[b].makespan)
                .then(reports[a].tasks_moved.cmp(&reports[b].tasks_moved))
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_transfer_is_no_worse_than_any_size_of_the_scan() {
        let s = super::super::scenario("mirtaheri-delayed").unwrap();
        let best = best_single_transfer(&s, 600).unwrap();
        // The coarse scan visits every multiple of 600 / 100 = 6.
        for tasks in [0, 102, 246, 498, 600] {
            let r = run_fixed(&s, tasks).unwrap();
            assert!(
                best.makespan <= r.makespan + 1e-12,
                "{tasks}: {}",
                r.makespan
            );
        }
        // Nothing is created or lost.
        assert_eq!(best.executed, best.initial + best.injected);
    }
}
