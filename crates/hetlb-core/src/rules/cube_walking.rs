//! The cube walking algorithm and the OEM/CWA hybrid.
//!
//! CWA (Wu & Shu 1996, as Rim et al. describe it in §5) uses *global* information:
//! every node first learns the load of every other node, computes its integer target, and the
//! cube is then balanced recursively between halves, highest dimension first. In the phase of
//! dimension `j`, each subcube of dimension `j + 1` is split into the half with bit `j` clear
//! (A) and the half with bit `j` set (B); if A holds more than its target total it sends the
//! difference to B over the dimension-`j` links (or the other way round). After the phase of
//! dimension 0 every node holds exactly its target, so the max difference is at most 1.
//!
//! Choices the paper leaves open, made here:
//! * **Targets** are the largest-remainder rounding of `c_i·W/Σc` ([`proportional_targets`]);
//!   with equal capacities the nodes that get `⌈W/N⌉` are the most loaded ones (ties to the
//!   lower address), which spares transfers. Capacities are our extension: no paper does this.
//! * **Which links carry a half's surplus**: only nodes above their own target send, and the
//!   surplus is spread over them by water-filling (each sends `min(excess, λ)` for the smallest
//!   level `λ` that covers the surplus, remaining units to the lowest addresses), which
//!   minimises the phase's `Tmax`.
//! * **Load collection** is an all-gather by recursive doubling: in step `k` every node sends
//!   the `2^k` loads it knows to its dimension-`k` partner; `nN` messages carrying `N(N−1)`
//!   load values in all. Every node then holds the whole vector, so the average needs no
//!   separate broadcast.

use crate::allocation::{proportional_targets, water_fill};
use crate::exchange::plan_dimensions;
use crate::model::{Capacities, ModelError, total_load};
use crate::plan::{LoadInfo, Phase, Plan, Transfer};
use crate::rules::dimension_exchange::{DemHetero, Oem};
use crate::topology::Hypercube;

/// `cwa`: the cube walking algorithm, optionally capacity-aware.
///
/// # Arguments
/// * `loads` — one load per node; the count must be a power of two.
/// * `capacities` — `None` for equal nodes; otherwise node `i`'s target is its proportional
///   share `c_i·W/Σc`, rounded by largest remainder so that the targets sum to `W`.
///
/// # Returns
/// A plan of `n` phases (dimensions `n−1` down to 0) after which every node holds exactly its
/// target.
///
/// # Bound
/// Max − min ≤ 1 with equal capacities; every node within one unit of its proportional share
/// otherwise.
///
/// # Errors
/// [`ModelError`] for a count that is not a power of two, an overflowing total, or a capacity
/// list of the wrong length.
///
/// # Complexity
/// `O(N log N)` plus `O(N log N)` for the targets.
///
/// # Example
/// ```
/// use hetlb_core::rules::cube_walking::cube_walking;
/// let plan = cube_walking(&[20, 0, 3, 9, 30, 1, 11, 12], None).unwrap();
/// assert_eq!(plan.final_loads, vec![11, 10, 11, 11, 11, 10, 11, 11]);
/// assert_eq!(plan.load_info.messages, 3 * 8);
/// ```
pub fn cube_walking(loads: &[u64], capacities: Option<&Capacities>) -> Result<Plan, ModelError> {
    hybrid(loads, capacities, 1)
}

/// `hybrid`: OEM in the first `log P` phases, then CWA in the remaining `log(N/P)`
/// (Rim, Jang & Kim 2003, §5.5).
///
/// After the OEM phases, each group of `P` consecutive addresses (a `log P`-subcube) is
/// balanced within `⌈log P / 2⌉`. The CWA phases then balance, independently, each of the `P`
/// "columns" of nodes that share their low `log P` address bits — a `log(N/P)`-cube — using
/// only that column's loads. With capacities, the first phases use the capacity-proportional
/// pair split of [`DemHetero`] instead of OEM (OEM has no capacity-aware form) and the CWA
/// phases use proportional targets.
///
/// # Arguments
/// * `procs_per_group` — `P`, a power of two dividing `N`. `P = 1` is pure CWA, `P = N` pure
///   OEM.
///
/// # Bound
/// Max − min ≤ `⌈log P / 2⌉ + 1` with equal capacities (the paper states `log P + 1`).
///
/// # Errors
/// As [`cube_walking`], plus [`ModelError::GroupSize`].
///
/// # Example
/// ```
/// use hetlb_core::rules::cube_walking::hybrid;
/// let plan = hybrid(&[20, 0, 3, 9, 30, 1, 11, 12], None, 2).unwrap();
/// let (min, max) = (plan.final_loads.iter().min().unwrap(), plan.final_loads.iter().max().unwrap());
/// assert!(max - min <= 2);
/// assert_eq!(plan.phases.len(), 3);
/// ```
pub fn hybrid(
    loads: &[u64],
    capacities: Option<&Capacities>,
    procs_per_group: usize,
) -> Result<Plan, ModelError> {
    let cube = Hypercube::for_nodes(loads.len())?;
    total_load(loads)?;
    if let Some(c) = capacities
        && c.len() != loads.len()
    {
        return Err(ModelError::CapacityCount {
            capacities: c.len(),
            nodes: loads.len(),
        });
    }
    if procs_per_group == 0 || !procs_per_group.is_power_of_two() || procs_per_group > loads.len() {
        return Err(ModelError::GroupSize {
            group: procs_per_group,
            nodes: loads.len(),
        });
    }
    let n = cube.dimensions();
    let p = procs_per_group.trailing_zeros();
    let mut current = loads.to_vec();
    let mut phases = match capacities {
        Some(c) if !c.is_uniform() => plan_dimensions(&DemHetero::new(c), cube, &mut current, 0..p),
        _ => plan_dimensions(&Oem, cube, &mut current, 0..p),
    };
    let walk_dims = n - p;
    let targets = column_targets(&current, capacities.map(Capacities::as_slice), p);
    for j in (p..n).rev() {
        phases.push(walk_dimension(&mut current, &targets, p, j));
    }
    let nodes = loads.len() as u64;
    let column = 1u64 << walk_dims;
    Ok(Plan {
        initial: loads.to_vec(),
        phases,
        final_loads: current,
        load_info: LoadInfo {
            messages: nodes * u64::from(p) + nodes * u64::from(walk_dims),
            words: nodes * u64::from(p) + nodes * (column - 1),
        },
    })
}

/// The cube walking phases on a cube whose nodes may have weight 0: every node walks to its
/// exact share of the total in proportion to `weights` (so a node of weight 0 ends empty).
/// The engine of `cwa` on a node count that is not a power of two
/// ([`crate::embedding::on_virtual_nodes`]); `loads` are updated.
///
/// `loads.len()` must be a power of two with one weight per node, at least one positive,
/// and the total must fit in a `u64`.
///
/// # Complexity
/// `O(N log N)` plus `O(N log L)` for the water-filling of the largest load `L`.
///
/// # Example
/// ```
/// use hetlb_core::rules::cube_walking::walk_weighted;
/// let mut loads = vec![9, 0, 3, 0];
/// let phases = walk_weighted(&mut loads, &[1.0, 1.0, 1.0, 0.0]);
/// assert_eq!(loads, vec![4, 4, 4, 0]);
/// assert_eq!(phases.len(), 2);
/// ```
pub fn walk_weighted(loads: &mut [u64], weights: &[f64]) -> Vec<Phase> {
    debug_assert!(loads.len().is_power_of_two() && weights.len() == loads.len());
    let n = loads.len().trailing_zeros();
    let targets = column_targets(loads, Some(weights), 0);
    (0..n)
        .rev()
        .map(|j| walk_dimension(loads, &targets, 0, j))
        .collect()
}

/// Targets of every node for the CWA phases over dimensions `p..n`: each column (nodes that
/// share their low `p` bits) distributes its own total.
fn column_targets(loads: &[u64], capacities: Option<&[f64]>, p: u32) -> Vec<u64> {
    let columns = 1usize << p;
    if columns == 1 {
        // One column: the whole cube, its members in address order.
        let total = loads.iter().sum();
        return match capacities {
            Some(caps) => proportional_targets(total, caps, loads),
            None => proportional_targets(total, &vec![1.0; loads.len()], loads),
        };
    }
    let mut targets = vec![0u64; loads.len()];
    for c in 0..columns {
        let members: Vec<usize> = (c..loads.len()).step_by(columns).collect();
        let member_loads: Vec<u64> = members.iter().map(|&u| loads[u]).collect();
        let caps: Vec<f64> = match capacities {
            Some(caps) => members.iter().map(|&u| caps[u]).collect(),
            None => vec![1.0; members.len()],
        };
        let total = member_loads.iter().sum();
        let t = proportional_targets(total, &caps, &member_loads);
        for (&u, t) in members.iter().zip(t) {
            targets[u] = t;
        }
    }
    targets
}

/// One CWA phase: dimension `j`, subcubes spanning bits `p..=j`.
fn walk_dimension(loads: &mut [u64], targets: &[u64], p: u32, j: u32) -> Phase {
    let span_bits = j - p; // bits p..j-1 vary inside a half
    let half_size = 1usize << span_bits;
    let group_mask = ((1usize << (j + 1)) - 1) & !((1usize << p) - 1);
    let bit = 1usize << j;
    let mut transfers = Vec::new();
    // The sending half's excess over its targets, one subcube at a time (reused).
    let mut excess: Vec<u64> = Vec::new();
    for key in (0..loads.len()).filter(|u| u & group_mask == 0) {
        let a_node = |s: usize| key | (s << p);
        let (load_a, target_a) = (0..half_size)
            .map(a_node)
            .fold((0u64, 0u64), |(l, t), u| (l + loads[u], t + targets[u]));
        let surplus = load_a.abs_diff(target_a);
        if surplus == 0 {
            continue;
        }
        // The half above its targets sends: half `a` itself, or its partner across `j`.
        let across = if load_a > target_a { 0 } else { bit };
        let sender = |s: usize| a_node(s) | across;
        excess.clear();
        excess.extend((0..half_size).map(|s| {
            let u = sender(s);
            loads[u].saturating_sub(targets[u])
        }));
        for (s, units) in water_fill(&excess, surplus).into_iter().enumerate() {
            if units > 0 {
                let from = sender(s);
                let to = from ^ bit;
                loads[from] -= units;
                loads[to] += units;
                transfers.push(Transfer { from, to, units });
            }
        }
    }
    transfers.sort_by_key(|t| (t.from.min(t.to), t.from));
    Phase {
        dimension: Some(j),
        transfers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwa_reaches_targets_and_hybrid_validates_group_size() {
        let loads = [15, 1, 1, 1, 1, 1, 1, 1];
        let plan = cube_walking(&loads, None).unwrap();
        assert_eq!(plan.final_loads, vec![3, 3, 3, 3, 3, 3, 2, 2]);
        assert_eq!(plan.replay().unwrap(), plan.final_loads);
        assert_eq!(
            plan.phases.iter().map(|p| p.dimension).collect::<Vec<_>>(),
            vec![Some(2), Some(1), Some(0)]
        );
        for bad in [0, 3, 16] {
            assert!(matches!(
                hybrid(&loads, None, bad),
                Err(ModelError::GroupSize { .. })
            ));
        }
        let all_oem = hybrid(&loads, None, 8).unwrap();
        let oem = crate::exchange::plan(&Oem, &loads).unwrap();
        assert_eq!(all_oem.final_loads, oem.final_loads);
    }

    #[test]
    fn capacity_aware_cwa_hits_proportional_targets() {
        let caps = Capacities::new(vec![1.0, 2.0, 3.0, 2.0]).unwrap();
        let plan = cube_walking(&[0, 0, 80, 0], Some(&caps)).unwrap();
        assert_eq!(plan.final_loads, vec![10, 20, 30, 20]);
    }
}
