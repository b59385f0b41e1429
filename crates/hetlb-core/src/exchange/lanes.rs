//! Blocks and tiles of pair exchanges under a halving rule, in vector instructions chosen at
//! run time.
//!
//! A *run* is two equally long slices `lo` and `hi` whose `i`-th entries form a pair, with the
//! same [`OddUnit`] for every pair. The loop body is branch-free (adds, shifts, compares and
//! selects), so the compiler vectorises it. The crate's `multiversioned!` macro compiles the
//! block and tile passes — gathers, transposes, runs and write-backs together — for AVX-512,
//! AVX2 and SSE4.2 as well as the baseline, and picks the best one the processor has on the
//! first call (one atomic load per call after that). The default build thus stays baseline x86-64.

use super::engine::{DimStats, Stats};
use crate::rules::dimension_exchange::OddUnit;
use crate::units::Units;

pub(super) const HEAVIER: u8 = 0;
pub(super) const LOW: u8 = 1;
pub(super) const HIGH: u8 = 2;
pub(super) const ODD_SHARE: u8 = 3;

/// The lowest dimensions of a block, applied on the block transposed so that their pairs are
/// long contiguous runs rather than neighbours a few entries apart.
pub(super) const TRANSPOSED_DIMS: u32 = 4;
const WIDTH: usize = 1 << TRANSPOSED_DIMS;
/// Entries between two lines of the transposed block, so that its lines start in different
/// cache sets.
const LINE_PADDING: usize = 16;

/// Totals of one dimension so far.
struct Acc<C> {
    hops: u64,
    messages: u64,
    tmax: C,
}

impl<C: Units> Acc<C> {
    #[inline(always)]
    fn new() -> Self {
        Self {
            hops: 0,
            messages: 0,
            tmax: C::ZERO,
        }
    }

    #[inline(always)]
    fn finish(&self) -> DimStats {
        DimStats {
            hops: self.hops,
            messages: self.messages,
            tmax: self.tmax.to_u64(),
        }
    }
}

/// Where a pair's odd unit goes, as flags, so that a pair is decided without a branch: the low
/// node keeps it when `low`, when `heavier` and it is the heavier (or as heavy), when
/// `odd_share` and `⌊s/2⌋` is even, so that its share with the unit is odd; otherwise (all
/// clear) the high node does. The one statement of the halving rules' decision: the vector runs
/// take it with constant flags ([`pair`]), the cells of [`super::cells`] with flags per pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Placement {
    low: bool,
    heavier: bool,
    odd_share: bool,
}

impl Placement {
    /// The flags of `odd`.
    pub(super) const fn of(odd: OddUnit) -> Self {
        Self {
            low: matches!(odd, OddUnit::Low),
            heavier: matches!(odd, OddUnit::Heavier),
            odd_share: matches!(odd, OddUnit::OddShare),
        }
    }

    /// The flags of the constant `ODD` ([`HEAVIER`], [`LOW`], [`HIGH`] or [`ODD_SHARE`]).
    const fn of_const<const ODD: u8>() -> Self {
        Self::of(match ODD {
            HEAVIER => OddUnit::Heavier,
            LOW => OddUnit::Low,
            HIGH => OddUnit::High,
            _ => OddUnit::OddShare,
        })
    }

    /// The low node's new load in the pair `(a, b)`: `⌊s/2⌋`, plus the odd unit when it keeps
    /// it (`s = a + b`).
    #[inline(always)]
    pub(super) fn new_low<C: Units>(self, a: C, b: C) -> C {
        let sum = a + b;
        let keeps = self.low
            | (self.heavier & (a >= b))
            | (self.odd_share & ((sum >> 1) & C::ONE == C::ZERO));
        (sum >> 1) + (sum & C::from_bool(keeps))
    }
}

/// One pair: the low node's new load, and the units moved.
#[inline(always)]
pub(super) fn pair<C: Units, const ODD: u8>(a: C, b: C) -> (C, C) {
    let new_low = const { Placement::of_const::<ODD>() }.new_low(a, b);
    let moved = new_low.max(a) - new_low.min(a);
    (new_low, moved)
}

/// One run with the odd unit placed by `ODD`.
///
/// The run's totals are kept in lanes of `C` itself, so that every operation of the loop has
/// the lanes' width and the compiler fills whole vectors: the units moved are summed as their
/// low and high halves (`C::BITS / 2` bits each), over sub-runs short enough that neither half's
/// sum nor the count of messages can overflow, and widened to `u64` once per sub-run. Lanes of
/// `u64` sum the units moved whole.
#[inline(always)]
fn run<C: Units, const ODD: u8>(lo: &mut [C], hi: &mut [C], acc: &mut Acc<C>) {
    let half_bits = C::BITS / 2;
    let low_mask = C::from_u64((1u64 << half_bits) - 1);
    // over at most 2^half_bits pairs, each half's sum and the count stay within C
    let sub_run = 1usize << half_bits.min(12);
    for (lo, hi) in lo.chunks_mut(sub_run).zip(hi.chunks_mut(sub_run)) {
        let (mut low_halves, mut high_halves) = (C::ZERO, C::ZERO);
        let (mut messages, mut tmax) = (C::ZERO, C::ZERO);
        for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
            let (a, b) = (*l, *h);
            let (new_low, moved) = pair::<C, ODD>(a, b);
            *l = new_low;
            *h = a + b - new_low;
            if C::BITS >= 64 {
                // the lanes are as wide as the total: summed whole (a phase moves at most the
                // total, which fits)
                low_halves = low_halves + moved;
            } else {
                low_halves = low_halves + (moved & low_mask);
                high_halves = high_halves + (moved >> half_bits);
            }
            messages = messages + C::from_bool(moved != C::ZERO);
            tmax = tmax.max(moved);
        }
        acc.hops += low_halves.to_u64() + (high_halves.to_u64() << half_bits);
        acc.messages += messages.to_u64();
        acc.tmax = acc.tmax.max(tmax);
    }
}

/// The run of `odd` over `lo` and `hi`.
#[inline(always)]
fn run_with<C: Units>(odd: OddUnit, lo: &mut [C], hi: &mut [C], acc: &mut Acc<C>) {
    match odd {
        OddUnit::Heavier => run::<C, HEAVIER>(lo, hi, acc),
        OddUnit::Low => run::<C, LOW>(lo, hi, acc),
        OddUnit::High => run::<C, HIGH>(lo, hi, acc),
        OddUnit::OddShare => run::<C, ODD_SHARE>(lo, hi, acc),
    }
}

/// Applies one dimension to `data`, seen as consecutive chunks of `2·half` entries whose first
/// half pairs with the second; chunk `c` places the odd unit as `odd_unit(c)` says.
#[inline(always)]
fn halve_chunks<C: Units>(
    data: &mut [C],
    half: usize,
    odd_unit: impl Fn(usize) -> OddUnit,
) -> DimStats {
    let mut acc = Acc::new();
    for (c, chunk) in data.chunks_exact_mut(2 * half).enumerate() {
        let (lo, hi) = chunk.split_at_mut(half);
        run_with(odd_unit(c), lo, hi, &mut acc);
    }
    acc.finish()
}

/// Applies one dimension to `lines` lines of `len` entries, line `l` starting at `l·stride`:
/// line `l` pairs with line `l ^ step` (`step` a power of two), and places the odd unit as
/// `odd_unit(l)` says for the lower one.
#[inline(always)]
fn halve_lines<C: Units>(
    data: &mut [C],
    stride: usize,
    len: usize,
    lines: usize,
    step: usize,
    odd_unit: impl Fn(usize) -> OddUnit,
) -> DimStats {
    let mut acc = Acc::new();
    for l in (0..lines).filter(|l| l & step == 0) {
        let (first, second) = data.split_at_mut((l + step) * stride);
        let lo = &mut first[l * stride..l * stride + len];
        let hi = &mut second[..len];
        run_with(odd_unit(l), lo, hi, &mut acc);
    }
    acc.finish()
}

multiversioned! {
    /// The largest entry of `xs`, as a `u64`.
    pub(super) fn max_load<T: Units>(xs: &[T]) -> u64 {
        xs.iter().fold(T::ZERO, |m, &x| m.max(x)).to_u64()
    }
}

multiversioned! {
    /// Dimensions `0..log2(block.len())` of the block of nodes `base..`, computed in lanes of
    /// `C`; `units[k]` says who keeps the odd unit in dimension `k` by the pair's bit `k + 1`.
    ///
    /// The block, seen as `rows × WIDTH`, is first gathered transposed into `2·WIDTH` *lines*:
    /// line `2c + p` holds column `c` of the rows of parity `p`, so dimension `k <
    /// TRANSPOSED_DIMS` pairs line `l` with line `l ^ 2^(k+1)` — whole lines, which vectorise —
    /// and its odd unit depends on the line only (bit `k + 1` of the node is bit `k + 2` of the
    /// line, or the row's parity `p` for the last of these dimensions). Lines are padded so that
    /// the columns do not all fall in the same cache set. Then the block is transposed back for
    /// the other dimensions, whose pairs are runs of at least `WIDTH` entries, and written back
    /// widened.
    pub(super) fn block_pass<T: Units, C: Units>(
        block: &mut [T],
        base: usize,
        units: &[[OddUnit; 2]],
        stats: &mut Stats,
        narrow: impl Fn(T) -> C,
        widen: impl Fn(C) -> T,
    ) {
        let len = block.len();
        let low = TRANSPOSED_DIMS;
        let line_len = len >> (low + 1);
        let stride = line_len + LINE_PADDING;
        let lines = 2 * WIDTH;
        let mut transposed = vec![C::ZERO; lines * stride];
        for (r, src) in block.chunks_exact(WIDTH).enumerate() {
            let at = (r & 1) * stride + (r >> 1);
            for (c, &x) in src.iter().enumerate() {
                transposed[2 * c * stride + at] = narrow(x);
            }
        }
        for k in 0..low {
            let u = units[k as usize];
            let s = if k + 1 < low {
                halve_lines(&mut transposed, stride, line_len, lines, 2 << k, |l| {
                    u[(l >> (k + 2)) & 1]
                })
            } else {
                halve_lines(&mut transposed, stride, line_len, lines, 2 << k, |l| {
                    u[l & 1]
                })
            };
            stats.add(k, s);
        }
        let mut natural = vec![C::ZERO; len];
        for (r, dst) in natural.chunks_exact_mut(WIDTH).enumerate() {
            let at = (r & 1) * stride + (r >> 1);
            for (c, y) in dst.iter_mut().enumerate() {
                *y = transposed[2 * c * stride + at];
            }
        }
        drop(transposed);
        for k in low..len.trailing_zeros() {
            let u = units[k as usize];
            let first = base >> (k + 1);
            let s = halve_chunks(&mut natural, 1usize << k, |c| u[(first + c) & 1]);
            stats.add(k, s);
        }
        for (x, &y) in block.iter_mut().zip(&natural) {
            *x = widen(y);
        }
    }
}

multiversioned! {
    /// Dimensions `low..low + units.len()` of the columns held by `rows` (one segment per row,
    /// row `r` being nodes `(r << low) + …`), in tiles of `tile_width` columns computed in lanes
    /// of `C`; `units[j]` is for dimension `low + j`.
    pub(super) fn tile_pass<T: Units, C: Units>(
        rows: &mut [&mut [T]],
        low: u32,
        tile_width: usize,
        units: &[[OddUnit; 2]],
        stats: &mut Stats,
        narrow: impl Fn(T) -> C,
        widen: impl Fn(C) -> T,
    ) {
        let width = rows[0].len();
        let tw = tile_width.min(width);
        let mut tile = vec![C::ZERO; rows.len() * tw];
        for t in (0..width).step_by(tw) {
            for (dst, row) in tile.chunks_exact_mut(tw).zip(rows.iter()) {
                for (y, &x) in dst.iter_mut().zip(&row[t..t + tw]) {
                    *y = narrow(x);
                }
            }
            for (j, u) in units.iter().enumerate() {
                let half = tw << j;
                // chunk c starts at row c·2^(j+1), whose bit j + 1 (the node's bit k + 1) is c's
                // lowest bit
                let s = halve_chunks(&mut tile, half, |c| u[c & 1]);
                stats.add(low + j as u32, s);
            }
            for (src, row) in tile.chunks_exact(tw).zip(rows.iter_mut()) {
                for (x, &y) in row[t..t + tw].iter_mut().zip(src) {
                    *x = widen(y);
                }
            }
        }
    }
}

/// The instruction set the passes run with on this processor.
pub(super) fn selected_target() -> &'static str {
    crate::simd::level().name()
}
