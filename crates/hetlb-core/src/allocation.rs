//! Exact proportional shares of an integer total.
//!
//! Capacity-aware rules split `W` units in proportion to capacities `c_i`. The ideal share
//! `W·c_i/Σc` is rarely an integer, and the choice of which node gets the rounded-up unit is
//! the whole difference between the rules. So shares are computed *exactly* whenever the
//! capacities are dyadic rationals of compatible magnitude (every integer capacity is, and
//! so is every ratio of speeds a person types, such as `1.5` or `0.25`): each `f64` is
//! `m·2^e`, scaled to a common exponent, and the division happens in `u128`. Only when the
//! capacities span too many binary orders of magnitude does the computation fall back to
//! `f64`, which is then exact for totals below 2^53.

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
/// ```
pub fn pair_share(total: u64, weight: f64, other: f64) -> Share {
    if weight == other {
        return Share {
            floor: total / 2,
            exact: total % 2 == 0,
        };
    }
    match exact_weights(&[weight, other]) {
        Some(w) => {
            let num = u128::from(total) * u128::from(w[0]);
            let den = u128::from(w[0]) + u128::from(w[1]);
            Share {
                floor: (num / den) as u64,
                exact: num % den == 0,
            }
        }
        None => float_share(total, weight, weight + other),
    }
}

fn float_share(total: u64, weight: f64, sum: f64) -> Share {
    let x = (total as f64 * weight) / sum;
    let floor = x.floor().clamp(0.0, total as f64);
    Share {
        floor: floor as u64,
        exact: x == floor,
    }
}

/// Converts positive finite capacities to integers in the same ratios, exactly, when the
/// scaled values and their sum fit in a `u64`.
fn exact_weights(capacities: &[f64]) -> Option<Vec<u64>> {
    let parts: Vec<(u64, i32)> = capacities.iter().map(|&c| decompose(c)).collect();
    let e_min = parts.iter().map(|&(_, e)| e).min()?;
    let mut sum = 0u64;
    let mut out = Vec::with_capacity(parts.len());
    for (m, e) in parts {
        let shift = u32::try_from(e - e_min).ok()?;
        if shift >= 64 || m.leading_zeros() < shift {
            return None;
        }
        let w = m << shift;
        sum = sum.checked_add(w)?;
        out.push(w);
    }
    Some(out)
}

/// Writes a positive finite `f64` as `m·2^e` with `m` odd.
fn decompose(c: f64) -> (u64, i32) {
    let bits = c.to_bits();
    let exp_field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mut m, mut e) = if exp_field == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_field - 1075)
    };
    let tz = m.trailing_zeros();
    m >>= tz;
    e += tz as i32;
    (m, e)
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
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        remainders[b]
            .cmp(&remainders[a])
            .then(tie_break[b].cmp(&tie_break[a]))
            .then(a.cmp(&b))
    });
    let assigned: u128 = targets.iter().map(|&t| u128::from(t)).sum();
    let left = (u128::from(total) - assigned) as usize;
    for &i in order.iter().cycle().take(left) {
        targets[i] += 1;
    }
    targets
}

/// `⌊W·c_i/Σc⌋` for every node, exactly when the capacities allow, with the fractional parts.
/// The floors never add up to more than `total` (the floating-point fallback is trimmed), so
/// fewer than `N` units are left over on the exact path.
fn proportional_floors(total: u64, capacities: &[f64]) -> (Vec<u64>, Vec<Remainder>) {
    match exact_weights(capacities) {
        Some(w) => {
            let den: u128 = w.iter().map(|&x| u128::from(x)).sum();
            w.iter()
                .map(|&x| {
                    let num = u128::from(total) * u128::from(x);
                    ((num / den) as u64, Remainder::Exact(num % den))
                })
                .unzip()
        }
        None => {
            let sum: f64 = capacities.iter().sum();
            let (mut floors, remainders): (Vec<u64>, Vec<Remainder>) = capacities
                .iter()
                .map(|&c| {
                    let x = total as f64 * c / sum;
                    let f = x.floor().clamp(0.0, total as f64);
                    (f as u64, Remainder::Float(x - f))
                })
                .unzip();
            let mut excess = floors
                .iter()
                .map(|&f| u128::from(f))
                .sum::<u128>()
                .saturating_sub(u128::from(total));
            for f in floors.iter_mut() {
                let take = excess.min(u128::from(*f)) as u64;
                *f -= take;
                excess -= u128::from(take);
            }
            (floors, remainders)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
enum Remainder {
    Exact(u128),
    Float(f64),
}

impl Remainder {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Exact(a), Self::Exact(b)) => a.cmp(b),
            (Self::Float(a), Self::Float(b)) => a.total_cmp(b),
            _ => Ordering::Equal,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decomposes_exactly() {
        assert_eq!(decompose(1.0), (1, 0));
        assert_eq!(decompose(96.0), (3, 5));
        assert_eq!(decompose(0.75), (3, -2));
        assert_eq!(exact_weights(&[1.5, 0.25]), Some(vec![6, 1]));
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
    fn falls_back_to_floating_point_for_extreme_ratios() {
        let s = pair_share(1000, 1e-300, 1.0);
        assert_eq!(s.floor, 0);
        let t = proportional_targets(1000, &[1e-300, 1.0, 1e300], &[0, 0, 0]);
        assert_eq!(t.iter().sum::<u64>(), 1000);
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
