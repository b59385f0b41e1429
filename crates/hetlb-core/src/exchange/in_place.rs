//! [`balance_in_place`]: the final loads and totals of a dimension-exchange balance, without
//! recording transfers.

use super::ExchangeSummary;
use super::engine::{self, Kernel, Stats};
use super::lanes;
use super::scalar::{ScalarKernel, exchange_contiguous};
use crate::model::ModelError;
use crate::rules::dimension_exchange::{OddUnit, PairRule};
use crate::topology::Hypercube;
use crate::units::Units;
use std::ops::Range;

/// The lowest dimensions of a block, applied on the block transposed so that their pairs are
/// long contiguous runs rather than neighbours a few entries apart.
const TRANSPOSED_DIMS: u32 = 4;
/// Columns per tile in the high dimensions: one row of a tile is 64 lanes.
const TILE_WIDTH: usize = 64;
/// Smaller cubes run the scalar kernel.
const LANE_MIN_DIMS: u32 = TRANSPOSED_DIMS + 2;

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
    let halving = (0..n).all(|k| {
        rule.odd_unit(k, n, false).is_some() && rule.odd_unit(k, n, true).is_some()
    });
    let stats = if halving && n >= LANE_MIN_DIMS {
        engine::run(&LaneKernel { rule }, loads, n)
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
    assert!(block.len().is_power_of_two() && base % block.len() == 0);
    assert!(dims.end <= block.len().trailing_zeros() && dims.end <= n);
    for k in dims {
        exchange_contiguous(rule, block, base, k, n);
    }
}

/// The vector kernel for halving rules.
struct LaneKernel<'a, R> {
    rule: &'a R,
}

impl<R: PairRule> LaneKernel<'_, R> {
    /// Who keeps the odd unit in dimension `k`, by the pair's bit `k + 1`.
    fn odd_units(&self, k: u32, n: u32) -> [OddUnit; 2] {
        let pick = |bit| {
            self.rule
                .odd_unit(k, n, bit)
                .expect("checked to be a halving rule")
        };
        [pick(false), pick(true)]
    }

    /// [`Kernel::block`] computed in lanes of `C`.
    fn block_in<T: Units, C: Units>(
        &self,
        block: &mut [T],
        base: usize,
        n: u32,
        stats: &mut Stats,
        narrow: impl Fn(T) -> C,
        widen: impl Fn(C) -> T,
    ) {
        let len = block.len();
        let low = TRANSPOSED_DIMS;
        let width = 1usize << low;
        let rows = len >> low;
        let half_rows = rows / 2;
        // Transposed, with even rows before odd ones: entry `(row r, column c)` of the block
        // sits at `c·rows + position(r)`, so that dimension `low − 1`, whose odd unit may
        // depend on bit `low` (the row's parity), has runs of uniform parity.
        let row_at = |q: usize| {
            if q < half_rows {
                2 * q
            } else {
                2 * (q - half_rows) + 1
            }
        };
        let position = |r: usize| (r & 1) * half_rows + (r >> 1);
        let mut transposed: Vec<C> = (0..len)
            .map(|j| narrow(block[row_at(j % rows) * width + j / rows]))
            .collect();
        for k in 0..low {
            let units = self.odd_units(k, n);
            let half = rows << k;
            let s = if k + 1 < low {
                // chunk c covers columns c·2^(k+1).., whose bit k + 1 is c's lowest bit
                lanes::halve_chunks(&mut transposed, half, half, |c, _| units[c & 1])
            } else {
                // runs alternate even and odd rows
                lanes::halve_chunks(&mut transposed, half, half_rows, |_, r| units[r & 1])
            };
            stats.add(k, s);
        }
        let mut natural: Vec<C> = (0..len)
            .map(|i| transposed[(i & (width - 1)) * rows + position(i >> low)])
            .collect();
        drop(transposed);
        for k in low..len.trailing_zeros() {
            let units = self.odd_units(k, n);
            let half = 1usize << k;
            let first = base >> (k + 1);
            let s = lanes::halve_chunks(&mut natural, half, half, |c, _| {
                units[(first + c) & 1]
            });
            stats.add(k, s);
        }
        for (x, &y) in block.iter_mut().zip(&natural) {
            *x = widen(y);
        }
    }

    /// [`Kernel::columns`] computed in lanes of `C`.
    #[allow(clippy::too_many_arguments)]
    fn columns_in<T: Units, C: Units>(
        &self,
        rows: &mut [&mut [T]],
        low: u32,
        n: u32,
        stats: &mut Stats,
        narrow: impl Fn(T) -> C,
        widen: impl Fn(C) -> T,
    ) {
        let width = rows[0].len();
        let tw = TILE_WIDTH.min(width);
        let mut tile: Vec<C> = Vec::with_capacity(rows.len() * tw);
        for t in (0..width).step_by(tw) {
            tile.clear();
            for row in rows.iter() {
                tile.extend(row[t..t + tw].iter().map(|&x| narrow(x)));
            }
            for j in 0..(n - low) {
                let k = low + j;
                let units = self.odd_units(k, n);
                let half = tw << j;
                // chunk c starts at row c·2^(j+1), whose bit j + 1 (the node's bit k + 1) is
                // c's lowest bit
                let s = lanes::halve_chunks(&mut tile, half, half, |c, _| units[c & 1]);
                stats.add(k, s);
            }
            for (src, row) in tile.chunks_exact(tw).zip(rows.iter_mut()) {
                for (x, &y) in row[t..t + tw].iter_mut().zip(src) {
                    *x = widen(y);
                }
            }
        }
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

impl<R: PairRule, T: Units> Kernel<T> for LaneKernel<'_, R> {
    fn block(&self, block: &mut [T], base: usize, n: u32, stats: &mut Stats) {
        let max = block.iter().copied().max().unwrap_or(T::ZERO).to_u64();
        stats.max_load = stats.max_load.max(max);
        if narrows::<T>(max) {
            self.block_in(block, base, n, stats, T::to_narrow, T::from_narrow);
        } else {
            self.block_in(block, base, n, stats, |x: T| x, |x: T| x);
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
        if narrows::<T>(max_load) {
            self.columns_in(rows, low, n, stats, T::to_narrow, T::from_narrow);
        } else {
            self.columns_in(rows, low, n, stats, |x: T| x, |x: T| x);
        }
    }
}
