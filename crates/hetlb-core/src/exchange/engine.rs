//! The in-place engine's layout: cache-sized blocks for the low dimensions, column groups for
//! the high ones, both spread over rayon's threads.
//!
//! A cube of `2^n` loads is seen as `2^(n−b)` rows of `2^b` columns (`b = min(n, 14)`).
//! Dimensions `0..b` pair entries inside one row, so each row (a *block*) is balanced on its
//! own; dimensions `b..n` pair whole rows, so each column is balanced on its own. Blocks are
//! independent, and so are columns: the first pass hands blocks to threads, the second hands
//! them groups of columns (one `&mut` segment per row). Every pair is decided exactly as the
//! scalar rule would, and the totals are sums and maxima of integers, so the result does not
//! depend on the number of threads or on how the work was split.

use super::ExchangeSummary;
use crate::units::Units;
use rayon::prelude::*;

/// Dimensions balanced inside one block: 2^14 loads (64 KiB as `u32`).
pub(super) const BLOCK_DIMS: u32 = 14;
/// Below 2^16 loads the work stays on the calling thread.
const PARALLEL_MIN_DIMS: u32 = 16;

/// Totals of one dimension.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct DimStats {
    /// Units moved (the dimension's task-hops).
    pub hops: u64,
    /// Pairs that moved at least one unit.
    pub messages: u64,
    /// The most units moved by one pair.
    pub tmax: u64,
}

impl DimStats {
    fn merge(&mut self, other: DimStats) {
        self.hops += other.hops;
        self.messages += other.messages;
        self.tmax = self.tmax.max(other.tmax);
    }
}

/// Totals per dimension, and the largest load seen before balancing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stats {
    pub dims: Vec<DimStats>,
    pub max_load: u64,
}

impl Stats {
    pub fn new(n: u32) -> Self {
        Self {
            dims: vec![DimStats::default(); n as usize],
            max_load: 0,
        }
    }

    fn merge(mut self, other: Stats) -> Stats {
        for (a, b) in self.dims.iter_mut().zip(other.dims) {
            a.merge(b);
        }
        self.max_load = self.max_load.max(other.max_load);
        self
    }

    pub fn add(&mut self, k: u32, s: DimStats) {
        self.dims[k as usize].merge(s);
    }

    pub fn finish(self) -> ExchangeSummary {
        ExchangeSummary {
            // One phase moves at most the total, which fits a u64; across phases, 128 bits.
            task_hops: self.dims.iter().map(|d| u128::from(d.hops)).sum(),
            task_messages: self.dims.iter().map(|d| d.messages).sum(),
            tmax: self.dims.iter().map(|d| d.tmax).collect(),
        }
    }
}

/// How one kind of kernel balances a block and a group of columns.
pub(super) trait Kernel<T>: Sync {
    /// Dimensions `0..log2(block.len())` of the block holding nodes `base..base + block.len()`,
    /// in an `n`-cube; records the block's largest load before balancing in `stats`.
    fn block(&self, block: &mut [T], base: usize, n: u32, stats: &mut Stats);

    /// Dimensions `low..n` of the columns `col0..col0 + width` (row `r` holds nodes
    /// `(r << low) + col0 ..`), given the largest load of the cube before balancing.
    fn columns(
        &self,
        rows: &mut [&mut [T]],
        col0: usize,
        low: u32,
        n: u32,
        max_load: u64,
        stats: &mut Stats,
    );
}

/// Balances all `n` dimensions of `loads` (`2^n` entries) with `kernel`.
pub(super) fn run<T: Units, K: Kernel<T>>(kernel: &K, loads: &mut [T], n: u32) -> Stats {
    let b = n.min(BLOCK_DIMS);
    let block_len = 1usize << b;
    let parallel = n >= PARALLEL_MIN_DIMS && rayon::current_num_threads() > 1;
    let mut stats = if parallel {
        loads
            .par_chunks_exact_mut(block_len)
            .enumerate()
            .fold(
                || Stats::new(n),
                |mut s, (i, block)| {
                    kernel.block(block, i << b, n, &mut s);
                    s
                },
            )
            .reduce(|| Stats::new(n), Stats::merge)
    } else {
        let mut s = Stats::new(n);
        for (i, block) in loads.chunks_exact_mut(block_len).enumerate() {
            kernel.block(block, i << b, n, &mut s);
        }
        s
    };
    if n > b {
        let rows = loads.len() >> b;
        let groups = if parallel {
            (8 * rayon::current_num_threads())
                .next_power_of_two()
                .min(block_len / 64)
        } else {
            1
        };
        let width = block_len / groups;
        let mut segments: Vec<Vec<&mut [T]>> =
            (0..groups).map(|_| Vec::with_capacity(rows)).collect();
        for row in loads.chunks_exact_mut(block_len) {
            for (group, segment) in segments.iter_mut().zip(row.chunks_exact_mut(width)) {
                group.push(segment);
            }
        }
        let max_load = stats.max_load;
        let high = if parallel {
            segments
                .into_par_iter()
                .enumerate()
                .fold(
                    || Stats::new(n),
                    |mut s, (g, mut group)| {
                        kernel.columns(&mut group, g * width, b, n, max_load, &mut s);
                        s
                    },
                )
                .reduce(|| Stats::new(n), Stats::merge)
        } else {
            let mut s = Stats::new(n);
            for (g, mut group) in segments.into_iter().enumerate() {
                kernel.columns(&mut group, g * width, b, n, max_load, &mut s);
            }
            s
        };
        stats = stats.merge(high);
    }
    stats
}
