//! Direct routing: every unit moves once, straight from the node that holds it to the node
//! where a plan ends it.
//!
//! The papers' rules route load hop by hop: a hypercube rule moves units along one dimension
//! per phase (a unit may travel `log2 N` links), a diffusion rule along the graph's edges,
//! round after round. On a network where every node reaches every other (MPI ranks, threads),
//! that routing is a choice, not a necessity: the same final distribution is reached by
//! moving each unit once, from a node with a surplus (`start[i] > end[i]`) to a node with a
//! deficit (`end[j] > start[j]`). This is a transportation problem between the two vectors;
//! any feasible solution moves exactly `Σ_i max(0, start[i] − end[i])` units, the least any
//! routing can move, and [`direct`] picks the one that also keeps the number of messages
//! small: senders and receivers are matched in index order (the "north-west corner" rule), so
//! at most `S + R − 1` transfers for `S` senders and `R` receivers.
//!
//! The paper's routing stays the default for the papers' experiments; [`Plan::direct`] gives
//! the direct plan of any rule's plan, and [`RoutingComparison`] counts both.
//!
//! ```
//! use hetlb_core::{balance, Algorithm, BalanceOptions};
//! use hetlb_core::routing::RoutingComparison;
//! let plan = balance(Algorithm::Cwa, &[16, 0, 0, 0, 0, 0, 0, 0], &BalanceOptions::default()).unwrap();
//! let direct = plan.direct().unwrap();
//! assert_eq!(direct.final_loads, plan.final_loads);
//! let c = RoutingComparison::of(&plan).unwrap();
//! assert_eq!(c.direct_units, 14);          // 14 units leave node 0, each once
//! assert!(c.hop_units >= c.direct_units);  // the hypercube route counts every hop
//! ```

use crate::plan::{LoadInfo, Phase, Plan, Transfer};
use serde::Serialize;
use thiserror::Error;

/// How a plan's units travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Routing {
    /// As the rule moves them: hop by hop along the network's links (the papers' routing).
    #[default]
    Paper,
    /// Each unit once, straight from its node to the node where the plan ends it
    /// ([`direct`]); needs a network where every node reaches every other.
    Direct,
}

impl Routing {
    /// Both routings, the paper's first.
    pub const ALL: [Routing; 2] = [Routing::Paper, Routing::Direct];

    /// The routing's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Routing::Paper => "paper",
            Routing::Direct => "direct",
        }
    }

    /// `plan` routed this way.
    ///
    /// # Errors
    /// [`RoutingError`] when the plan does not conserve its load.
    pub fn route(self, plan: Plan) -> Result<Plan, RoutingError> {
        match self {
            Routing::Paper => Ok(plan),
            Routing::Direct => plan.into_direct(),
        }
    }
}

impl std::fmt::Display for Routing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Routing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "paper" | "hop" | "hops" => Ok(Routing::Paper),
            "direct" => Ok(Routing::Direct),
            other => Err(format!(
                "'{other}' is not a routing (expected paper or direct)"
            )),
        }
    }
}

/// Why two load vectors have no direct routing between them.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RoutingError {
    /// The vectors have different lengths.
    #[error("start has {start} nodes and end has {end}")]
    Length {
        /// Nodes in the start vector.
        start: usize,
        /// Nodes in the end vector.
        end: usize,
    },
    /// The vectors hold different totals, so no routing conserves the load.
    #[error("start holds {start} units and end holds {end}")]
    Total {
        /// Units in the start vector.
        start: u128,
        /// Units in the end vector.
        end: u128,
    },
}

/// The least number of units any routing from `start` to `end` moves:
/// `Σ_i max(0, start[i] − end[i])` (each surplus unit must leave its node at least once).
///
/// # Complexity
/// `O(N)`.
pub fn minimum_units(start: &[u64], end: &[u64]) -> u128 {
    start
        .iter()
        .zip(end)
        .map(|(&s, &e)| u128::from(s.saturating_sub(e)))
        .sum()
}

/// The direct transfers from `start` to `end`: each surplus unit sent once to a node with a
/// deficit, senders and receivers matched in index order.
///
/// The result moves exactly [`minimum_units`] units in at most `S + R − 1` transfers (`S`
/// nodes with a surplus, `R` with a deficit), every transfer positive, and no node sends more
/// than its surplus, so applying the transfers at once never makes a load negative.
///
/// # Errors
/// [`RoutingError`] when the vectors differ in length or in total.
///
/// # Complexity
/// `O(N)` time, `O(S + R)` memory.
///
/// ```
/// use hetlb_core::routing::direct;
/// let t = direct(&[9, 0, 3, 0], &[3, 3, 3, 3]).unwrap();
/// let moves: Vec<_> = t.iter().map(|t| (t.from, t.to, t.units)).collect();
/// assert_eq!(moves, vec![(0, 1, 3), (0, 3, 3)]);
/// ```
pub fn direct(start: &[u64], end: &[u64]) -> Result<Vec<Transfer>, RoutingError> {
    if start.len() != end.len() {
        return Err(RoutingError::Length {
            start: start.len(),
            end: end.len(),
        });
    }
    let total = |v: &[u64]| v.iter().map(|&x| u128::from(x)).sum::<u128>();
    let (start_total, end_total) = (total(start), total(end));
    if start_total != end_total {
        return Err(RoutingError::Total {
            start: start_total,
            end: end_total,
        });
    }
    let mut senders = start
        .iter()
        .zip(end)
        .enumerate()
        .filter(|(_, (s, e))| s > e)
        .map(|(i, (s, e))| (i, s - e));
    let mut receivers = start
        .iter()
        .zip(end)
        .enumerate()
        .filter(|(_, (s, e))| e > s)
        .map(|(i, (s, e))| (i, e - s));
    let mut transfers = Vec::new();
    let (mut sender, mut receiver) = (senders.next(), receivers.next());
    while let (Some((from, surplus)), Some((to, deficit))) = (sender, receiver) {
        let units = surplus.min(deficit);
        transfers.push(Transfer { from, to, units });
        sender = if surplus > units {
            Some((from, surplus - units))
        } else {
            senders.next()
        };
        receiver = if deficit > units {
            Some((to, deficit - units))
        } else {
            receivers.next()
        };
    }
    Ok(transfers)
}

/// The direct transfers from `start` to `end` that keep units near: each surplus unit sent
/// once to a node with a deficit, as [`direct`] does, but the pairs matched nearest first by
/// `distance(from, to)` (ties in index order), so that a node's surplus goes to the nearest
/// nodes that lack units — a spatial decomposition stays compact when the nodes are regions.
///
/// The result moves exactly [`minimum_units`] units, like [`direct`], in at most `S + R − 1`
/// transfers: every match saturates a sender or a receiver.
///
/// # Errors
/// [`RoutingError`] when the vectors differ in length or in total.
///
/// # Complexity
/// `O(S·R·log(S·R))` time and `O(S·R)` memory (`S` senders, `R` receivers).
///
/// ```
/// use hetlb_core::routing::direct_nearest;
/// // Nodes on a line at 0, 1, 2, 3: node 3's surplus goes to node 2 first.
/// let t = direct_nearest(&[3, 0, 0, 9], &[3, 3, 3, 3], |a, b| a.abs_diff(b) as f64).unwrap();
/// let moves: Vec<_> = t.iter().map(|t| (t.from, t.to, t.units)).collect();
/// assert_eq!(moves, vec![(3, 2, 3), (3, 1, 3)]);
/// ```
pub fn direct_nearest(
    start: &[u64],
    end: &[u64],
    distance: impl Fn(usize, usize) -> f64,
) -> Result<Vec<Transfer>, RoutingError> {
    // The checks of `direct`, and its senders and receivers.
    direct(start, end)?;
    let mut surplus: Vec<(usize, u64)> = start
        .iter()
        .zip(end)
        .enumerate()
        .filter(|(_, (s, e))| s > e)
        .map(|(i, (s, e))| (i, s - e))
        .collect();
    let mut deficit: Vec<(usize, u64)> = start
        .iter()
        .zip(end)
        .enumerate()
        .filter(|(_, (s, e))| e > s)
        .map(|(i, (s, e))| (i, e - s))
        .collect();
    let mut pairs: Vec<(f64, usize, usize)> = Vec::with_capacity(surplus.len() * deficit.len());
    for (a, &(from, _)) in surplus.iter().enumerate() {
        for (b, &(to, _)) in deficit.iter().enumerate() {
            let d = distance(from, to);
            pairs.push((if d.is_nan() { f64::INFINITY } else { d }, a, b));
        }
    }
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut transfers = Vec::new();
    for (_, a, b) in pairs {
        let units = surplus[a].1.min(deficit[b].1);
        if units == 0 {
            continue;
        }
        transfers.push(Transfer {
            from: surplus[a].0,
            to: deficit[b].0,
            units,
        });
        surplus[a].1 -= units;
        deficit[b].1 -= units;
    }
    Ok(transfers)
}

impl Plan {
    /// The same start and end as this plan, reached in one phase of [`direct_nearest`]
    /// transfers under `distance` (load-information traffic as in this plan).
    ///
    /// # Errors
    /// [`RoutingError`] only when the plan itself does not conserve its load.
    pub fn direct_nearest(
        &self,
        distance: impl Fn(usize, usize) -> f64,
    ) -> Result<Plan, RoutingError> {
        let transfers = direct_nearest(&self.initial, &self.final_loads, distance)?;
        Ok(self.in_one_phase(transfers))
    }

    /// This plan's start and end, moved by `transfers` in one phase.
    fn in_one_phase(&self, transfers: Vec<Transfer>) -> Plan {
        Plan {
            initial: self.initial.clone(),
            phases: one_phase(transfers),
            final_loads: self.final_loads.clone(),
            load_info: LoadInfo {
                messages: self.load_info.messages,
                words: self.load_info.words,
            },
        }
    }

    /// The same start and end as this plan, reached in one phase of [`direct`] transfers
    /// (load-information traffic as in this plan: the decision is the same).
    ///
    /// # Errors
    /// [`RoutingError`] only when the plan itself does not conserve its load.
    ///
    /// # Complexity
    /// `O(N)`.
    pub fn direct(&self) -> Result<Plan, RoutingError> {
        let transfers = direct(&self.initial, &self.final_loads)?;
        Ok(self.in_one_phase(transfers))
    }

    /// [`Plan::direct`] of this plan, its start and end vectors kept rather than copied.
    fn into_direct(self) -> Result<Plan, RoutingError> {
        let transfers = direct(&self.initial, &self.final_loads)?;
        Ok(Plan {
            phases: one_phase(transfers),
            ..self
        })
    }
}

/// The phases of a plan that makes `transfers` at once: none when there are none.
fn one_phase(transfers: Vec<Transfer>) -> Vec<Phase> {
    if transfers.is_empty() {
        Vec::new()
    } else {
        vec![Phase {
            dimension: None,
            transfers,
        }]
    }
}

/// The units and messages of a plan's own (hop-by-hop) routing beside the direct routing of
/// the same start and end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RoutingComparison {
    /// Units moved by the plan's routing, each hop counted (the task-hops of the plan).
    pub hop_units: u128,
    /// Task messages of the plan's routing (its transfers).
    pub hop_messages: u64,
    /// Units moved by direct routing ([`minimum_units`]).
    pub direct_units: u128,
    /// Task messages of direct routing.
    pub direct_messages: u64,
}

impl RoutingComparison {
    /// Counts both routings of `plan`.
    ///
    /// # Errors
    /// [`RoutingError`] when the plan does not conserve its load.
    ///
    /// # Complexity
    /// `O(N + T)` for `T` transfers.
    pub fn of(plan: &Plan) -> Result<Self, RoutingError> {
        let direct = direct(&plan.initial, &plan.final_loads)?;
        Ok(Self {
            hop_units: plan.transfers().map(|t| u128::from(t.units)).sum(),
            hop_messages: plan.transfers().count() as u64,
            direct_units: direct.iter().map(|t| u128::from(t.units)).sum(),
            direct_messages: direct.len() as u64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, BalanceOptions, balance};
    use proptest::prelude::*;

    #[test]
    fn mismatched_vectors_are_refused() {
        assert_eq!(
            direct(&[1, 2], &[3]),
            Err(RoutingError::Length { start: 2, end: 1 })
        );
        assert_eq!(
            direct(&[1, 2], &[3, 1]),
            Err(RoutingError::Total { start: 3, end: 4 })
        );
    }

    #[test]
    fn nearest_first_moves_units_no_farther_than_index_order() {
        // Two clusters on a line: surpluses at 0 and 10, deficits at 1 and 11.
        let place = [0.0f64, 1.0, 10.0, 11.0];
        let d = |a: usize, b: usize| (place[a] - place[b]).abs();
        let start = [5, 0, 5, 0];
        let end = [0, 5, 0, 5];
        let cost =
            |t: &[Transfer]| -> f64 { t.iter().map(|x| x.units as f64 * d(x.from, x.to)).sum() };
        let near = direct_nearest(&start, &end, d).unwrap();
        assert_eq!(cost(&near), 10.0);
        assert!(cost(&near) <= cost(&direct(&start, &end).unwrap()));
        assert!(direct_nearest(&[1, 2], &[3], d).is_err());
    }

    #[test]
    fn equal_vectors_need_no_transfer() {
        assert!(direct(&[4, 4, 4], &[4, 4, 4]).unwrap().is_empty());
        assert!(Plan::identity(&[1, 2]).direct().unwrap().phases.is_empty());
    }

    proptest! {
        /// Direct routing conserves the load, never overdraws a node, moves exactly the
        /// surplus, and needs at most S + R − 1 messages.
        #[test]
        fn direct_moves_exactly_the_surplus(
            pairs in prop::collection::vec((0u64..1_000, 0u64..1_000), 1..64)
        ) {
            let start: Vec<u64> = pairs.iter().map(|p| p.0).collect();
            // An end vector with the same total: the second values, rescaled by moving the
            // difference onto node 0 (or taking it from the largest nodes).
            let mut end: Vec<u64> = pairs.iter().map(|p| p.1).collect();
            let (s, e): (u64, u64) = (start.iter().sum(), end.iter().sum());
            if s >= e {
                end[0] += s - e;
            } else {
                let mut excess = e - s;
                for v in end.iter_mut() {
                    let take = excess.min(*v);
                    *v -= take;
                    excess -= take;
                }
            }
            // Index order, and nearest first on points of a line.
            let place = |i: usize| ((i * 7919) % 101) as f64;
            let by_index = direct(&start, &end).unwrap();
            let nearest = direct_nearest(&start, &end, |a, b| (place(a) - place(b)).abs()).unwrap();
            for t in [by_index, nearest] {
                let plan = Plan {
                    initial: start.clone(),
                    phases: vec![Phase { dimension: None, transfers: t.clone() }],
                    final_loads: end.clone(),
                    load_info: LoadInfo::default(),
                };
                prop_assert_eq!(plan.replay().unwrap(), end.clone());
                let moved: u128 = t.iter().map(|x| u128::from(x.units)).sum();
                prop_assert_eq!(moved, minimum_units(&start, &end));
                prop_assert!(t.iter().all(|x| x.units > 0 && x.from != x.to));
                let senders = start.iter().zip(&end).filter(|(a, b)| a > b).count();
                let receivers = start.iter().zip(&end).filter(|(a, b)| b > a).count();
                prop_assert!(t.len() <= (senders + receivers).saturating_sub(1));
            }
        }

        /// For every rule on every node count, direct routing reaches the rule's own final
        /// loads and moves no more units than the rule's hop-by-hop routing.
        #[test]
        fn direct_never_moves_more_than_the_rule(
            n in 1usize..=32,
            seed_loads in prop::collection::vec(0u64..500, 32),
            rule in 0usize..8,
        ) {
            // every count, the hypercube rules embedded in a cube where it is not a power of two
            let loads = &seed_loads[..n];
            let algorithm = Algorithm::HYPERCUBE[rule % Algorithm::HYPERCUBE.len()];
            let Ok(plan) = balance(algorithm, loads, &BalanceOptions::default()) else {
                return Ok(());
            };
            let d = plan.direct().unwrap();
            prop_assert_eq!(d.replay().unwrap(), plan.final_loads.clone());
            let c = RoutingComparison::of(&plan).unwrap();
            prop_assert!(c.direct_units <= c.hop_units);
            prop_assert_eq!(c.direct_units, minimum_units(loads, &plan.final_loads));
        }
    }
}
