//! Engines that apply a [`PairRule`] to a whole hypercube.
//!
//! * [`plan`] records every transfer of every phase: the input of the metrics, the
//!   transmission schedules and the runtime.
//! * [`balance_in_place`] computes only the final loads and a few totals, cache-blocked,
//!   vectorised and spread over threads, for sizes where a full plan would not fit in memory
//!   (2^24 nodes make 200 million transfers) and for the Monte-Carlo and exhaustive
//!   experiments.
//!
//! Both give identical final loads and totals; property tests check it for every pair rule.
//! `README.md` beside this file explains how the in-place engine is laid out.

mod bitsliced;
mod cells;
mod engine;
mod in_place;
mod lanes;
mod recorded;
mod scalar;

pub use in_place::{balance_block, balance_in_place, simd_target};

use crate::model::{LoadSummary, ModelError, load_summary, total_load};
use crate::plan::{LoadInfo, Phase, Plan, Transfer};
use crate::rules::dimension_exchange::{OddUnit, PairContext, PairRule};
use crate::topology::Hypercube;
use std::ops::Range;

/// Balances `loads` (one per node of a hypercube) with `rule` over all dimensions `0..n` and
/// records the plan.
///
/// Load information: in each phase both nodes of every pair send their load to the other, one
/// message of one word each (`nN` messages in all, as Chau & Fu count, §3).
///
/// # Errors
/// [`ModelError`] when the number of loads is not a power of two or the total overflows.
///
/// # Complexity
/// `O(N log N)` time, `O(N + T)` memory for `T` transfers.
///
/// # Example
/// ```
/// use hetlb_core::exchange::plan;
/// use hetlb_core::rules::dimension_exchange::Oem;
/// let p = plan(&Oem, &[4, 0, 9, 2, 7, 7, 4, 7]).unwrap();
/// assert_eq!(p.final_loads.iter().sum::<u64>(), 40);
/// assert_eq!(p.phases.len(), 3);
/// ```
pub fn plan<R: PairRule>(rule: &R, loads: &[u64]) -> Result<Plan, ModelError> {
    let cube = Hypercube::for_nodes(loads.len())?;
    total_load(loads)?;
    let mut current = loads.to_vec();
    let phases = plan_dimensions(rule, cube, &mut current, 0..cube.dimensions());
    let messages = (phases.len() * loads.len()) as u64;
    Ok(Plan {
        initial: loads.to_vec(),
        phases,
        final_loads: current,
        load_info: LoadInfo {
            messages,
            words: messages,
        },
    })
}

/// Applies `rule` to the dimensions `dims` of `cube`, in order, updating `loads` and returning
/// one phase per dimension. `loads` must have `cube.nodes()` entries with a total that fits in
/// a `u64`.
pub fn plan_dimensions<R: PairRule>(
    rule: &R,
    cube: Hypercube,
    loads: &mut [u64],
    dims: Range<u32>,
) -> Vec<Phase> {
    dims.map(|k| {
        // At most one transfer per pair; reserving them all avoids regrowing huge vectors.
        let mut transfers = Vec::with_capacity(cube.nodes() / 2);
        exchange_dimension(rule, cube, loads, k, &mut transfers);
        transfers.shrink_to_fit();
        Phase {
            dimension: Some(k),
            transfers,
        }
    })
    .collect()
}

/// Balances `loads` in place with `rule` over all dimensions, appending every transfer to
/// `transfers`: the transfers of [`plan`]'s phases, one phase after the other, without a
/// vector per phase. For callers that balance again and again (the simulator's threshold
/// policy) and keep `transfers` from one call to the next.
///
/// # Errors
/// [`ModelError`] when the number of loads is not a power of two or the total overflows.
///
/// # Complexity
/// `O(N log N)` time; no allocation once `transfers` has the capacity. For the halving rules
/// (`dem`, `dem-fixed`, `dem-improved`, `oem`) the pairs of dimensions 3 and up are decided
/// eight at a time in vector instructions, and transfers are written only for the groups in
/// which a pair moves; dimensions 0 to 2 are decided together on cells of eight nodes held in
/// registers (the decisions without a branch; writing a transfer still branches where a pair
/// moves), and a cell holding only loads `q` and `q + 1` is one lookup in a table of its
/// outcomes. A cube of at least 64 nodes whose loads all lie within three units of the
/// smallest (the simulator's cubes between two balances) goes through every dimension on two
/// bit planes of the loads' offsets, 64 pairs per word operation. The result is the same
/// transfer for transfer.
///
/// # Example
/// ```
/// use hetlb_core::exchange::{plan, transfers_in_place};
/// use hetlb_core::rules::dimension_exchange::Dem;
/// let mut loads = vec![4u64, 0, 9, 2];
/// let mut transfers = Vec::new();
/// transfers_in_place(&Dem, &mut loads, &mut transfers).unwrap();
/// let p = plan(&Dem, &[4, 0, 9, 2]).unwrap();
/// assert_eq!(loads, p.final_loads);
/// assert_eq!(transfers, p.transfers().copied().collect::<Vec<_>>());
/// ```
pub fn transfers_in_place<R: PairRule>(
    rule: &R,
    loads: &mut [u64],
    transfers: &mut Vec<Transfer>,
) -> Result<(), ModelError> {
    let cube = Hypercube::for_nodes(loads.len())?;
    let summary = load_summary(loads)?;
    let mut place = [[OddUnit::Low; 2]; usize::BITS as usize];
    match on_planes(rule, cube, summary, &mut place) {
        Some(place) => bitsliced::balance_in_place(place, loads, summary.min, transfers),
        None => record_dimensions(rule, cube, loads, transfers),
    }
    Ok(())
}

/// The transfers of [`transfers_in_place`] without changing `loads`, and the smallest, the
/// largest and the total load after the balance: what a simulator's global policy needs, which
/// moves tasks by the transfers and keeps statistics of the outcome. `scratch` holds a copy of
/// the loads where the engine needs one (a cube spread over more than four values, a rule
/// other than a halving one); a nearly balanced cube is read where it is.
///
/// # Errors
/// [`ModelError`] when the number of loads is not a power of two or the total overflows.
///
/// # Complexity
/// That of [`transfers_in_place`]; for a cube of at least 64 nodes within four values, no
/// copy of the loads and no pass over them after the balance.
///
/// # Example
/// ```
/// use hetlb_core::exchange::{transfers_in_place, transfers_of};
/// use hetlb_core::rules::dimension_exchange::Oem;
/// let loads = vec![4u64, 0, 9, 2];
/// let (mut transfers, mut scratch) = (Vec::new(), Vec::new());
/// let after = transfers_of(&Oem, &loads, &mut scratch, &mut transfers).unwrap();
/// let mut balanced = loads.clone();
/// let mut expected = Vec::new();
/// transfers_in_place(&Oem, &mut balanced, &mut expected).unwrap();
/// assert_eq!(transfers, expected);
/// assert_eq!((after.min, after.max, after.total), (3, 4, 15));
/// ```
pub fn transfers_of<R: PairRule>(
    rule: &R,
    loads: &[u64],
    scratch: &mut Vec<u64>,
    transfers: &mut Vec<Transfer>,
) -> Result<LoadSummary, ModelError> {
    let cube = Hypercube::for_nodes(loads.len())?;
    let summary = load_summary(loads)?;
    let mut place = [[OddUnit::Low; 2]; usize::BITS as usize];
    if let Some(place) = on_planes(rule, cube, summary, &mut place) {
        let (min, max) = bitsliced::balance_extremes(place, loads, summary.min, transfers);
        return Ok(LoadSummary {
            min,
            max,
            ..summary
        });
    }
    scratch.clear();
    scratch.extend_from_slice(loads);
    record_dimensions(rule, cube, scratch, transfers);
    load_summary(scratch)
}

/// For a halving rule on a cube of at least 64 nodes whose loads (`summary`) lie within
/// four values: the odd units' placements, for [`bitsliced`]; `None` otherwise.
fn on_planes<'p, R: PairRule>(
    rule: &R,
    cube: Hypercube,
    summary: LoadSummary,
    place: &'p mut [[OddUnit; 2]],
) -> Option<&'p [[OddUnit; 2]]> {
    let n = cube.dimensions();
    (n >= bitsliced::MIN_DIMS && summary.max - summary.min <= bitsliced::MAX_SPREAD)
        .then(|| placements(rule, n, place))
        .flatten()
}

/// Every dimension of `cube` in order, recording the transfers: cells of eight nodes for the
/// lowest three and groups of pairs for the others under a halving rule, pair by pair
/// otherwise. The total must fit.
fn record_dimensions<R: PairRule>(
    rule: &R,
    cube: Hypercube,
    loads: &mut [u64],
    transfers: &mut Vec<Transfer>,
) {
    let n = cube.dimensions();
    let mut first = 0;
    if let Some(odd) = low_placements(rule, n) {
        cells::low_dimensions(odd, loads, transfers);
        first = 3;
    }
    for k in first..n {
        // A halving rule's dimensions with chunks of at least a group of pairs go through the
        // branch-free groups of `recorded`; the others, and other rules, pair by pair.
        let odd = rule.odd_unit(k, n, false).zip(rule.odd_unit(k, n, true));
        match odd {
            Some((clear, set)) if 1usize << k >= recorded::GROUP => {
                recorded::halving_dimension([clear, set], loads, k, transfers);
            }
            _ => exchange_dimension(rule, cube, loads, k, transfers),
        }
    }
}

/// For a halving rule, who keeps the odd unit in each dimension `k < n` by bit `k + 1` of a
/// pair's addresses, written into `place`; `None` for another rule.
fn placements<'p, R: PairRule>(
    rule: &R,
    n: u32,
    place: &'p mut [[OddUnit; 2]],
) -> Option<&'p [[OddUnit; 2]]> {
    let place = &mut place[..n as usize];
    for (k, placement) in (0..).zip(place.iter_mut()) {
        *placement = [rule.odd_unit(k, n, false)?, rule.odd_unit(k, n, true)?];
    }
    Some(place)
}

/// For a halving rule on a cube of at least [`cells::CELL`] nodes, who keeps the odd unit in
/// dimensions 0, 1 and 2, by bit `k + 1` of a pair's addresses.
fn low_placements<R: PairRule>(rule: &R, n: u32) -> Option<[[OddUnit; 2]; 3]> {
    if n < cells::CELL.trailing_zeros() {
        return None;
    }
    let mut odd = [[OddUnit::Low; 2]; 3];
    for (k, placement) in (0..).zip(&mut odd) {
        *placement = [rule.odd_unit(k, n, false)?, rule.odd_unit(k, n, true)?];
    }
    Some(odd)
}

/// Applies `rule` to dimension `k` of `cube`, appending the transfers.
fn exchange_dimension<R: PairRule>(
    rule: &R,
    cube: Hypercube,
    loads: &mut [u64],
    k: u32,
    transfers: &mut Vec<Transfer>,
) {
    let n = cube.dimensions();
    let half = 1usize << k;
    // chunks of 2^(k+1) nodes: the first half pairs with the second
    for (c, chunk) in loads.chunks_exact_mut(2 * half).enumerate() {
        let (lows, highs) = chunk.split_at_mut(half);
        let first = c * 2 * half;
        for (i, (lo, hi)) in lows.iter_mut().zip(highs.iter_mut()).enumerate() {
            let (a, b) = (*lo, *hi);
            let low = first + i;
            let ctx = PairContext {
                dimension: k,
                dimensions: n,
                low,
            };
            let new_low = rule.split(ctx, a, b);
            debug_assert!(new_low <= a + b);
            if let Some(transfer) = Transfer::of_pair(low, low | half, a, new_low) {
                transfers.push(transfer);
            }
            *lo = new_low;
            *hi = a + b - new_low;
        }
    }
}

/// Totals of an in-place balance: what a plan's metrics would say, without the transfers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ExchangeSummary {
    /// Units sent over links, summed over all phases (task-hops), exact (a unit can hop once
    /// per phase, so the sum can pass `u64::MAX`).
    pub task_hops: u128,
    /// Number of pair exchanges that moved at least one unit (task messages).
    pub task_messages: u64,
    /// For each dimension, the most units sent over one link in that phase (`Tmax_k`).
    pub tmax: Vec<u64>,
}

impl ExchangeSummary {
    /// `Σ_k Tmax_k` (Rim, Jang & Kim 2003, §5.2).
    pub fn sum_tmax(&self) -> u128 {
        self.tmax.iter().map(|&t| u128::from(t)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::dimension_exchange::{Dem, DemFixed, DemImproved, Oem};

    fn lcg(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 40) % 1000
            })
            .collect()
    }

    fn check_same<R: PairRule>(rule: &R, n: u32) {
        let loads = lcg(u64::from(n), 1 << n);
        let p = plan(rule, &loads).unwrap();
        let mut fast = loads.clone();
        let s = balance_in_place(rule, &mut fast).unwrap();
        assert_eq!(fast, p.final_loads, "n = {n}");
        assert_eq!(
            s.task_hops,
            p.transfers().map(|t| u128::from(t.units)).sum::<u128>()
        );
        assert_eq!(s.task_messages, p.transfers().count() as u64);
        for (k, phase) in p.phases.iter().enumerate() {
            let tmax = phase.transfers.iter().map(|t| t.units).max().unwrap_or(0);
            assert_eq!(s.tmax[k], tmax);
        }
    }

    #[test]
    fn blocked_kernel_equals_the_planner_across_the_block_boundary() {
        for n in [0, 1, 5, 6, 7, 13, 14, 15, 17] {
            check_same(&Dem, n);
            check_same(&Oem, n);
            check_same(&DemImproved, n);
            check_same(&DemFixed, n);
        }
        let caps = crate::model::Capacities::new(
            (0..1usize << 15).map(|i| 1.0 + (i % 3) as f64).collect(),
        )
        .unwrap();
        check_same(&crate::rules::dimension_exchange::DemHetero::new(&caps), 15);
    }
}
