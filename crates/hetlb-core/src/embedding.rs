//! The hypercube rules on any number of nodes.
//!
//! The dimension-exchange rules and cube walking are defined on `2^n` nodes. Zoltan balances
//! any number of ranks with every method, and so does hetlb: a node count `N` that is not a
//! power of two is embedded in a cube in one of two ways, chosen by the rule's family.
//!
//! * **Virtual nodes** (`cwa`, which sets exact targets from the whole load vector): the `N`
//!   nodes are the first `N` of the cube of `M = 2^⌈log₂N⌉` nodes. Node `v ≥ N` is *virtual*:
//!   it has capacity 0 and is hosted by node `v − M/2`, its neighbour across the top
//!   dimension, which is always real. Cube walking gives every virtual node the target 0, so
//!   they end empty; a unit that passes through one on its way is carried by its host. The
//!   bound is unchanged: every node ends within one unit of its exact share, and with equal
//!   capacities the max difference is at most 1.
//! * **Folding** (the pair rules `dem`, `dem-fixed`, `dem-improved`, `dem-hetero`, `oem` and
//!   `hybrid`): let `M' = 2^⌊log₂N⌋` and `E = N − M'`. A pair rule splits each pair's units
//!   from the two loads alone, so a partner of capacity 0 cannot stand in for missing nodes
//!   without losing the rule's bound. Instead, every node's exact share of the whole total
//!   is computed first ([`proportional_targets`]); in a first phase each *extra* node
//!   `r ≥ M'` hands what it holds above its share to its *twin* `r − M'`; the rule then runs
//!   unchanged on the `M'`-cube; in a last phase the extra nodes receive what they lack
//!   from the cube's nodes, taken from the largest surpluses first (water-filling), each
//!   extra node served by its twin first. A balanced vector moves nothing. If
//!   the rule ends the cube within `B` units (its bound on `⌊log₂N⌋` dimensions), the `N`
//!   nodes end within `B + 2` units: the extra nodes on their targets, the cube's nodes
//!   within `B + 1` of theirs, targets one apart. The property tests check that bound for
//!   every pair rule on every count up to 70.
//!
//! A power-of-two count is the cube itself: the rule runs as the papers write it.
//!
//! Load information: a folded plan counts the rule's messages on the `M'`-cube plus an
//! all-gather of the `N` loads before the last phase (`N·⌈log₂N⌉` messages, `N·(N−1)`
//! words); a plan on virtual nodes counts the messages of the whole `M`-cube, a host
//! answering for its virtual node.

use crate::allocation::{proportional_targets, water_fill};
use crate::model::{Capacities, ModelError, total_load};
use crate::plan::{LoadInfo, Phase, Plan, Transfer};
use std::collections::BTreeMap;

/// How a hypercube rule reaches a node count.
///
/// # Example
/// ```
/// use hetlb_core::embedding::Embedding;
/// use hetlb_core::Algorithm;
/// assert_eq!(Embedding::of(Algorithm::Dem, 8), Embedding::Cube { dimensions: 3 });
/// assert_eq!(Embedding::of(Algorithm::Cwa, 6), Embedding::Virtual { cube: 8 });
/// assert_eq!(Embedding::of(Algorithm::Oem, 6), Embedding::Folded { cube: 4 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
#[non_exhaustive]
pub enum Embedding {
    /// A power of two: the rule's own cube.
    Cube {
        /// The cube's dimension.
        dimensions: u32,
    },
    /// The first nodes of a larger cube whose other nodes are virtual (capacity 0).
    Virtual {
        /// Nodes of the cube, virtual ones included.
        cube: usize,
    },
    /// The rule on the largest cube that fits, the other nodes folded onto it.
    Folded {
        /// Nodes of the cube the rule runs on.
        cube: usize,
    },
}

impl Embedding {
    /// The embedding of `algorithm` (a hypercube rule) on `nodes` nodes (at least 1).
    pub fn of(algorithm: crate::Algorithm, nodes: usize) -> Self {
        let nodes = nodes.max(1);
        if nodes.is_power_of_two() {
            Embedding::Cube {
                dimensions: nodes.trailing_zeros(),
            }
        } else if algorithm == crate::Algorithm::Cwa {
            Embedding::Virtual {
                cube: nodes.next_power_of_two(),
            }
        } else {
            Embedding::Folded {
                cube: largest_cube(nodes),
            }
        }
    }

    /// The dimension of the cube the rule's phases run on (`⌈log₂N⌉` on virtual nodes,
    /// `⌊log₂N⌋` folded): the `n` of the rule's bound.
    pub fn dimensions(self) -> u32 {
        match self {
            Embedding::Cube { dimensions } => dimensions,
            Embedding::Virtual { cube } | Embedding::Folded { cube } => cube.trailing_zeros(),
        }
    }

    /// Units added to the rule's bound on the max difference: 2 when folded, else 0.
    pub fn extra_bound(self) -> u64 {
        match self {
            Embedding::Folded { .. } => 2,
            _ => 0,
        }
    }
}

/// `2^⌊log₂ n⌋` for `n ≥ 1`.
fn largest_cube(n: usize) -> usize {
    1usize << (usize::BITS - 1 - n.leading_zeros())
}

/// Runs a whole-vector rule on the cube of `2^⌈log₂N⌉` nodes whose nodes past `N` are
/// virtual, and maps the plan back onto the `N` nodes.
///
/// `walk` receives the padded loads (virtual nodes hold 0) and one weight per cube node
/// (the capacity, 1 without capacities, 0 for a virtual node); it must update the loads and
/// return the phases, over cube links, never overdrawing a node.
///
/// # Errors
/// [`ModelError`] for no loads, an overflowing total or a capacity list of the wrong length.
///
/// # Complexity
/// That of `walk` on `M < 2N` nodes, plus `O(T log T)` to map its `T` transfers.
///
/// # Example
/// ```
/// use hetlb_core::embedding::on_virtual_nodes;
/// use hetlb_core::rules::cube_walking::walk_weighted;
/// let p = on_virtual_nodes(&[0, 0, 0, 0, 0, 60], None, walk_weighted).unwrap();
/// assert_eq!(p.final_loads, vec![10; 6]);
/// assert_eq!(p.replay().unwrap(), p.final_loads);
/// ```
pub fn on_virtual_nodes(
    loads: &[u64],
    capacities: Option<&Capacities>,
    walk: impl FnOnce(&mut [u64], &[f64]) -> Vec<Phase>,
) -> Result<Plan, ModelError> {
    let n = checked(loads, capacities)?;
    let m = n.next_power_of_two();
    let mut padded = loads.to_vec();
    padded.resize(m, 0);
    let mut weights: Vec<f64> = match capacities {
        Some(c) => c.as_slice().to_vec(),
        None => vec![1.0; n],
    };
    weights.resize(m, 0.0);
    let cube_phases = walk(&mut padded, &weights);
    let host = |v: usize| if v < n { v } else { v - m / 2 };
    let phases = cube_phases
        .iter()
        .map(|p| Phase {
            dimension: p.dimension,
            transfers: net(p
                .transfers
                .iter()
                .map(|t| (host(t.from), host(t.to), t.units))),
        })
        .collect();
    let mut final_loads = padded[..n].to_vec();
    for (v, &w) in padded.iter().enumerate().skip(n) {
        final_loads[host(v)] += w;
    }
    let messages = (m as u64) * u64::from(m.trailing_zeros());
    Ok(Plan {
        initial: loads.to_vec(),
        phases,
        final_loads,
        load_info: LoadInfo {
            messages,
            words: (m as u64) * (m as u64 - 1),
        },
    })
}

/// Runs a rule on the largest cube of the `N` nodes, the others folded onto it first and
/// served their exact shares last (see the module documentation).
///
/// `rule` receives the loads of the cube's `2^⌊log₂N⌋` nodes after the fold, and their
/// capacities; it returns its plan on them.
///
/// # Errors
/// [`ModelError`] as [`on_virtual_nodes`]; whatever `rule` returns.
///
/// # Complexity
/// That of `rule` on `M' ≤ N` nodes, plus `O(N log L)` for `L` the largest load.
///
/// # Example
/// ```
/// use hetlb_core::embedding::folded;
/// use hetlb_core::exchange::plan;
/// use hetlb_core::rules::dimension_exchange::Dem;
/// use hetlb_core::ModelError;
/// let p = folded(&[60, 0, 0, 0, 0, 0], None, |l, _| plan(&Dem, l)).unwrap();
/// assert_eq!(p.final_loads, vec![10; 6]);
/// assert_eq!(p.replay().unwrap(), p.final_loads);
/// # Ok::<(), ModelError>(())
/// ```
pub fn folded<E: From<ModelError>>(
    loads: &[u64],
    capacities: Option<&Capacities>,
    rule: impl FnOnce(&[u64], Option<&Capacities>) -> Result<Plan, E>,
) -> Result<Plan, E> {
    let n = checked(loads, capacities)?;
    let cube = largest_cube(n);
    let total = total_load(loads)?;
    let weights: Vec<f64> = match capacities {
        Some(c) => c.as_slice().to_vec(),
        None => vec![1.0; n],
    };
    // Every node's exact share; ties go to the heavier node, so that less moves.
    let targets = proportional_targets(total, &weights, loads);
    let mut current = loads.to_vec();
    let mut fold = Vec::new();
    for extra in cube..n {
        let units = current[extra].saturating_sub(targets[extra]);
        if units > 0 {
            current[extra] -= units;
            current[extra - cube] += units;
            fold.push(Transfer {
                from: extra,
                to: extra - cube,
                units,
            });
        }
    }
    let cube_capacities = capacities
        .map(|c| Capacities::new(c.as_slice()[..cube].to_vec()))
        .transpose()?;
    let inner = rule(&current[..cube], cube_capacities.as_ref())?;
    current[..cube].copy_from_slice(&inner.final_loads);
    let unfold = serve_extras(&mut current, &targets, cube);
    let mut phases = Vec::with_capacity(inner.phases.len() + 2);
    phases.push(Phase {
        dimension: None,
        transfers: fold,
    });
    phases.extend(inner.phases);
    phases.push(Phase {
        dimension: None,
        transfers: unfold,
    });
    let n64 = n as u64;
    let gather_rounds = u64::from(n.next_power_of_two().trailing_zeros());
    Ok(Plan {
        initial: loads.to_vec(),
        phases,
        final_loads: current,
        load_info: LoadInfo {
            messages: inner.load_info.messages + n64 * gather_rounds,
            words: inner.load_info.words + n64 * (n64 - 1),
        },
    })
}

/// Validates the loads and capacities; the node count.
fn checked(loads: &[u64], capacities: Option<&Capacities>) -> Result<usize, ModelError> {
    if loads.is_empty() {
        return Err(ModelError::Empty);
    }
    total_load(loads)?;
    if let Some(c) = capacities
        && c.len() != loads.len()
    {
        return Err(ModelError::CapacityCount {
            capacities: c.len(),
            nodes: loads.len(),
        });
    }
    Ok(loads.len())
}

/// The last phase of a folded plan: nodes `cube..` (at or below their targets) receive what
/// they lack from nodes `..cube`, taken from the largest surpluses over target first; each
/// extra node is served by its twin first, then in node order.
fn serve_extras(current: &mut [u64], targets: &[u64], cube: usize) -> Vec<Transfer> {
    let mut want: Vec<u64> = targets[cube..]
        .iter()
        .zip(&current[cube..])
        .map(|(&t, &w)| t - w)
        .collect();
    let needed: u64 = want.iter().sum();
    let surplus: Vec<u64> = current[..cube]
        .iter()
        .zip(targets)
        .map(|(&w, &t)| w.saturating_sub(t))
        .collect();
    // Taking from the largest surpluses first is keeping the rest with the largest kept
    // share as small as possible.
    let available: u64 = surplus.iter().sum();
    let keep = water_fill(&surplus, available - needed);
    let mut give: Vec<u64> = surplus.iter().zip(&keep).map(|(s, k)| s - k).collect();
    let mut flows: Vec<(usize, usize, u64)> = Vec::new();
    for (e, want) in want.iter_mut().enumerate() {
        let units = give[e].min(*want);
        if units > 0 {
            give[e] -= units;
            *want -= units;
            flows.push((e, cube + e, units));
        }
    }
    let mut sender = 0;
    for (e, want) in want.iter_mut().enumerate() {
        while *want > 0 {
            while give[sender] == 0 {
                sender += 1;
            }
            let units = give[sender].min(*want);
            give[sender] -= units;
            *want -= units;
            flows.push((sender, cube + e, units));
        }
    }
    for &(from, to, units) in &flows {
        current[from] -= units;
        current[to] += units;
    }
    net(flows.into_iter())
}

/// One transfer per ordered pair of distinct nodes with a positive net flow, in order of the
/// pair: flows between a node and itself vanish, opposite flows cancel.
fn net(flows: impl Iterator<Item = (usize, usize, u64)>) -> Vec<Transfer> {
    let mut by_pair: BTreeMap<(usize, usize), i128> = BTreeMap::new();
    for (from, to, units) in flows.filter(|&(f, t, u)| f != t && u > 0) {
        let (key, sign) = if from < to {
            ((from, to), 1)
        } else {
            ((to, from), -1)
        };
        *by_pair.entry(key).or_default() += sign * i128::from(units);
    }
    by_pair
        .into_iter()
        .filter(|&(_, flow)| flow != 0)
        .map(|((a, b), flow)| {
            let (from, to) = if flow > 0 { (a, b) } else { (b, a) };
            Transfer {
                from,
                to,
                units: flow.unsigned_abs() as u64,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposite_flows_cancel() {
        let t = net([(0, 1, 5), (1, 0, 2), (2, 2, 9), (3, 1, 1)].into_iter());
        assert_eq!(
            t,
            vec![
                Transfer {
                    from: 0,
                    to: 1,
                    units: 3
                },
                Transfer {
                    from: 3,
                    to: 1,
                    units: 1
                }
            ]
        );
    }

    #[test]
    fn the_extras_are_served_by_their_twins_first() {
        // 6 nodes: 0..4 hold 15 each after the rule, 4 and 5 need 10 each.
        let mut current = vec![15, 15, 15, 15, 0, 0];
        let targets = vec![10; 6];
        let t = serve_extras(&mut current, &targets, 4);
        assert_eq!(current, vec![10; 6]);
        assert!(t.contains(&Transfer {
            from: 0,
            to: 4,
            units: 5
        }));
        assert!(t.contains(&Transfer {
            from: 1,
            to: 5,
            units: 5
        }));
    }
}
