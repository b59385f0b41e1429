//! [`balance_in_place`]: the final loads and totals of a dimension-exchange balance, without
//! recording transfers.

use super::ExchangeSummary;
use super::engine::{self, Kernel, Stats};
use super::lanes;
use super::scalar::{ScalarKernel, exchange_contiguous_loads_only};
use crate::model::ModelError;
use crate::rules::dimension_exchange::{OddUnit, PairRule};
use crate::topology::Hypercube;
use crate::units::Units;
use std::ops::Range;

/// Bytes of one tile of the high dimensions (a quarter of a typical L2 cache).
const TILE_BYTES: usize = 512 << 10;
/// Smaller cubes run the scalar kernel.
const LANE_MIN_DIMS: u32 = lanes::TRANSPOSED_DIMS + 2;

/// Balances `loads` in place with `rule` over all dimensions and returns the totals.
///
/// The result is exactly that of [`super::plan`] (final loads, task-hops, task messages and
/// `Tmax` per phase), whatever the number of threads. How it gets there:
///
/// * **Blocks and columns.** The first 14 dimensions are applied block by block (2^14 loads
///   stay in cache), the others to groups of columns gathered into tiles, so the vector is
///   read and written twice instead of `n` times. Blocks, then column groups, are spread
///   over rayon's threads from 2^16 loads on.
/// * **Vector lanes.** For the halving rules (`dem`, `dem-fixed`, `dem-improved`, `oem`: see
///   [`PairRule::odd_unit`]) every run of pairs is decided by branch-free code that the
///   compiler vectorises, compiled for AVX-512, AVX2 and SSE4.2 and chosen when first run
///   ([`simd_target`] tells which). The lowest 4 dimensions, whose partners are 1 to 8
///   entries apart, are applied on the block transposed.
/// * **Narrower lanes.** A halving rule never raises the largest load, so every pair's sum
///   stays within twice the largest initial load; when that fits the next narrower type
///   ([`Units::Narrow`], e.g. `u32` for `u64` loads) the lanes are computed in it, twice as
///   many per instruction.
///
/// Other rules (`dem-hetero`) and cubes below 2^6 nodes call [`PairRule::split`] pair by
/// pair, with the same blocking and threads.
///
/// The pairs' sums must fit in `T` (true when the total does).
///
/// # Errors
/// [`ModelError`] when the length is not a power of two.
///
/// # Complexity
/// `O(N log N)` operations in vectors of up to 16 lanes, spread over the threads; `O(N)`
/// memory traffic for `N ≤ 2^28`; `O(N)` extra memory for the tiles' row pointers.
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
    let halving =
        (0..n).all(|k| rule.odd_unit(k, n, false).is_some() && rule.odd_unit(k, n, true).is_some());
    let stats = if halving && n >= LANE_MIN_DIMS {
        engine::run(&LaneKernel::of(rule, n), loads, n)
    } else {
        engine::run(&ScalarKernel { rule }, loads, n)
    };
    Ok(stats.finish())
}

/// The instruction set the vector kernel of [`balance_in_place`] uses on this processor:
/// `avx512`, `avx2`, `sse4.2` or `baseline`.
///
/// # Example
/// ```
/// let target = hetlb_core::exchange::simd_target();
/// assert!(["avx512", "avx2", "sse4.2", "baseline"].contains(&target));
/// ```
pub fn simd_target() -> &'static str {
    lanes::selected_target()
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
    assert!(block.len().is_power_of_two() && base.is_multiple_of(block.len()));
    assert!(dims.end <= block.len().trailing_zeros() && dims.end <= n);
    for k in dims {
        exchange_contiguous_loads_only(rule, block, base, k, n);
    }
}

/// The vector kernel for halving rules: who keeps the odd unit in each dimension of an
/// `n`-cube, by the pair's bit `k + 1`. It holds the rule's decisions, not the rule, so that
/// its passes are compiled once per load type whatever the rule.
struct LaneKernel {
    units: Vec<[OddUnit; 2]>,
}

impl LaneKernel {
    /// The odd units of the halving `rule` in every dimension of an `n`-cube.
    fn of<R: PairRule>(rule: &R, n: u32) -> Self {
        let units = (0..n)
            .map(|k| {
                let pick = |bit| {
                    rule.odd_unit(k, n, bit)
                        .expect("checked to be a halving rule")
                };
                [pick(false), pick(true)]
            })
            .collect();
        Self { units }
    }

    /// The odd units of dimensions `dims`.
    fn odd_units(&self, dims: Range<u32>) -> &[[OddUnit; 2]] {
        &self.units[dims.start as usize..dims.end as usize]
    }
}

/// True when every pair's sum stays below `T::Narrow`'s limit for a largest load of `max`,
/// and the narrower type really is narrower.
fn narrows<T: Units>(max: u64) -> bool {
    std::mem::size_of::<T::Narrow>() < std::mem::size_of::<T>()
        && max
            .checked_mul(2)
            .is_some_and(|s| s <= <T::Narrow as Units>::MAX.to_u64())
}

impl<T: Units> Kernel<T> for LaneKernel {
    fn block(&self, block: &mut [T], base: usize, _n: u32, stats: &mut Stats) {
        let max = lanes::max_load(block);
        stats.max_load = stats.max_load.max(max);
        let units = self.odd_units(0..block.len().trailing_zeros());
        if narrows::<T>(max) {
            lanes::block_pass(block, base, units, stats, T::to_narrow, T::from_narrow);
        } else {
            lanes::block_pass(block, base, units, stats, |x: T| x, |x: T| x);
        }
    }

    fn columns(
        &self,
        rows: &mut [&mut [T]],
        _col0: usize,
        low: u32,
        n: u32,
        max_load: u64,
        stats: &mut Stats,
    ) {
        let units = self.odd_units(low..n);
        if narrows::<T>(max_load) {
            let tw = TILE_BYTES / std::mem::size_of::<T::Narrow>() / rows.len();
            lanes::tile_pass(rows, low, tw, units, stats, T::to_narrow, T::from_narrow);
        } else {
            let tw = TILE_BYTES / std::mem::size_of::<T>() / rows.len();
            lanes::tile_pass(rows, low, tw, units, stats, |x: T| x, |x: T| x);
        }
    }
}
