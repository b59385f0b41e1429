//! The kernel for any [`PairRule`]: one call of [`PairRule::split`] per pair, with the pair's
//! full address. Rules that are not halving rules (`dem-hetero`, which needs each node's
//! capacity) and cubes too small for the vector kernel run here.

use super::engine::{DimStats, Kernel, Stats};
use crate::rules::dimension_exchange::{PairContext, PairRule};
use crate::units::Units;

/// Columns gathered per tile for the high dimensions: two 64-byte cache lines of `u64`.
const TILE_COLUMNS: usize = 16;

pub(super) struct ScalarKernel<'a, R> {
    pub rule: &'a R,
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

#[inline(always)]
fn record(s: &mut DimStats, moved: u64) {
    s.hops += moved;
    s.messages += u64::from(moved != 0);
    s.tmax = s.tmax.max(moved);
}

/// Dimension `k` between two runs: `lo[i]` is node `base + i` and `hi[i]` its partner.
fn exchange_run<R: PairRule, T: Units>(
    rule: &R,
    lo: &mut [T],
    hi: &mut [T],
    base: usize,
    k: u32,
    n: u32,
    s: &mut DimStats,
) {
    for (i, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let ctx = PairContext {
            dimension: k,
            dimensions: n,
            low: base + i,
        };
        record(s, exchange_pair(rule, ctx, l, h));
    }
}

/// Dimension `k` applied inside a contiguous slice whose first element is node `base`.
fn exchange_contiguous<R: PairRule, T: Units>(
    rule: &R,
    slice: &mut [T],
    base: usize,
    k: u32,
    n: u32,
) -> DimStats {
    let half = 1usize << k;
    let mut s = DimStats::default();
    for (c, chunk) in slice.chunks_exact_mut(2 * half).enumerate() {
        let (lo, hi) = chunk.split_at_mut(half);
        exchange_run(rule, lo, hi, base + c * 2 * half, k, n, &mut s);
    }
    s
}

/// Dimension `k` inside a contiguous slice whose first element is node `base`, without
/// totals: what the exhaustive enumerations run on their `u8` blocks.
pub(super) fn exchange_contiguous_loads_only<R: PairRule, T: Units>(
    rule: &R,
    slice: &mut [T],
    base: usize,
    k: u32,
    n: u32,
) {
    let half = 1usize << k;
    for (c, chunk) in slice.chunks_exact_mut(2 * half).enumerate() {
        let (lo, hi) = chunk.split_at_mut(half);
        let first = base + c * 2 * half;
        for (i, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
            let ctx = PairContext {
                dimension: k,
                dimensions: n,
                low: first + i,
            };
            let (a, b) = (*l, *h);
            let na = rule.split(ctx, a, b);
            *l = na;
            *h = a + b - na;
        }
    }
}

impl<R: PairRule, T: Units> Kernel<T> for ScalarKernel<'_, R> {
    fn block(&self, block: &mut [T], base: usize, n: u32, stats: &mut Stats) {
        let max = block.iter().copied().max().unwrap_or(T::ZERO).to_u64();
        stats.max_load = stats.max_load.max(max);
        for k in 0..block.len().trailing_zeros() {
            let s = exchange_contiguous(self.rule, block, base, k, n);
            stats.add(k, s);
        }
    }

    fn columns(
        &self,
        rows: &mut [&mut [T]],
        col0: usize,
        low: u32,
        n: u32,
        _max_load: u64,
        stats: &mut Stats,
    ) {
        let width = rows[0].len();
        let tw = TILE_COLUMNS.min(width);
        let mut tile = vec![T::ZERO; rows.len() * tw];
        for t in (0..width).step_by(tw) {
            for (dst, row) in tile.chunks_exact_mut(tw).zip(rows.iter()) {
                dst.copy_from_slice(&row[t..t + tw]);
            }
            for j in 0..(n - low) {
                let k = low + j;
                let half_rows = 1usize << j;
                let mut s = DimStats::default();
                for (c, chunk) in tile.chunks_exact_mut(2 * half_rows * tw).enumerate() {
                    let (lo, hi) = chunk.split_at_mut(half_rows * tw);
                    for (r, (l, h)) in lo
                        .chunks_exact_mut(tw)
                        .zip(hi.chunks_exact_mut(tw))
                        .enumerate()
                    {
                        let row = c * 2 * half_rows + r;
                        exchange_run(self.rule, l, h, (row << low) + col0 + t, k, n, &mut s);
                    }
                }
                stats.add(k, s);
            }
            for (src, row) in tile.chunks_exact(tw).zip(rows.iter_mut()) {
                row[t..t + tw].copy_from_slice(src);
            }
        }
    }
}
