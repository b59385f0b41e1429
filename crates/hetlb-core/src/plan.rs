//! Plans: what a balancing algorithm decided, phase by phase.
//!
//! A [`Plan`] is the output of every rule engine: the loads before, the transfers of each
//! phase (who sends how many units to whom), the loads after, and the load-information
//! messages exchanged to decide. Phases are synchronous: a node sends out of what it held at
//! the start of the phase. [`Plan::replay`] re-executes a plan and checks exactly that, which
//! is how the tests prove that no rule ever makes a load negative or loses a unit.

use serde::Serialize;
use thiserror::Error;

/// `units` units of load sent from node `from` to node `to` over one link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Transfer {
    /// Sending node.
    pub from: usize,
    /// Receiving node.
    pub to: usize,
    /// Units sent (always positive in a plan).
    pub units: u64,
}

impl Transfer {
    /// The transfer that takes a pair's low node from `low_before` to `low_after` units, the
    /// pair being nodes `low` and `high`: from `high` to `low` when the low node gains, from
    /// `low` to `high` when it loses, none when it keeps its load. `O(1)`.
    ///
    /// ```
    /// use hetlb_core::plan::Transfer;
    ///
    /// let gain = Transfer::of_pair(2, 6, 3, 5).unwrap();
    /// assert_eq!((gain.from, gain.to, gain.units), (6, 2, 2));
    /// let loss = Transfer::of_pair(2, 6, 5, 1).unwrap();
    /// assert_eq!((loss.from, loss.to, loss.units), (2, 6, 4));
    /// assert_eq!(Transfer::of_pair(2, 6, 4, 4), None);
    /// ```
    #[inline]
    pub fn of_pair(low: usize, high: usize, low_before: u64, low_after: u64) -> Option<Self> {
        use std::cmp::Ordering;
        match low_after.cmp(&low_before) {
            Ordering::Greater => Some(Transfer {
                from: high,
                to: low,
                units: low_after - low_before,
            }),
            Ordering::Less => Some(Transfer {
                from: low,
                to: high,
                units: low_before - low_after,
            }),
            Ordering::Equal => None,
        }
    }
}

/// One synchronous step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Phase {
    /// The hypercube dimension exchanged in this phase, when the phase is one.
    pub dimension: Option<u32>,
    /// The transfers of the phase, each over a distinct link direction.
    pub transfers: Vec<Transfer>,
}

/// Load-information traffic: the messages nodes exchange to decide, as opposed to the task
/// messages that carry units (counted from the transfers).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct LoadInfo {
    /// Number of load-information messages.
    pub messages: u64,
    /// Total number of load values carried by them (a message of a load vector of length
    /// `k` carries `k` words).
    pub words: u64,
}

/// The outcome of a balancing algorithm.
///
/// # Example
/// ```
/// use hetlb_core::{balance, Algorithm, BalanceOptions};
/// let plan = balance(Algorithm::Dem, &[7, 14], &BalanceOptions::default()).unwrap();
/// assert_eq!(plan.final_loads, vec![10, 11]);
/// assert_eq!(plan.phases[0].transfers[0].units, 3);
/// assert_eq!(plan.replay().unwrap(), plan.final_loads);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Plan {
    /// Loads before balancing.
    pub initial: Vec<u64>,
    /// The phases, in execution order.
    pub phases: Vec<Phase>,
    /// Loads after balancing.
    pub final_loads: Vec<u64>,
    /// Load-information messages used to compute the plan.
    pub load_info: LoadInfo,
}

/// A plan that does not replay to its own final loads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A transfer names a node outside the load vector.
    #[error("phase {phase}: transfer {from} -> {to} names a node outside 0..{nodes}")]
    UnknownNode {
        /// Phase index.
        phase: usize,
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// A node sends more than it held at the start of a phase.
    #[error("phase {phase}: node {node} sends {sent} units but holds only {held}")]
    Overdraft {
        /// Phase index.
        phase: usize,
        /// The node.
        node: usize,
        /// Units it sends in the phase.
        sent: u64,
        /// Units it held at the start of the phase.
        held: u64,
    },
    /// Replaying gives other final loads than the plan states.
    #[error(
        "replayed loads differ from the plan's final loads at node {node}: {replayed} vs {stated}"
    )]
    FinalMismatch {
        /// First differing node.
        node: usize,
        /// Replayed value.
        replayed: u64,
        /// Value stated in the plan.
        stated: u64,
    },
}

impl Plan {
    /// A plan with no phases: the loads stay as they are.
    pub fn identity(loads: &[u64]) -> Self {
        Self {
            initial: loads.to_vec(),
            phases: Vec::new(),
            final_loads: loads.to_vec(),
            load_info: LoadInfo::default(),
        }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.initial.len()
    }

    /// All transfers of all phases.
    pub fn transfers(&self) -> impl Iterator<Item = &Transfer> {
        self.phases.iter().flat_map(|p| p.transfers.iter())
    }

    /// Re-executes the plan from `initial`, phase by phase, and returns the final loads.
    ///
    /// Within a phase every node sends out of what it held at the start of the phase.
    ///
    /// # Errors
    /// [`PlanError`] when a transfer names an unknown node, a node overdraws, or the result
    /// differs from `final_loads`.
    ///
    /// # Complexity
    /// `O(N + T)` for `T` transfers.
    pub fn replay(&self) -> Result<Vec<u64>, PlanError> {
        let nodes = self.nodes();
        let mut loads = self.initial.clone();
        let mut sent = vec![0u64; nodes];
        for (phase, step) in self.phases.iter().enumerate() {
            for t in &step.transfers {
                if t.from >= nodes || t.to >= nodes {
                    return Err(PlanError::UnknownNode {
                        phase,
                        from: t.from,
                        to: t.to,
                        nodes,
                    });
                }
                sent[t.from] = sent[t.from].saturating_add(t.units);
            }
            for t in &step.transfers {
                let node = t.from;
                if sent[node] > loads[node] {
                    return Err(PlanError::Overdraft {
                        phase,
                        node,
                        sent: sent[node],
                        held: loads[node],
                    });
                }
            }
            for t in &step.transfers {
                loads[t.from] -= t.units;
                sent[t.from] = 0;
            }
            for t in &step.transfers {
                // Only a plan that creates units can overflow; it fails the final check.
                loads[t.to] = loads[t.to].saturating_add(t.units);
            }
        }
        if let Some(node) = (0..nodes).find(|&i| loads[i] != self.final_loads[i]) {
            return Err(PlanError::FinalMismatch {
                node,
                replayed: loads[node],
                stated: self.final_loads[node],
            });
        }
        Ok(loads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(initial: Vec<u64>, transfers: Vec<Transfer>, final_loads: Vec<u64>) -> Plan {
        Plan {
            initial,
            phases: vec![Phase {
                dimension: Some(0),
                transfers,
            }],
            final_loads,
            load_info: LoadInfo::default(),
        }
    }

    #[test]
    fn replay_catches_overdraft_and_mismatch() {
        let t = |from, to, units| Transfer { from, to, units };
        assert!(
            plan(vec![2, 0], vec![t(0, 1, 1)], vec![1, 1])
                .replay()
                .is_ok()
        );
        assert_eq!(
            plan(vec![1, 0], vec![t(0, 1, 2)], vec![0, 2]).replay(),
            Err(PlanError::Overdraft {
                phase: 0,
                node: 0,
                sent: 2,
                held: 1
            })
        );
        assert!(matches!(
            plan(vec![2, 0], vec![t(0, 1, 1)], vec![2, 0]).replay(),
            Err(PlanError::FinalMismatch { node: 0, .. })
        ));
        assert!(matches!(
            plan(vec![2, 0], vec![t(0, 5, 1)], vec![1, 1]).replay(),
            Err(PlanError::UnknownNode { .. })
        ));
    }

    #[test]
    fn a_node_cannot_send_what_it_only_receives_in_the_same_phase() {
        let t = |from, to, units| Transfer { from, to, units };
        let p = plan(vec![0, 3, 0], vec![t(1, 0, 3), t(0, 2, 3)], vec![0, 0, 3]);
        assert!(matches!(
            p.replay(),
            Err(PlanError::Overdraft { node: 0, .. })
        ));
    }
}
