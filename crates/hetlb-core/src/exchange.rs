//! Engines that apply a [`PairRule`] to a whole hypercube.
//!
//! * [`plan`] records every transfer of every phase: the input of the metrics, the
//!   transmission schedules and the runtime.
//! * [`balance_in_place`] computes only the final loads and a few totals, cache-blocked, for
//!   sizes where a full plan would not fit in memory (2^24 nodes make 200 million transfers)
//!   and for the Monte-Carlo and exhaustive experiments.
//!
//! Both give identical final loads; a test checks it.

use crate::model::{ModelError, total_load};
use crate::plan::{LoadInfo, Phase, Plan, Transfer};
use crate::rules::dimension_exchange::{PairContext, PairRule};
use crate::topology::Hypercube;
use crate::units::Units;
use std::ops::Range;

/// Balances `loads` (one per node of a hypercube) with `rule` over all dimensions `0..n` and
/// records the plan.
///
/// Load information: in each phase both nodes of every pair send their load to the other, one
/// message of one word each (`nN` messages in all, as Chau & Fu count, 000_… §3).
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
    let n = cube.dimensions();
    dims.map(|k| {
        // At most one transfer per pair; reserving them all avoids regrowing huge vectors.
        let mut transfers = Vec::with_capacity(cube.nodes() / 2);
        for low in cube.pairs(k) {
            let high = low | (1usize << k);
            let ctx = PairContext {
                dimension: k,
                dimensions: n,
                low,
            };
            let (a, b) = (loads[low], loads[high]);
            let new_low = rule.split(ctx, a, b);
            debug_assert!(new_low <= a + b);
            if new_low > a {
                transfers.push(Transfer {
                    from: high,
                    to: low,
                    units: new_low - a,
                });
            } else if new_low < a {
                transfers.push(Transfer {
                    from: low,
                    to: high,
                    units: a - new_low,
                });
            }
            loads[low] = new_low;
            loads[high] = a + b - new_low;
        }
        transfers.shrink_to_fit();
        Phase {
            dimension: Some(k),
            transfers,
        }
    })
    .collect()
}

/// Totals of an in-place balance: what a plan's metrics would say, without the transfers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExchangeSummary {
    /// Units sent over links, summed over all phases (task-hops), saturating at `u64::MAX`.
    pub task_hops: u64,
    /// Number of pair exchanges that moved at least one unit (task messages).
    pub task_messages: u64,
    /// For each dimension, the most units sent over one link in that phase (`Tmax_k`).
    pub tmax: Vec<u64>,
}

impl ExchangeSummary {
    /// `Σ_k Tmax_k` (Rim et al., 004_… §5.2).
    pub fn sum_tmax(&self) -> u64 {
        self.tmax.iter().fold(0u64, |a, &b| a.saturating_add(b))
    }
}

/// Dimensions handled inside one contiguous block: 2^13 `u64` loads are 64 KiB.
const BLOCK_DIMS: u32 = 13;
/// Columns gathered per tile for the high dimensions: two 64-byte cache lines of `u64`.
const TILE_COLUMNS: usize = 16;

/// Balances `loads` in place with `rule` over all dimensions and returns the totals.
///
/// The result is exactly that of [`plan`]. The first 13 dimensions are applied block by
/// block, each block of 2^13 loads staying in cache, because a subcube's first phases depend
/// only on its own loads; the remaining dimensions are applied to tiles of sixteen columns
/// gathered into a contiguous buffer. The vector is thus read and written about twice
/// instead of `n` times.
///
/// # Errors
/// [`ModelError`] when the length is not a power of two.
///
/// # Complexity
/// `O(N log N)` operations, `O(N)` memory traffic for `N ≤ 2^26`.
///
/// # Example
/// ```
/// use hetlb_core::exchange::balance_in_place;
/// use hetlb_core::rules::dimension_exchange::Dem;
/// let mut loads = vec![7u64, 0, 14, 0];
/// let summary = balance_in_place(&Dem, &mut loads).unwrap();
/// assert_eq!(loads.iter().sum::<u64>(), 21);
/// assert_eq!(summary.tmax.len(), 2);
/// ```
pub fn balance_in_place<R: PairRule, T: Units>(
    rule: &R,
    loads: &mut [T],
) -> Result<ExchangeSummary, ModelError> {
    let n = Hypercube::for_nodes(loads.len())?.dimensions();
    let mut stats = Stats::new(n);
    let block_dims = n.min(BLOCK_DIMS);
    for (b, block) in loads.chunks_exact_mut(1 << block_dims).enumerate() {
        let base = b << block_dims;
        for k in 0..block_dims {
            exchange_contiguous(rule, block, base, k, n, &mut stats);
        }
    }
    if n > block_dims {
        exchange_high_dimensions(rule, loads, block_dims, n, &mut stats);
    }
    Ok(stats.finish())
}

/// Applies `rule` for the dimensions `dims`, in order, inside one aligned block of a larger
/// cube: `block` holds the loads of nodes `base..base + block.len()`, and every dimension in
/// `dims` must be below `log2(block.len())`, so that all pairs stay inside the block. `n` is
/// the dimension of the whole cube, which rules such as the improved DEM need.
///
/// This is what makes exhaustive enumerations fast: a subcube's first phases depend only on
/// its own loads, so they can be computed once per distinct subcube.
///
/// # Panics
/// If `block.len()` is not a power of two, `base` is not a multiple of it, or a dimension is
/// out of range.
///
/// # Example
/// ```
/// use hetlb_core::exchange::balance_block;
/// use hetlb_core::rules::dimension_exchange::Oem;
/// let mut upper_half = [4u8, 7, 0, 9];
/// balance_block(&Oem, &mut upper_half, 4, 0..2, 3);
/// assert_eq!(upper_half.iter().map(|&x| u32::from(x)).sum::<u32>(), 20);
/// ```
pub fn balance_block<R: PairRule, T: Units>(
    rule: &R,
    block: &mut [T],
    base: usize,
    dims: Range<u32>,
    n: u32,
) {
    assert!(block.len().is_power_of_two() && base % block.len() == 0);
    assert!(dims.end <= block.len().trailing_zeros() && dims.end <= n);
    let mut stats = Stats::new(n);
    for k in dims {
        exchange_contiguous(rule, block, base, k, n, &mut stats);
    }
}

struct Stats {
    hops: u64,
    messages: u64,
    tmax: Vec<u64>,
}

impl Stats {
    fn new(n: u32) -> Self {
        Self {
            hops: 0,
            messages: 0,
            tmax: vec![0; n as usize],
        }
    }

    fn finish(self) -> ExchangeSummary {
        ExchangeSummary {
            task_hops: self.hops,
            task_messages: self.messages,
            tmax: self.tmax,
        }
    }
}

/// Four independent accumulators per statistic, so the compiler can keep the lanes apart.
#[derive(Default)]
struct Lanes {
    hops: [u64; 4],
    messages: [u64; 4],
    tmax: [u64; 4],
}

impl Lanes {
    #[inline(always)]
    fn record(&mut self, lane: usize, moved: u64) {
        self.hops[lane] += moved;
        self.messages[lane] += u64::from(moved != 0);
        self.tmax[lane] = self.tmax[lane].max(moved);
    }

    fn fold_into(self, stats: &mut Stats, k: u32) {
        // One phase moves at most the total, which fits; across phases the sum saturates.
        stats.hops = stats.hops.saturating_add(self.hops.iter().sum::<u64>());
        stats.messages += self.messages.iter().sum::<u64>();
        let tmax = self.tmax.iter().copied().max().unwrap_or(0);
        stats.tmax[k as usize] = stats.tmax[k as usize].max(tmax);
    }
}

/// One pair exchange; returns the units moved.
#[inline(always)]
fn exchange_pair<R: PairRule, T: Units>(rule: &R, ctx: PairContext, lo: &mut T, hi: &mut T) -> u64 {
    let (a, b) = (*lo, *hi);
    let na = rule.split(ctx, a, b);
    *lo = na;
    *hi = a + b - na;
    na.to_u64().abs_diff(a.to_u64())
}

/// Dimension `k` between two runs of lanes: `lo[i]` is node `base + i` and `hi[i]` its
/// dimension-`k` partner.
#[inline(always)]
fn exchange_lanes<R: PairRule, T: Units>(
    rule: &R,
    lo: &mut [T],
    hi: &mut [T],
    base: usize,
    k: u32,
    n: u32,
    acc: &mut Lanes,
) {
    let ctx = |i: usize| PairContext {
        dimension: k,
        dimensions: n,
        low: base + i,
    };
    let done = lo.len() / 4 * 4;
    let mut lo4 = lo.chunks_exact_mut(4);
    let mut hi4 = hi.chunks_exact_mut(4);
    for (q, (l, h)) in (&mut lo4).zip(&mut hi4).enumerate() {
        for lane in 0..4 {
            let moved = exchange_pair(rule, ctx(4 * q + lane), &mut l[lane], &mut h[lane]);
            acc.record(lane, moved);
        }
    }
    for (i, (l, h)) in lo4
        .into_remainder()
        .iter_mut()
        .zip(hi4.into_remainder().iter_mut())
        .enumerate()
    {
        let moved = exchange_pair(rule, ctx(done + i), l, h);
        acc.record(i, moved);
    }
}

/// Dimension `k` applied inside a contiguous slice whose first element is node `base`.
fn exchange_contiguous<R: PairRule, T: Units>(
    rule: &R,
    slice: &mut [T],
    base: usize,
    k: u32,
    n: u32,
    stats: &mut Stats,
) {
    let half = 1usize << k;
    let mut acc = Lanes::default();
    if half < 4 {
        // Pairs of the lowest dimensions are interleaved: walk them one by one.
        for (c, chunk) in slice.chunks_exact_mut(2 * half).enumerate() {
            let (lo, hi) = chunk.split_at_mut(half);
            for (i, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
                let ctx = PairContext {
                    dimension: k,
                    dimensions: n,
                    low: base + c * 2 * half + i,
                };
                let moved = exchange_pair(rule, ctx, l, h);
                acc.record(c & 3, moved);
            }
        }
    } else {
        for (c, chunk) in slice.chunks_exact_mut(2 * half).enumerate() {
            let (lo, hi) = chunk.split_at_mut(half);
            exchange_lanes(rule, lo, hi, base + c * 2 * half, k, n, &mut acc);
        }
    }
    acc.fold_into(stats, k);
}

/// Dimensions `low_dims..n`, applied to gathered tiles of [`TILE_COLUMNS`] columns.
fn exchange_high_dimensions<R: PairRule, T: Units>(
    rule: &R,
    loads: &mut [T],
    low_dims: u32,
    n: u32,
    stats: &mut Stats,
) {
    let columns = 1usize << low_dims;
    let rows = loads.len() >> low_dims;
    let width = TILE_COLUMNS.min(columns);
    let mut tile = vec![T::ZERO; rows * width];
    for col0 in (0..columns).step_by(width) {
        for r in 0..rows {
            let start = (r << low_dims) + col0;
            tile[r * width..(r + 1) * width].copy_from_slice(&loads[start..start + width]);
        }
        for j in 0..(n - low_dims) {
            let k = low_dims + j;
            let half_rows = 1usize << j;
            let mut acc = Lanes::default();
            for (c, chunk) in tile.chunks_exact_mut(2 * half_rows * width).enumerate() {
                let (lo, hi) = chunk.split_at_mut(half_rows * width);
                for (r, (l, h)) in lo
                    .chunks_exact_mut(width)
                    .zip(hi.chunks_exact_mut(width))
                    .enumerate()
                {
                    let row = c * 2 * half_rows + r;
                    exchange_lanes(rule, l, h, (row << low_dims) + col0, k, n, &mut acc);
                }
            }
            acc.fold_into(stats, k);
        }
        for r in 0..rows {
            let start = (r << low_dims) + col0;
            loads[start..start + width].copy_from_slice(&tile[r * width..(r + 1) * width]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::dimension_exchange::{Dem, DemImproved, Oem};

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
        assert_eq!(s.task_hops, p.transfers().map(|t| t.units).sum::<u64>());
        assert_eq!(s.task_messages, p.transfers().count() as u64);
        for (k, phase) in p.phases.iter().enumerate() {
            let tmax = phase.transfers.iter().map(|t| t.units).max().unwrap_or(0);
            assert_eq!(s.tmax[k], tmax);
        }
    }

    #[test]
    fn blocked_kernel_equals_the_planner_across_the_block_boundary() {
        for n in [0, 1, 5, 13, 14, 16] {
            check_same(&Dem, n);
            check_same(&Oem, n);
            check_same(&DemImproved, n);
        }
    }
}
