//! Exact proportional shares of an integer total.
//!
//! Capacity-aware rules split `W` units in proportion to capacities `c_i`. The ideal share
//! `W·c_i/Σc` is rarely an integer, and the choice of which node gets the rounded-up unit is
//! the whole difference between the rules. So shares are computed *exactly*, for every total
//! and every capacity, in rational arithmetic: a capacity stands for the decimal a person
//! typed — the shortest decimal that reads back as the same `f64` (`0.1` is one tenth, not
//! the binary fraction nearest to it) — so the capacities are integers `d_i` times powers of
//! ten, scaled to a common exponent, and `W·w_i/Σw` is divided exactly: in `u128` when it
//! fits, in arbitrary precision (`num-bigint`) otherwise. Whole-number capacities below 2^53
//! (the common case) take the `u128` path at once.

use num_bigint::BigUint;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The integer part of a proportional share and whether the share was an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// `⌊total·weight/(weight+other)⌋`.
    pub floor: u64,
    /// True when the share has no fractional part.
    pub exact: bool,
}

/// Splits `total` between two nodes of capacities `weight` and `other`: the first node's
/// share `total·weight/(weight+other)`, rounded down, and whether it was exact.
///
/// Both capacities must be positive and finite.
///
/// # Example
/// ```
/// use hetlb_core::allocation::pair_share;
/// // Chau & Fu §4: 1600 tasks over clusters of 64 and 32 processors.
/// let share = pair_share(1600, 64.0, 32.0);
/// assert_eq!((share.floor, share.exact), (1066, false));
/// assert!(pair_share(96, 64.0, 32.0).exact);
/// // 0.1 and 0.3 are one tenth and three tenths: a quarter of 8 is exactly 2.
/// assert_eq!(pair_share(8, 0.1, 0.3), hetlb_core::allocation::Share { floor: 2, exact: true });
/// ```
pub fn pair_share(total: u64, weight: f64, other: f64) -> Share {
    if weight == other {
        return Share {
            floor: total / 2,
            exact: total.is_multiple_of(2),
        };
    }
    let (floors, remainders) = exact_floors(total, &[weight, other]);
    Share {
        floor: floors[0],
        exact: remainders[0].is_zero(),
    }
}

/// Whether node `a` is more than `margin` units per capacity above node `b`:
/// `w_a/c_a − w_b/c_b > margin`, decided exactly.
///
/// Capacities stand for the decimals typed (as in [`pair_share`]), so the comparison is made
/// on integers: `w_a·q_a·p_b > p_a·(w_b·q_b + margin·p_b)` with `c = p/q`. Whole capacities
/// below 2^53 take a `u128` path; others are compared in arbitrary precision.
///
/// Chau & Fu's Fig. 5 moves tasks in the last dimension only when this holds with
/// `margin = 1` (Chau & Fu 2003 §4); `margin = 0` compares the per-capacity loads.
///
/// # Complexity
/// `O(1)` for whole capacities; otherwise the cost of a few multiplications of numbers of
/// the capacities' decimal length.
///
/// # Example
/// ```
/// use hetlb_core::allocation::level_gap_exceeds;
/// // 960 tasks on 32 processors and 640 on 64: 30 − 10 per processor.
/// assert!(level_gap_exceeds(960, 32.0, 640, 64.0, 1));
/// // 3 and 1 tasks on 2 processors each: a gap of exactly one is not more than one.
/// assert!(!level_gap_exceeds(3, 2.0, 1, 2.0, 1));
/// assert!(level_gap_exceeds(3, 2.0, 1, 2.0, 0));
/// // 0.1 is one tenth: 1/0.1 − 0/0.1 = 10, not more than 10.
/// assert!(!level_gap_exceeds(1, 0.1, 0, 0.1, 10));
/// ```
pub fn level_gap_exceeds(w_a: u64, c_a: f64, w_b: u64, c_b: f64, margin: u64) -> bool {
    if c_a.fract() == 0.0 && c_b.fract() == 0.0 && c_a < WHOLE && c_b < WHOLE {
        let (p_a, p_b) = (c_a as u128, c_b as u128);
        let left = u128::from(w_a).checked_mul(p_b);
        let right = u128::from(margin)
            .checked_mul(p_b)
            .and_then(|x| x.checked_add(u128::from(w_b)))
            .and_then(|x| x.checked_mul(p_a));
        if let (Some(l), Some(r)) = (left, right) {
            return l > r;
        }
    }
    let (p_a, q_a) = fraction(c_a);
    let (p_b, q_b) = fraction(c_b);
    let left = BigUint::from(w_a) * &q_a * &p_b;
    let right = &p_a * (BigUint::from(w_b) * &q_b + BigUint::from(margin) * &p_b);
    left > right
}

/// `c` as the exact fraction `p/q` of the decimal it stands for (see [`decimal`]).
fn fraction(c: f64) -> (BigUint, BigUint) {
    let (digits, exponent) = decimal(c);
    let ten = BigUint::from(10u32);
    if exponent >= 0 {
        (
            BigUint::from(digits) * ten.pow(exponent.unsigned_abs()),
            BigUint::from(1u32),
        )
    } else {
        (BigUint::from(digits), ten.pow(exponent.unsigned_abs()))
    }
}

/// The exact value a capacity stands for: the shortest decimal that reads back as `c`,
/// as `digits · 10^exponent`.
///
/// ```text
/// 0.1 → (1, −1)    1000 → (1, 3)    2.5 → (25, −1)    1e-300 → (1, −300)
/// ```
fn decimal(c: f64) -> (u64, i32) {
    // `{:e}` prints the shortest representation that round-trips: `1.5e0`, `1e-1`.
    let text = format!("{c:e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: u64 = format!("{int}{frac}").parse().unwrap_or(0);
    (digits, exponent - frac.len() as i32)
}

/// Positive integers in the same ratios as the capacities (as decimals, see [`decimal`]).
enum Weights {
    Small(Vec<u128>),
    Big(Vec<BigUint>),
}

/// The largest whole capacity taken as it is (every integer below 2^53 is an `f64`).
const WHOLE: f64 = 9_007_199_254_740_992.0;

/// Capacities below this with at most ten binary fraction digits (1.5, 0.25, 2.375) are
/// scaled by 2^10 without formatting: their exact value has at most 14 significant digits,
/// and no other decimal that short is as close, so it is the decimal typed.
const SHORT_DYADIC: f64 = 1e4;

fn exact_weights(capacities: &[f64]) -> Weights {
    if capacities.iter().all(|&c| c.fract() == 0.0 && c < WHOLE) {
        return Weights::Small(capacities.iter().map(|&c| c as u128).collect());
    }
    if capacities
        .iter()
        .all(|&c| (c * 1024.0).fract() == 0.0 && c < SHORT_DYADIC)
    {
        return Weights::Small(capacities.iter().map(|&c| (c * 1024.0) as u128).collect());
    }
    let parts: Vec<(u64, i32)> = capacities.iter().map(|&c| decimal(c)).collect();
    let e_min = parts.iter().map(|&(_, e)| e).min().unwrap_or(0);
    let small: Option<Vec<u128>> = parts
        .iter()
        .map(|&(d, e)| {
            10u128
                .checked_pow(u32::try_from(e - e_min).ok()?)
                .and_then(|p| p.checked_mul(u128::from(d)))
        })
        .collect();
    if let Some(w) = small
        && w.iter().try_fold(0u128, |a, &x| a.checked_add(x)).is_some()
    {
        return Weights::Small(w);
    }
    Weights::Big(
        parts
            .iter()
            .map(|&(d, e)| BigUint::from(d) * BigUint::from(10u32).pow((e - e_min) as u32))
            .collect(),
    )
}

/// `⌊W·w_i/Σw⌋` and the remainders `W·w_i mod Σw`, exactly.
fn exact_floors(total: u64, capacities: &[f64]) -> (Vec<u64>, Vec<Remainder>) {
    let weights = exact_weights(capacities);
    if let Weights::Small(w) = &weights {
        let den: u128 = w.iter().sum();
        let total = u128::from(total);
        if den > 0 && w.iter().all(|&x| x.checked_mul(total).is_some()) {
            return w
                .iter()
                .map(|&x| {
                    let num = x * total;
                    ((num / den) as u64, Remainder::Small(num % den))
                })
                .unzip();
        }
    }
    let big: Vec<BigUint> = match weights {
        Weights::Small(w) => w.into_iter().map(BigUint::from).collect(),
        Weights::Big(w) => w,
    };
    let den: BigUint = big.iter().sum();
    if den == BigUint::from(0u32) {
        return (vec![0; big.len()], vec![Remainder::Small(0); big.len()]);
    }
    big.iter()
        .map(|x| {
            let num = x * total;
            let floor = u64::try_from(&num / &den).unwrap_or(total);
            (floor, Remainder::Big(num % &den))
        })
        .unzip()
}

/// Integer targets that sum to `total` exactly: each node gets `⌊W·c_i/Σc⌋`, and the units
/// left over go to the nodes with the largest remainders (Hamilton's method).
///
/// Ties between equal remainders go to the node with the larger `tie_break` value (pass the
/// current loads, so that the node already holding the extra unit keeps it), then to the lower
/// index. Every target is within one unit of the exact proportional share.
///
/// # Arguments
/// * `total` — the units to distribute, `W`.
/// * `capacities` — positive finite capacities, one per node.
/// * `tie_break` — one value per node; larger wins a tie.
///
/// # Complexity
/// `O(N log N)`.
///
/// # Example
/// ```
/// use hetlb_core::allocation::proportional_targets;
/// // Rim et al. §5.1: 86 units over 8 processors, two get 10 and six get 11.
/// let t = proportional_targets(86, &[1.0; 8], &[0; 8]);
/// assert_eq!(t, vec![11, 11, 11, 11, 11, 11, 10, 10]);
/// assert_eq!(proportional_targets(10, &[1.0, 2.0, 2.0], &[0; 3]), vec![2, 4, 4]);
/// ```
pub fn proportional_targets(total: u64, capacities: &[f64], tie_break: &[u64]) -> Vec<u64> {
    let n = capacities.len();
    assert_eq!(tie_break.len(), n, "one tie-break value per node");
    if n == 0 {
        return Vec::new();
    }
    let (mut targets, remainders) = proportional_floors(total, capacities);
    let assigned: u128 = targets.iter().map(|&t| u128::from(t)).sum();
    let left = (u128::from(total) - assigned) as usize;
    if left == 0 {
        return targets;
    }
    // Largest remainder first, then the larger tie-break, then the lower index: a strict
    // order, so the `left` first nodes are one set however the rest is ordered.
    let first = |&a: &usize, &b: &usize| {
        remainders[b]
            .cmp(&remainders[a])
            .then(tie_break[b].cmp(&tie_break[a]))
            .then(a.cmp(&b))
    };
    if left == 1 {
        // The first node of that order alone.
        if let Some(i) = (0..n).min_by(first) {
            targets[i] += 1;
        }
        return targets;
    }
    let mut order: Vec<usize> = (0..n).collect();
    if left < n {
        order.select_nth_unstable_by(left - 1, first);
        for &i in &order[..left] {
            targets[i] += 1;
        }
    } else {
        order.sort_by(first);
        for &i in order.iter().cycle().take(left) {
            targets[i] += 1;
        }
    }
    targets
}

/// `⌊W·c_i/Σc⌋` for every node, exactly, with the remainders; the floors add up to at most
/// `total`, so fewer than `N` units are left over.
fn proportional_floors(total: u64, capacities: &[f64]) -> (Vec<u64>, Vec<Remainder>) {
    exact_floors(total, capacities)
}

/// A remainder `W·w_i mod Σw`; all the remainders of one split share the denominator.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Remainder {
    Small(u128),
    Big(BigUint),
}

impl Remainder {
    fn is_zero(&self) -> bool {
        match self {
            Self::Small(x) => *x == 0,
            Self::Big(x) => *x == BigUint::from(0u32),
        }
    }

    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Small(a), Self::Small(b)) => a.cmp(b),
            (Self::Big(a), Self::Big(b)) => a.cmp(b),
            (Self::Small(a), Self::Big(b)) => BigUint::from(*a).cmp(b),
            (Self::Big(a), Self::Small(b)) => a.cmp(&BigUint::from(*b)),
        }
    }
}

/// The smallest makespan `T* = min max_i w_i/c_i` over all integer allocations of `total`
/// units: the finishing time of the optimal integer allocation when node `i` runs `c_i` units
/// per unit of time.
///
/// # Complexity
/// `O(N log N)`: start from the exact proportional floors, then hand out the fewer than `N`
/// remaining units one at a time to the node whose finishing time grows least (greedy is
/// optimal for this min-max problem).
///
/// # Example
/// ```
/// use hetlb_core::allocation::optimal_makespan;
/// assert_eq!(optimal_makespan(86, &[1.0; 8]), 11.0);
/// assert_eq!(optimal_makespan(10, &[1.0, 4.0]), 2.0);
/// ```
pub fn optimal_makespan(total: u64, capacities: &[f64]) -> f64 {
    let (mut loads, _) = proportional_floors(total, capacities);
    let assigned: u128 = loads.iter().map(|&w| u128::from(w)).sum();
    let level = |w: u64, c: f64| (w as f64 + 1.0) / c;
    let mut makespan = loads
        .iter()
        .zip(capacities)
        .map(|(&w, &c)| w as f64 / c)
        .fold(0.0, f64::max);
    let mut heap: BinaryHeap<NextLevel> = loads
        .iter()
        .zip(capacities)
        .enumerate()
        .map(|(i, (&w, &c))| NextLevel(level(w, c), i))
        .collect();
    for _ in 0..(u128::from(total) - assigned) {
        let Some(NextLevel(next, i)) = heap.pop() else {
            break;
        };
        makespan = makespan.max(next);
        loads[i] += 1;
        heap.push(NextLevel(level(loads[i], capacities[i]), i));
    }
    makespan
}

/// `(max_i w_i/c_i − T*)·Σc/N`, the metric `distance_from_optimal`: how far the most loaded
/// node (per unit of capacity) is above the best integer allocation of the same total, in
/// units of load of an average node. `T*` is [`optimal_makespan`]'s; with equal capacities
/// the value is `max_i w_i − ⌈W/N⌉`.
///
/// Computed exactly: capacities stand for the decimals typed (as in [`pair_share`]), the
/// levels are compared and subtracted as fractions of integers (`u128`, or arbitrary
/// precision for capacities far apart), and the result is rounded to an `f64` once. So a
/// distance of 41 at totals near 2^64 reads 41, where `f64` levels would cancel to 0.
///
/// # Complexity
/// `O(N log N)`.
///
/// # Example
/// ```
/// use hetlb_core::allocation::distance_from_optimal;
/// let big = u64::MAX / 2 - 50;
/// // Near 2^63 on each of two equal nodes: max − ⌈mean⌉ = (big + 42) − (big + 1).
/// assert_eq!(distance_from_optimal(&[big + 42, big - 40], &[1.0, 1.0]), 41.0);
/// assert_eq!(distance_from_optimal(&[3, 9], &[1.0, 3.0]), 0.0);
/// ```
pub fn distance_from_optimal(loads: &[u64], capacities: &[f64]) -> f64 {
    let n = loads.len();
    if n == 0 || capacities.len() != n {
        return 0.0;
    }
    let Ok(total) = u64::try_from(loads.iter().map(|&w| u128::from(w)).sum::<u128>()) else {
        return f64::NAN;
    };
    match exact_weights(capacities) {
        Weights::Small(w) if w.iter().all(|&x| x < 1 << 63) => distance_exact(loads, total, w),
        Weights::Small(w) => {
            distance_exact(loads, total, w.into_iter().map(BigUint::from).collect())
        }
        Weights::Big(w) => distance_exact(loads, total, w),
    }
}

/// Integers with the operations [`distance_exact`] needs: `u128` (when every product of a
/// load and a weight fits) or arbitrary precision.
trait Exact: Clone + Ord {
    fn of(x: u64) -> Self;
    fn times(&self, other: &Self) -> Self;
    fn big(&self) -> BigUint;
    fn sum(xs: &[Self]) -> Self;
    /// `⌊total·self/sum⌋` (`sum` positive).
    fn floor_share(&self, total: u64, sum: &Self) -> u64;
}

impl Exact for u128 {
    fn of(x: u64) -> Self {
        u128::from(x)
    }
    fn times(&self, other: &Self) -> Self {
        self * other
    }
    fn big(&self) -> BigUint {
        BigUint::from(*self)
    }
    fn sum(xs: &[Self]) -> Self {
        xs.iter().sum()
    }
    fn floor_share(&self, total: u64, sum: &Self) -> u64 {
        // self < 2^63 and total < 2^64: the product fits.
        u64::try_from(self * u128::from(total) / sum).unwrap_or(total)
    }
}

impl Exact for BigUint {
    fn of(x: u64) -> Self {
        BigUint::from(x)
    }
    fn times(&self, other: &Self) -> Self {
        self * other
    }
    fn big(&self) -> BigUint {
        self.clone()
    }
    fn sum(xs: &[Self]) -> Self {
        xs.iter().sum()
    }
    fn floor_share(&self, total: u64, sum: &Self) -> u64 {
        u64::try_from(self * total / sum).unwrap_or(total)
    }
}

/// A level `num / den` of node `node`, ordered by value (smallest first in a max-heap), then
/// by node.
#[derive(Clone, PartialEq, Eq)]
struct Fraction<T> {
    num: T,
    den: T,
    node: usize,
}

impl<T: Exact> Fraction<T> {
    fn value_cmp(&self, other: &Self) -> Ordering {
        self.num.times(&other.den).cmp(&other.num.times(&self.den))
    }
}

impl<T: Exact> PartialOrd for Fraction<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Exact> Ord for Fraction<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .value_cmp(self)
            .then_with(|| other.node.cmp(&self.node))
    }
}

/// [`distance_from_optimal`] for integer weights `w` proportional to the capacities (the
/// common scale cancels: `(w_a/c_a − T*)·Σc = (w_a/W_a − T*_W)·ΣW`).
fn distance_exact<T: Exact>(loads: &[u64], total: u64, weights: Vec<T>) -> f64 {
    let n = loads.len();
    let level = |w: u64, i: usize| Fraction {
        num: T::of(w),
        den: weights[i].clone(),
        node: i,
    };
    // The most loaded node per unit of weight.
    let Some(peak) = (0..n).map(|i| level(loads[i], i)).min() else {
        return 0.0;
    };
    // T*: the proportional floors, then each unit left to the lowest level it would make.
    let sum_w = T::sum(&weights);
    if sum_w == T::of(0) {
        return 0.0;
    }
    let mut alloc: Vec<u64> = weights
        .iter()
        .map(|w| w.floor_share(total, &sum_w))
        .collect();
    let assigned: u128 = alloc.iter().map(|&w| u128::from(w)).sum();
    let mut heap: BinaryHeap<Fraction<T>> = (0..n)
        .map(|i| level(alloc[i].saturating_add(1), i))
        .collect();
    for _ in 0..(u128::from(total) - assigned) {
        let Some(next) = heap.pop() else { break };
        alloc[next.node] += 1;
        heap.push(level(alloc[next.node].saturating_add(1), next.node));
    }
    let Some(optimum) = (0..n).map(|i| level(alloc[i], i)).min() else {
        return 0.0;
    };
    // (p/q − a/b)·ΣW/N, with the peak at or above the optimum.
    let (p, q) = (peak.num.big(), peak.den.big());
    let (a, b) = (optimum.num.big(), optimum.den.big());
    let (left, right) = (&p * &b, &a * &q);
    if left <= right {
        return 0.0;
    }
    let num = (left - right) * sum_w.big();
    let den = q * b * BigUint::from(n);
    big_to_f64(&num, &den)
}

/// `num / den` rounded to the nearest `f64` (to within one unit in the last place).
fn big_to_f64(num: &BigUint, den: &BigUint) -> f64 {
    if *den == BigUint::from(0u32) {
        return f64::NAN;
    }
    // Scale so the quotient has 64 significant bits, divide in integers, then rescale.
    let shift =
        i64::try_from(den.bits()).unwrap_or(0) - i64::try_from(num.bits()).unwrap_or(0) + 64;
    let q = if shift >= 0 {
        (num << shift as u64) / den
    } else {
        num / (den << (-shift) as u64)
    };
    let digits = q.to_u64_digits();
    let mut x = 0.0f64;
    for d in digits.iter().rev() {
        x = x * 18_446_744_073_709_551_616.0 + *d as f64;
    }
    x * 2f64.powi(-(shift as i32))
}

/// Min-heap entry: the finishing time node `.1` would have with one more unit.
#[derive(Debug, PartialEq)]
struct NextLevel(f64, usize);

impl Eq for NextLevel {}

impl PartialOrd for NextLevel {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NextLevel {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

/// Splits `amount` over senders with capacities `caps` (`Σ caps ≥ amount`) so that the
/// largest amount is as small as possible: each sends `min(cap, λ)` for the largest `λ` that
/// does not exceed `amount`, and the remaining units go one each to the first senders with
/// room left.
pub(crate) fn water_fill(caps: &[u64], amount: u64) -> Vec<u64> {
    let filled = |level: u64| -> u64 { caps.iter().map(|&c| c.min(level)).sum() };
    debug_assert!(filled(u64::MAX) >= amount);
    let (mut lo, mut hi) = (0u64, caps.iter().copied().max().unwrap_or(0));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if filled(mid) <= amount {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let mut left = amount - filled(lo);
    caps.iter()
        .map(|&c| {
            let extra = u64::from(left > 0 && c > lo);
            left -= extra;
            c.min(lo) + extra
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_fill_minimises_the_largest_share() {
        assert_eq!(water_fill(&[5, 1, 7], 9), vec![4, 1, 4]);
        assert_eq!(water_fill(&[5, 1, 7], 13), vec![5, 1, 7]);
        assert_eq!(water_fill(&[0, 0, 3], 2), vec![0, 0, 2]);
        assert_eq!(water_fill(&[2, 2, 2], 5), vec![2, 2, 1]);
    }
    use proptest::prelude::*;

    #[test]
    fn capacities_are_the_decimals_typed() {
        assert_eq!(decimal(1.0), (1, 0));
        assert_eq!(decimal(96.0), (96, 0));
        assert_eq!(decimal(0.75), (75, -2));
        assert_eq!(decimal(0.1), (1, -1));
        assert_eq!(decimal(1e-300), (1, -300));
        assert_eq!(decimal(1234.5678), (12345678, -4));
        assert!(matches!(exact_weights(&[1.5, 0.25]), Weights::Small(w) if w == vec![1536, 256]));
        assert!(matches!(exact_weights(&[0.1, 0.25]), Weights::Small(w) if w == vec![10, 25]));
        assert!(matches!(exact_weights(&[1e-300, 1e300]), Weights::Big(_)));
    }

    /// Rim et al.'s promise, for every total: each target within one unit of the exact
    /// proportional share, checked in rational arithmetic.
    #[test]
    fn shares_are_exact_for_huge_totals_and_wide_capacities() {
        // (capacities, the same as fractions a/b; empty: not checked against fractions)
        type Case<'a> = (&'a [f64], &'a [(u64, u64)]);
        let cases: [Case; 3] = [
            (
                &[0.1, 1000.0, 3.0, 0.3],
                &[(1, 10), (1000, 1), (3, 1), (3, 10)],
            ),
            (&[1e-300, 1.0, 1e300], &[]),
            (&[0.7, 0.2, 0.1], &[(7, 10), (2, 10), (1, 10)]),
        ];
        for (caps, fractions) in cases {
            for total in [0, 1, 7, 100_000_000_000_000_000, u64::MAX / 3, u64::MAX] {
                let t = proportional_targets(total, caps, &vec![0; caps.len()]);
                assert_eq!(
                    t.iter().map(|&x| u128::from(x)).sum::<u128>(),
                    u128::from(total)
                );
                if fractions.is_empty() {
                    continue;
                }
                // share_i = W·(a_i/b_i)/Σ(a_j/b_j), compared with t_i as exact integers over
                // the common denominator 10.
                let w: Vec<BigUint> = fractions
                    .iter()
                    .map(|&(a, b)| BigUint::from(a * (10 / b)))
                    .collect();
                let den: BigUint = w.iter().sum();
                for (ti, wi) in t.iter().zip(&w) {
                    let share_num = wi * total;
                    let ti_num = BigUint::from(*ti) * &den;
                    let diff = if share_num > ti_num {
                        &share_num - &ti_num
                    } else {
                        &ti_num - &share_num
                    };
                    assert!(diff < den, "{caps:?} {total}: {ti} is a unit or more off");
                }
            }
        }
        assert_eq!(pair_share(u64::MAX, 0.1, 0.3).floor, u64::MAX / 4);
    }

    #[test]
    fn integral_shares_are_recognised_even_when_f64_division_is_not_exact() {
        // 0.1 + 0.2 style trouble does not arise with dyadic capacities.
        let s = pair_share(300, 1.0, 2.0);
        assert_eq!((s.floor, s.exact), (100, true));
        let s = pair_share(7, 3.0, 4.0);
        assert_eq!((s.floor, s.exact), (3, true));
    }

    #[test]
    fn extreme_ratios_stay_exact() {
        let s = pair_share(1000, 1e-300, 1.0);
        assert_eq!(s.floor, 0);
        let t = proportional_targets(1000, &[1e-300, 1.0, 1e300], &[0, 0, 0]);
        assert_eq!(t, vec![0, 0, 1000]);
    }

    #[test]
    fn level_gaps_are_exact() {
        // equal to the margin is not more than it, whatever the representation
        assert!(!level_gap_exceeds(30, 10.0, 20, 10.0, 1));
        assert!(level_gap_exceeds(31, 10.0, 20, 10.0, 1));
        assert!(!level_gap_exceeds(3, 0.3, 2, 0.2, 0)); // 10 and 10
        assert!(!level_gap_exceeds(6, 0.3, 2, 0.2, 10)); // 20 − 10 = 10
        assert!(level_gap_exceeds(7, 0.3, 2, 0.2, 10));
        assert!(!level_gap_exceeds(0, 1.0, 5, 1.0, 0));
        // whole capacities near 2^53, and beyond it (arbitrary precision)
        assert!(level_gap_exceeds(u64::MAX, 9.0e15, u64::MAX - 1, 9.0e15, 0));
        assert!(!level_gap_exceeds(u64::MAX, 9.0e15, u64::MAX, 9.0e15, 0));
        assert!(level_gap_exceeds(u64::MAX, 1e18, u64::MAX - 1, 1e18, 0));
        assert!(level_gap_exceeds(u64::MAX, 1e-300, 0, 1.0, 1));
    }

    proptest! {
        #[test]
        fn targets_sum_to_total_and_are_within_one_of_the_share(
            total in 0u64..1_000_000,
            caps in prop::collection::vec(0.25f64..8.0, 1..40),
        ) {
            let t = proportional_targets(total, &caps, &vec![0; caps.len()]);
            prop_assert_eq!(t.iter().sum::<u64>(), total);
            let sum: f64 = caps.iter().sum();
            for (ti, c) in t.iter().zip(&caps) {
                let share = total as f64 * c / sum;
                prop_assert!((*ti as f64 - share).abs() < 1.0 + 1e-6);
            }
        }

        /// The extra units go to the largest remainders, then the larger tie-break, then
        /// the lower index: the same targets as ranking every node (Hamilton's method read
        /// literally), however few units are left over.
        #[test]
        fn leftover_units_go_where_a_full_ranking_puts_them(
            total in 0u64..10_000,
            whole in prop::collection::vec(1u32..6, 1..24),
            ties in prop::collection::vec(0u64..3, 24),
        ) {
            let caps: Vec<f64> = whole.iter().map(|&c| f64::from(c)).collect();
            let tie_break = &ties[..caps.len()];
            let den: u64 = whole.iter().map(|&c| u64::from(c)).sum();
            let mut expected: Vec<u64> = whole.iter().map(|&c| total * u64::from(c) / den).collect();
            let remainder = |i: usize| total * u64::from(whole[i]) % den;
            let mut order: Vec<usize> = (0..caps.len()).collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(remainder(i)), std::cmp::Reverse(tie_break[i]), i));
            let left = total - expected.iter().sum::<u64>();
            for &i in order.iter().take(left as usize) {
                expected[i] += 1;
            }
            prop_assert_eq!(proportional_targets(total, &caps, tie_break), expected);
        }

        #[test]
        fn the_exact_distance_is_the_float_one_on_small_totals(
            loads in prop::collection::vec(0u64..1000, 1..12),
            whole in prop::collection::vec(1u32..9, 12),
        ) {
            let caps: Vec<f64> = whole[..loads.len()].iter().map(|&c| f64::from(c) / 4.0).collect();
            let total: u64 = loads.iter().sum();
            let peak = loads.iter().zip(&caps).map(|(&w, &c)| w as f64 / c).fold(0.0, f64::max);
            let mean_cap = caps.iter().sum::<f64>() / caps.len() as f64;
            let float = ((peak - optimal_makespan(total, &caps)) * mean_cap).max(0.0);
            let exact = distance_from_optimal(&loads, &caps);
            prop_assert!((exact - float).abs() <= 1e-9 * (1.0 + float), "{} {}", exact, float);
        }

        #[test]
        fn optimal_makespan_is_a_lower_bound_achieved_by_some_allocation(
            total in 0u64..10_000,
            caps in prop::collection::vec(0.5f64..4.0, 1..12),
        ) {
            let t = optimal_makespan(total, &caps);
            let sum: f64 = caps.iter().sum();
            prop_assert!(t + 1e-9 >= total as f64 / sum);
            // the allocation floor(t * c_i) must hold all units
            let room: u64 = caps.iter().map(|c| (t * c + 1e-9).floor() as u64).sum();
            prop_assert!(room >= total);
        }
    }
}
