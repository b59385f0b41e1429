//! Blocks and tiles of pair exchanges under a halving rule, in vector instructions chosen at
//! run time.
//!
//! A *run* is two equally long slices `lo` and `hi` whose `i`-th entries form a pair, with the
//! same [`OddUnit`] for every pair. The loop body is branch-free (adds, shifts, compares and
//! selects), so the compiler vectorises it. [`multiversion`] compiles the block and tile passes — gathers, transposes,
//! runs and write-backs together — for AVX-512, AVX2 and SSE4.2 as well as the baseline, and
//! picks the best one the processor has on the first call (one atomic load per call after
//! that). The default build thus stays baseline x86-64.

use super::engine::{DimStats, Stats};
use crate::rules::dimension_exchange::OddUnit;
use crate::units::Units;
use multiversion::multiversion;

const HEAVIER: u8 = 0;
const LOW: u8 = 1;
const HIGH: u8 = 2;
const ODD_SHARE: u8 = 3;

/// The lowest dimensions of a block, applied on the block transposed so that their pairs are
/// long contiguous runs rather than neighbours a few entries apart.
pub(super) const TRANSPOSED_DIMS: u32 = 4;
const WIDTH: usize = 1 << TRANSPOSED_DIMS;
/// Entries between two lines of the transposed block, so that its lines start in different
/// cache sets.
const LINE_PADDING: usize = 16;

/// Runs shorter than this that cannot sum their units in lanes of `C` (see [`Acc::sum_len`])
/// sum them in `u64` lanes instead of in pieces.
const MIN_SUM_LEN: usize = 64;

/// What a pass needs to know of the rule and the loads.
#[derive(Clone, Copy)]
pub(super) struct Rule<'a> {
    /// `units[k]`: who keeps the odd unit in the pass's `k`-th dimension, by the pair's bit
    /// `k + 1`.
    pub units: &'a [[OddUnit; 2]],
    /// The largest load before balancing (no pair moves more).
    pub max: u64,
}

/// Totals of one dimension so far.
struct Acc<C> {
    hops: u64,
    messages: u64,
    tmax: C,
    /// Pairs whose units moved sum without overflow in `C`: no pair moves more than the
    /// largest load, so `C::MAX / max_load` of them. Summing in `C` rather than in `u64`
    /// saves the widening of every lane (a quarter of a run's instructions).
    sum_len: usize,
}

/// The pairs whose moved units are sure to fit a `C` when summed, for a largest load `max`.
#[inline(always)]
fn sum_len<C: Units>(max: u64) -> usize {
    usize::try_from(C::MAX.to_u64() / max.max(1)).unwrap_or(usize::MAX)
}

impl<C: Units> Acc<C> {
    #[inline(always)]
    fn new(sum_len: usize) -> Self {
        Self {
            hops: 0,
            messages: 0,
            tmax: C::ZERO,
            sum_len,
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

/// One pair: the low node's new load, and the units moved.
#[inline(always)]
fn pair<C: Units, const ODD: u8>(a: C, b: C) -> (C, C) {
    let sum = a + b;
    let keeps = match ODD {
        HEAVIER => a >= b,
        LOW => true,
        HIGH => false,
        _ => (sum >> 1) & C::ONE == C::ZERO,
    };
    let new_low = (sum >> 1) + (sum & C::from_bool(keeps));
    let moved = new_low.max(a) - new_low.min(a);
    (new_low, moved)
}

/// One run with the odd unit placed by `ODD`.
#[inline(always)]
fn run<C: Units, const ODD: u8>(lo: &mut [C], hi: &mut [C], acc: &mut Acc<C>) {
    let len = acc.sum_len;
    if lo.len() <= len {
        run_in_lanes::<C, ODD>(lo, hi, acc);
    } else if len >= MIN_SUM_LEN {
        for (lo, hi) in lo.chunks_mut(len).zip(hi.chunks_mut(len)) {
            run_in_lanes::<C, ODD>(lo, hi, acc);
        }
    } else {
        run_wide::<C, ODD>(lo, hi, acc);
    }
}

/// One run of at most `acc.sum_len` pairs, its totals summed in lanes of `C`.
#[inline(always)]
fn run_in_lanes<C: Units, const ODD: u8>(lo: &mut [C], hi: &mut [C], acc: &mut Acc<C>) {
    let (mut hops, mut messages, mut tmax) = (C::ZERO, C::ZERO, C::ZERO);
    for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
        let (a, b) = (*l, *h);
        let (new_low, moved) = pair::<C, ODD>(a, b);
        *l = new_low;
        *h = a + b - new_low;
        hops = hops + moved;
        messages = messages + C::from_bool(moved != C::ZERO);
        tmax = tmax.max(moved);
    }
    acc.hops += hops.to_u64();
    acc.messages += messages.to_u64();
    acc.tmax = acc.tmax.max(tmax);
}

/// One run, its totals summed in `u64` lanes.
#[inline(always)]
fn run_wide<C: Units, const ODD: u8>(lo: &mut [C], hi: &mut [C], acc: &mut Acc<C>) {
    let (mut hops, mut messages, mut tmax) = (0u64, 0u64, C::ZERO);
    for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
        let (a, b) = (*l, *h);
        let (new_low, moved) = pair::<C, ODD>(a, b);
        *l = new_low;
        *h = a + b - new_low;
        hops += moved.to_u64();
        messages += u64::from(moved != C::ZERO);
        tmax = tmax.max(moved);
    }
    acc.hops += hops;
    acc.messages += messages;
    acc.tmax = acc.tmax.max(tmax);
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

/// Two dimensions at once on four equally long slices, with the odd unit placed by `ODD` for
/// all their pairs: the first dimension pairs `a` with `b` and `c` with `d`, the second then
/// pairs `a` with `c` and `b` with `d`. One pass over the entries instead of two. Both
/// dimensions' totals are summed in lanes of `C`: `2·a.len()` must not pass `sum_len`.
#[inline(always)]
fn run4<C: Units, const ODD: u8>(
    [a, b, c, d]: [&mut [C]; 4],
    first: &mut Acc<C>,
    second: &mut Acc<C>,
) {
    let len = a.len();
    let (b, c, d) = (&mut b[..len], &mut c[..len], &mut d[..len]);
    let (mut hops0, mut messages0, mut tmax0) = (C::ZERO, C::ZERO, C::ZERO);
    let (mut hops1, mut messages1, mut tmax1) = (C::ZERO, C::ZERO, C::ZERO);
    for i in 0..len {
        let (xa, xb, xc, xd) = (a[i], b[i], c[i], d[i]);
        let (la, ma) = pair::<C, ODD>(xa, xb);
        let (lc, mc) = pair::<C, ODD>(xc, xd);
        let (lb, ld) = (xa + xb - la, xc + xd - lc);
        hops0 = hops0 + ma + mc;
        messages0 = messages0 + C::from_bool(ma != C::ZERO) + C::from_bool(mc != C::ZERO);
        tmax0 = tmax0.max(ma).max(mc);
        let (na, m2) = pair::<C, ODD>(la, lc);
        let (nb, m3) = pair::<C, ODD>(lb, ld);
        hops1 = hops1 + m2 + m3;
        messages1 = messages1 + C::from_bool(m2 != C::ZERO) + C::from_bool(m3 != C::ZERO);
        tmax1 = tmax1.max(m2).max(m3);
        (a[i], b[i], c[i], d[i]) = (na, nb, la + lc - na, lb + ld - nb);
    }
    first.hops += hops0.to_u64();
    first.messages += messages0.to_u64();
    first.tmax = first.tmax.max(tmax0);
    second.hops += hops1.to_u64();
    second.messages += messages1.to_u64();
    second.tmax = second.tmax.max(tmax1);
}

/// Applies dimensions `k` and `k + 1` to `data`, seen as consecutive chunks of `4·half`
/// entries (quarters `a b c d`: `k` pairs `a`–`b` and `c`–`d`, then `k + 1` pairs `a`–`c`
/// and `b`–`d`), when both dimensions place the odd unit as `odd` for every pair.
#[inline(always)]
fn halve_chunks_twice<C: Units>(
    data: &mut [C],
    half: usize,
    sum_len: usize,
    odd: OddUnit,
) -> [DimStats; 2] {
    if 2 * half > sum_len {
        return [
            halve_chunks(data, half, sum_len, |_| odd),
            halve_chunks(data, 2 * half, sum_len, |_| odd),
        ];
    }
    let (mut first, mut second) = (Acc::new(sum_len), Acc::new(sum_len));
    for chunk in data.chunks_exact_mut(4 * half) {
        let (ab, cd) = chunk.split_at_mut(2 * half);
        let (a, b) = ab.split_at_mut(half);
        let (c, d) = cd.split_at_mut(half);
        let quarters = [a, b, c, d];
        match odd {
            OddUnit::Heavier => run4::<C, HEAVIER>(quarters, &mut first, &mut second),
            OddUnit::Low => run4::<C, LOW>(quarters, &mut first, &mut second),
            OddUnit::High => run4::<C, HIGH>(quarters, &mut first, &mut second),
            OddUnit::OddShare => run4::<C, ODD_SHARE>(quarters, &mut first, &mut second),
        }
    }
    [first.finish(), second.finish()]
}

/// The odd unit of dimensions `j` and `j + 1` of `units` when it is the same for all their
/// pairs, so that [`halve_chunks_twice`] can apply both.
#[inline(always)]
fn one_unit(units: &[[OddUnit; 2]], j: usize) -> Option<OddUnit> {
    let u = units.get(j..j + 2)?;
    let odd = u[0][0];
    (u[0][1] == odd && u[1][0] == odd && u[1][1] == odd).then_some(odd)
}

/// Applies one dimension to `data`, seen as consecutive chunks of `2·half` entries whose first
/// half pairs with the second; chunk `c` places the odd unit as `odd_unit(c)` says.
#[inline(always)]
fn halve_chunks<C: Units>(
    data: &mut [C],
    half: usize,
    sum_len: usize,
    odd_unit: impl Fn(usize) -> OddUnit,
) -> DimStats {
    let mut acc = Acc::new(sum_len);
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
    sum_len: usize,
    odd_unit: impl Fn(usize) -> OddUnit,
) -> DimStats {
    let mut acc = Acc::new(sum_len);
    for l in (0..lines).filter(|l| l & step == 0) {
        let (first, second) = data.split_at_mut((l + step) * stride);
        let lo = &mut first[l * stride..l * stride + len];
        let hi = &mut second[..len];
        run_with(odd_unit(l), lo, hi, &mut acc);
    }
    acc.finish()
}

/// The largest entry of `xs`, as a `u64`.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+sse4.2+popcnt",
))]
pub(super) fn max_load<T: Units>(xs: &[T]) -> u64 {
    xs.iter().fold(T::ZERO, |m, &x| m.max(x)).to_u64()
}

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
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+sse4.2+popcnt",
))]
pub(super) fn block_pass<T: Units, C: Units>(
    block: &mut [T],
    base: usize,
    Rule { units, max }: Rule<'_>,
    stats: &mut Stats,
    [transposed, natural]: [&mut Vec<C>; 2],
    (narrow, widen): (impl Fn(T) -> C, impl Fn(C) -> T),
) {
    let len = block.len();
    let sums = sum_len::<C>(max);
    let low = TRANSPOSED_DIMS;
    let line_len = len >> (low + 1);
    let stride = line_len + LINE_PADDING;
    let lines = 2 * WIDTH;
    // every entry read below is written first: only the padding keeps older values
    transposed.resize(lines * stride, C::ZERO);
    for (r, src) in block.chunks_exact(WIDTH).enumerate() {
        let at = (r & 1) * stride + (r >> 1);
        for (c, &x) in src.iter().enumerate() {
            transposed[2 * c * stride + at] = narrow(x);
        }
    }
    for k in 0..low {
        let u = units[k as usize];
        let s = if k + 1 < low {
            halve_lines(transposed, stride, line_len, lines, 2 << k, sums, |l| {
                u[(l >> (k + 2)) & 1]
            })
        } else {
            halve_lines(transposed, stride, line_len, lines, 2 << k, sums, |l| {
                u[l & 1]
            })
        };
        stats.add(k, s);
    }
    natural.resize(len, C::ZERO);
    for (r, dst) in natural.chunks_exact_mut(WIDTH).enumerate() {
        let at = (r & 1) * stride + (r >> 1);
        for (c, y) in dst.iter_mut().enumerate() {
            *y = transposed[2 * c * stride + at];
        }
    }
    let mut k = low;
    while k < len.trailing_zeros() {
        if let Some(odd) = one_unit(units, k as usize).filter(|_| k + 1 < len.trailing_zeros()) {
            let [s0, s1] = halve_chunks_twice(natural, 1usize << k, sums, odd);
            stats.add(k, s0);
            stats.add(k + 1, s1);
            k += 2;
        } else {
            let u = units[k as usize];
            let first = base >> (k + 1);
            let s = halve_chunks(natural, 1usize << k, sums, |c| u[(first + c) & 1]);
            stats.add(k, s);
            k += 1;
        }
    }
    for (x, &y) in block.iter_mut().zip(natural.iter()) {
        *x = widen(y);
    }
}

/// Dimensions `low..low + units.len()` of the columns held by `rows` (one segment per row,
/// row `r` being nodes `(r << low) + …`), in tiles of `tile_width` columns computed in lanes
/// of `C`; `units[j]` is for dimension `low + j`.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+sse4.2+popcnt",
))]
pub(super) fn tile_pass<T: Units, C: Units>(
    rows: &mut [&mut [T]],
    low: u32,
    tile_width: usize,
    Rule { units, max }: Rule<'_>,
    stats: &mut Stats,
    tile: &mut Vec<C>,
    (narrow, widen): (impl Fn(T) -> C, impl Fn(C) -> T),
) {
    let width = rows[0].len();
    let tw = tile_width.min(width);
    let sums = sum_len::<C>(max);
    // overwritten by every gather
    tile.resize(rows.len() * tw, C::ZERO);
    for t in (0..width).step_by(tw) {
        for (dst, row) in tile.chunks_exact_mut(tw).zip(rows.iter()) {
            for (y, &x) in dst.iter_mut().zip(&row[t..t + tw]) {
                *y = narrow(x);
            }
        }
        let mut j = 0;
        while j < units.len() {
            let half = tw << j;
            if let Some(odd) = one_unit(units, j) {
                let [s0, s1] = halve_chunks_twice(tile, half, sums, odd);
                stats.add(low + j as u32, s0);
                stats.add(low + j as u32 + 1, s1);
                j += 2;
            } else {
                let u = units[j];
                // chunk c starts at row c·2^(j+1), whose bit j + 1 (the node's bit k + 1) is
                // c's lowest bit
                let s = halve_chunks(tile, half, sums, |c| u[c & 1]);
                stats.add(low + j as u32, s);
                j += 1;
            }
        }
        for (src, row) in tile.chunks_exact(tw).zip(rows.iter_mut()) {
            for (x, &y) in row[t..t + tw].iter_mut().zip(src) {
                *x = widen(y);
            }
        }
    }
}

/// The instruction set the passes run with on this processor.
pub(super) fn selected_target() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        let v3 = has!("avx2")
            && has!("fma")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt");
        if v3 && has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") {
            return "avx512";
        }
        if v3 {
            return "avx2";
        }
        if has!("sse4.2") && has!("popcnt") {
            return "sse4.2";
        }
    }
    "baseline"
}
