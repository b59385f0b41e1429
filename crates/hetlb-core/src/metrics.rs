//! Quality and cost of a plan.
//!
//! | metric | definition | source |
//! |---|---|---|
//! | `max_difference` | `max_i w_i − min_i w_i` after balancing | Chau & Fu Tables 1–2; Rim et al. Table 1 ("nonuniformity") |
//! | `weighted_imbalance` | `max_i (w_i/c_i) ÷ (W/Σc)`; 1 is perfect | — |
//! | `distance_from_optimal` | `(max_i w_i/c_i − T*)·Σc/N`, where `T*` is the makespan of the best integer allocation; in units of load of an average node, so with equal capacities it is `max_i w_i − ⌈W/N⌉`; computed exactly, rounded once | — |
//! | `units_moved` | `Σ_i max(0, w_i' − w_i)`: units that end on another node | Chau & Fu §4 |
//! | `task_hops` | units sent over links, summed over all transfers | Wu & Shu, via Rim et al. §5.2 |
//! | `load_info_messages`, `task_messages`, `messages` | messages carrying loads, messages carrying units (one per transfer), their sum | Chau & Fu §3 |
//! | `sum_tmax` | `Σ_phases max_link units`: the transmission time of a phased plan | Rim et al. §5.2 |

use crate::allocation::distance_from_optimal;
use crate::model::Capacities;
use crate::plan::{LoadInfo, Plan};
use crate::summary::PlanSummary;
use serde::Serialize;

/// Every metric of a plan; see the module documentation for definitions.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Metrics {
    /// `max − min` of the final loads.
    pub max_difference: u64,
    /// `max_i (w_i/c_i) ÷ (W/Σc)`; 1.0 is perfect (and the value for `W = 0`).
    pub weighted_imbalance: f64,
    /// Excess of the most loaded node over the optimal integer allocation, in units of an
    /// average node (0 is optimal); computed exactly and rounded to an `f64` once
    /// ([`crate::allocation::distance_from_optimal`]).
    pub distance_from_optimal: f64,
    /// Net units that end on a different node.
    pub units_moved: u64,
    /// Units sent over links (Σ over transfers), exact: a unit can hop once per phase, so
    /// the sum can pass `u64::MAX` when the total is near it.
    pub task_hops: u128,
    /// All messages: load information plus task messages.
    pub messages: u64,
    /// Messages carrying load information.
    pub load_info_messages: u64,
    /// Load values carried by the load-information messages.
    pub load_info_words: u64,
    /// Messages carrying units: one per transfer.
    pub task_messages: u64,
    /// `Σ_i Tmax_i`: per phase, the most units sent over one link, summed (exact).
    pub sum_tmax: u128,
    /// Number of phases.
    pub phases: usize,
}

impl Metrics {
    /// Measures `plan`; `capacities` (one per node) weight the imbalance and the optimum,
    /// `None` meaning equal nodes.
    ///
    /// # Complexity
    /// `O(N log N + T)`.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::{balance, Algorithm, BalanceOptions, Metrics};
    /// let plan = balance(Algorithm::Oem, &[15, 1, 1, 1, 1, 1, 1, 1], &BalanceOptions::default()).unwrap();
    /// let m = Metrics::of(&plan, None);
    /// assert_eq!(m.max_difference, 1);
    /// assert_eq!(m.phases, 3);
    /// assert_eq!(m.messages, m.load_info_messages + m.task_messages);
    /// ```
    pub fn of(plan: &Plan, capacities: Option<&Capacities>) -> Self {
        // A unit can hop once per phase: the sums are kept in 128 bits.
        let task_hops = plan.transfers().map(|t| u128::from(t.units)).sum::<u128>();
        let task_messages = plan.transfers().count() as u64;
        let sum_tmax = plan
            .phases
            .iter()
            .map(|p| u128::from(p.transfers.iter().map(|t| t.units).max().unwrap_or(0)))
            .sum::<u128>();
        let traffic = Traffic {
            load_info: plan.load_info,
            task_hops,
            task_messages,
            sum_tmax,
            phases: plan.phases.len(),
        };
        Self::from_loads(&plan.initial, &plan.final_loads, capacities, traffic)
    }

    /// The metrics of a plan from its summary ([`PlanSummary`], gathered while it was
    /// computed): the same as [`Metrics::of`] of the plan.
    ///
    /// # Complexity
    /// `O(N log N)`.
    pub fn of_summary(summary: &PlanSummary, capacities: Option<&Capacities>) -> Self {
        let traffic = Traffic {
            load_info: summary.load_info,
            task_hops: summary.task_hops,
            task_messages: summary.transfers,
            sum_tmax: summary.sum_tmax,
            phases: usize::try_from(summary.phases).unwrap_or(usize::MAX),
        };
        Self::from_loads(&summary.initial, &summary.final_loads, capacities, traffic)
    }

    fn from_loads(
        initial: &[u64],
        final_loads: &[u64],
        capacities: Option<&Capacities>,
        traffic: Traffic,
    ) -> Self {
        let uniform;
        let caps = match capacities {
            Some(c) => c.as_slice(),
            None => {
                uniform = vec![1.0; final_loads.len()];
                &uniform
            }
        };
        let total: u64 = final_loads.iter().sum();
        let max = final_loads.iter().copied().max().unwrap_or(0);
        let min = final_loads.iter().copied().min().unwrap_or(0);
        let cap_total: f64 = caps.iter().sum();
        let peak = final_loads
            .iter()
            .zip(caps)
            .map(|(&w, &c)| w as f64 / c)
            .fold(0.0, f64::max);
        let weighted_imbalance = if total == 0 {
            1.0
        } else {
            peak / (total as f64 / cap_total)
        };
        let distance_from_optimal = distance_from_optimal(final_loads, caps);
        let units_moved = initial
            .iter()
            .zip(final_loads)
            .map(|(&a, &b)| b.saturating_sub(a))
            .sum();
        let Traffic {
            load_info,
            task_hops,
            task_messages,
            sum_tmax,
            phases,
        } = traffic;
        Self {
            max_difference: max - min,
            weighted_imbalance,
            distance_from_optimal,
            units_moved,
            task_hops,
            messages: load_info.messages + task_messages,
            load_info_messages: load_info.messages,
            load_info_words: load_info.words,
            task_messages,
            sum_tmax,
            phases,
        }
    }
}

/// What the metrics count of a plan's messages and transfers.
struct Traffic {
    load_info: LoadInfo,
    task_hops: u128,
    task_messages: u64,
    sum_tmax: u128,
    phases: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{LoadInfo, Phase, Transfer};

    /// Near 2^64 units the sums pass `u64::MAX` and `f64` levels cancel: both stay exact.
    #[test]
    fn metrics_are_exact_at_totals_near_two_to_the_64() {
        let half = u64::MAX / 2;
        // Two phases each moving almost 2^63 units: 2^64 − 2 task-hops in all, and one more.
        let t = |from, to, units| Transfer { from, to, units };
        let plan = Plan {
            initial: vec![half + 1, half],
            phases: vec![
                Phase {
                    dimension: None,
                    transfers: vec![t(0, 1, half)],
                },
                Phase {
                    dimension: None,
                    transfers: vec![t(1, 0, half)],
                },
                Phase {
                    dimension: None,
                    transfers: vec![t(0, 1, 21)],
                },
            ],
            final_loads: vec![half + 1 - 21, half + 21],
            load_info: LoadInfo::default(),
        };
        assert_eq!(plan.replay().unwrap(), plan.final_loads);
        let m = Metrics::of(&plan, None);
        let expected = 2 * u128::from(half) + 21;
        assert!(expected > u128::from(u64::MAX));
        assert_eq!(m.task_hops, expected);
        assert_eq!(m.sum_tmax, expected);
        // Final loads 2^63 + 20 and 2^63 − 21 + … : max − ⌈W/2⌉ = 20, computed in integers.
        let total = u128::from(half) * 2 + 1;
        let ceil_mean = total.div_ceil(2);
        let max = u128::from(*plan.final_loads.iter().max().unwrap());
        assert_eq!(m.distance_from_optimal, (max - ceil_mean) as f64);
        assert_eq!(m.distance_from_optimal, 20.0);
        // Capacities 1 and 3, W = 4k near 2^64: the optimum is (k, 3k), levels k and k; 41
        // units more on node 0 put it 41 above, i.e. 41·Σc/N = 82 average loads.
        let k = u64::MAX / 4;
        let loads = vec![k + 41, 3 * k - 41];
        let caps = Capacities::new(vec![1.0, 3.0]).unwrap();
        let m = Metrics::of(&Plan::identity(&loads), Some(&caps));
        assert_eq!(m.distance_from_optimal, 82.0);
        // Decimal capacities in the same ratio (0.1 and 0.3 are a tenth and three tenths): the
        // distance is in average loads, so the common scale does not change it.
        let caps = Capacities::new(vec![0.1, 0.3]).unwrap();
        let m = Metrics::of(&Plan::identity(&loads), Some(&caps));
        assert_eq!(m.distance_from_optimal, 82.0);
    }

    #[test]
    fn metrics_of_a_hand_made_plan() {
        let plan = Plan {
            initial: vec![9, 0, 3, 0],
            phases: vec![
                Phase {
                    dimension: Some(0),
                    transfers: vec![
                        Transfer {
                            from: 0,
                            to: 1,
                            units: 4,
                        },
                        Transfer {
                            from: 2,
                            to: 3,
                            units: 1,
                        },
                    ],
                },
                Phase {
                    dimension: Some(1),
                    transfers: vec![Transfer {
                        from: 0,
                        to: 2,
                        units: 2,
                    }],
                },
            ],
            final_loads: vec![3, 4, 4, 1],
            load_info: LoadInfo {
                messages: 8,
                words: 8,
            },
        };
        assert_eq!(plan.replay().unwrap(), plan.final_loads);
        let m = Metrics::of(&plan, None);
        assert_eq!(m.max_difference, 3);
        assert_eq!(m.units_moved, 4 + 1 + 1);
        assert_eq!(m.task_hops, 7);
        assert_eq!(m.task_messages, 3);
        assert_eq!(m.messages, 11);
        assert_eq!(m.sum_tmax, 4 + 2);
        assert_eq!(m.weighted_imbalance, 4.0 / 3.0);
        assert_eq!(m.distance_from_optimal, 4.0 - 3.0);
        let caps = Capacities::new(vec![1.0, 1.0, 1.0, 0.5]).unwrap();
        let m = Metrics::of(&plan, Some(&caps));
        assert!((m.weighted_imbalance - 4.0 / (12.0 / 3.5)).abs() < 1e-12);
    }
}
