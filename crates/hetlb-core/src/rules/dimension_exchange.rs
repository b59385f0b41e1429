//! Dimension exchange on the hypercube: the pair rules.
//!
//! In phase `k` (`k = 0..n`, least significant dimension first) every node `u` pairs with
//! `u ^ 2^k`, and the pair splits its `s = w_low + w_high` units. With integer ("quantized")
//! loads an odd `s` cannot be split evenly, and *who keeps the odd unit* is what separates
//! the rules below. Each rule is a [`PairRule`]: given the pair's position and loads it returns
//! the low node's new load; the high node gets the rest, so the total is conserved by
//! construction and no load can become negative.
//!
//! | rule | odd unit goes to | bound on max − min after `n` phases |
//! |---|---|---|
//! | [`Dem`] | the heavier node | `n` (Rim et al. §2.1) |
//! | [`DemFixed`] | the node whose bit `k` is 0 | `n` |
//! | [`DemImproved`] | the node whose bit `k` equals bit `k+1`; last phase as `Dem` | `n/2` (Chau & Fu, Theorem 1) |
//! | [`Oem`] | whichever makes the low node's share odd | `⌈n/2⌉` (Rim et al., Theorem 1) |
//! | [`DemHetero`] | shares in proportion to capacities, rounded as `DemImproved`; last phase only when the gap per capacity exceeds 1 (Fig. 5) | `= DemImproved` for equal capacities below 2 |

use crate::allocation::{level_gap_exceeds, pair_share};
use crate::model::Capacities;
use crate::units::Units;

/// Where a pair sits: the phase's dimension, the cube's dimension and the low node's address.
///
/// The high node is `low | 1 << dimension`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PairContext {
    /// The dimension `k` being exchanged (`0..dimensions`).
    pub dimension: u32,
    /// The cube's dimension `n`.
    pub dimensions: u32,
    /// Address of the low node (bit `k` clear).
    pub low: usize,
}

impl PairContext {
    /// Address of the high node (bit `k` set).
    pub fn high(&self) -> usize {
        self.low | (1usize << self.dimension)
    }

    /// True in the last phase, `k = n − 1`.
    pub fn is_last_dimension(&self) -> bool {
        self.dimension + 1 == self.dimensions
    }

    /// Bit `b` of the low node's address.
    pub fn low_bit(&self, b: u32) -> bool {
        (self.low >> b) & 1 == 1
    }
}

/// A dimension-exchange rule: how a hypercube pair splits its units.
///
/// Implementations must return a value between 0 and `low + high` inclusive; engines give the
/// high node the rest. They are generic over the integer type so the same rule runs on `u64`
/// plans and on the `u8` lanes of the exhaustive enumerations.
pub trait PairRule: Sync {
    /// The new load of the low node, given the pair's loads before the exchange.
    ///
    /// The caller guarantees that `low + high` fits in `T`.
    fn split<T: Units>(&self, ctx: PairContext, low: T, high: T) -> T;

    /// The rule as a *halving* rule, when it is one: who keeps the odd unit in dimension
    /// `dimension` of an `dimensions`-cube, for a pair whose addresses have bit
    /// `dimension + 1` equal to `next_bit`.
    ///
    /// A halving rule gives the pair `⌊s/2⌋` and `⌈s/2⌉` and looks at the pair's address
    /// through `dimension`, `dimensions` and `next_bit` only, so a whole run of pairs can be
    /// decided with the same vector instructions ([`crate::exchange::balance_in_place`]).
    /// When `Some`, it must agree with [`PairRule::split`] (a property test checks the
    /// built-in rules). `None` (the default) for rules that need more, such as capacities.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::dimension_exchange::{DemImproved, OddUnit, PairRule};
    /// assert_eq!(DemImproved.odd_unit(0, 3, false), Some(OddUnit::Low));
    /// assert_eq!(DemImproved.odd_unit(2, 3, false), Some(OddUnit::Heavier));
    /// ```
    fn odd_unit(&self, dimension: u32, dimensions: u32, next_bit: bool) -> Option<OddUnit> {
        let _ = (dimension, dimensions, next_bit);
        None
    }
}

/// Who keeps the odd unit of a pair's sum under a halving rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OddUnit {
    /// The node with the larger load (the low node on a tie), as [`Dem`].
    Heavier,
    /// The low node (bit `k` clear), as [`DemFixed`].
    Low,
    /// The high node (bit `k` set).
    High,
    /// Whichever makes the low node's share odd, as [`Oem`].
    OddShare,
}

impl OddUnit {
    /// True when the low node keeps the odd unit of `low + high`.
    #[inline(always)]
    pub fn low_keeps<T: Units>(self, low: T, high: T) -> bool {
        match self {
            OddUnit::Heavier => low >= high,
            OddUnit::Low => true,
            OddUnit::High => false,
            OddUnit::OddShare => ((low + high) >> 1) & T::ONE == T::ZERO,
        }
    }
}

/// Splits `low + high` in two halves; the low node gets the odd unit when `low_keeps_odd`.
#[inline(always)]
pub fn halve<T: Units>(low: T, high: T, low_keeps_odd: bool) -> T {
    let sum = low + high;
    (sum >> 1) + (sum & T::from_bool(low_keeps_odd))
}

/// `dem`: Cybenko's dimension exchange (1989) for integer loads; the heavier node keeps the
/// odd unit.
///
/// This is "the original DEM" of Rim et al. (§2: `W_k ≥ W_j ⇒ W_k' = ⌈(W_k+W_j)/2⌉`)
/// and Fig. 1 of Chau & Fu.
///
/// # Bound
/// Max − min ≤ `n` after `n` phases, and this is tight (Rim, Jang & Kim 2003 §2.1, Fig. 3).
///
/// # Complexity
/// `O(1)` per pair; `O(N log N)` for a full balance.
///
/// # Example
/// ```
/// use hetlb_core::rules::dimension_exchange::{Dem, PairContext, PairRule};
/// let ctx = PairContext { dimension: 1, dimensions: 3, low: 0 };
/// // Rim, Jang & Kim 2003 §2: P0 = 7, P2 = 14 before phase 1 give 10 and 11.
/// assert_eq!(Dem.split(ctx, 7u64, 14), 10);
/// assert_eq!(Dem.split(ctx, 14u64, 7), 11);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Dem;

impl PairRule for Dem {
    #[inline(always)]
    fn split<T: Units>(&self, _ctx: PairContext, low: T, high: T) -> T {
        halve(low, high, low >= high)
    }

    fn odd_unit(&self, _dimension: u32, _dimensions: u32, _next_bit: bool) -> Option<OddUnit> {
        Some(OddUnit::Heavier)
    }
}

/// `dem-fixed`: dimension exchange in which the node whose bit `k` is 0 always keeps the odd
/// unit.
///
/// This fixed orientation is what reproduces Chau & Fu's Table 1 (labelled DEM:
/// average max difference exactly `n/2`).
///
/// # Bound
/// Max − min ≤ `n`.
///
/// # Example
/// ```
/// use hetlb_core::rules::dimension_exchange::{DemFixed, PairContext, PairRule};
/// let ctx = PairContext { dimension: 0, dimensions: 3, low: 6 };
/// assert_eq!(DemFixed.split(ctx, 4u64, 7), 6);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct DemFixed;

impl PairRule for DemFixed {
    #[inline(always)]
    fn split<T: Units>(&self, _ctx: PairContext, low: T, high: T) -> T {
        halve(low, high, true)
    }

    fn odd_unit(&self, _dimension: u32, _dimensions: u32, _next_bit: bool) -> Option<OddUnit> {
        Some(OddUnit::Low)
    }
}

/// `dem-improved`: Chau & Fu's improved DEM (§3, Fig. 2).
///
/// In dimension `k < n − 1` the odd unit goes to the node whose bit `k` equals bit `k + 1` of
/// the pair's addresses (both nodes share bit `k + 1`), so the odd units of a phase are spread
/// evenly over the two subcubes that meet in the next phase. The last dimension is plain
/// [`Dem`]. Fig. 2's pseudo-code is ambiguous about which bit `u_{k+1}` is; this reading is the
/// one that reproduces the paper's Table 2 (see `hetlb reproduce chau-table2`).
///
/// # Bound
/// Max − min ≤ `n/2` (Chau & Fu 2003, Theorem 1); in the paper's simulations ≤ 2 for `n ≤ 12`.
///
/// # Example
/// ```
/// use hetlb_core::rules::dimension_exchange::{DemImproved, PairContext, PairRule};
/// // bit 1 of the pair (0, 1) is 0: the low node (bit 0 = 0) keeps the odd unit
/// let ctx = PairContext { dimension: 0, dimensions: 3, low: 0 };
/// assert_eq!(DemImproved.split(ctx, 0u64, 5), 3);
/// // bit 1 of the pair (2, 3) is 1: the high node keeps it
/// let ctx = PairContext { dimension: 0, dimensions: 3, low: 2 };
/// assert_eq!(DemImproved.split(ctx, 5u64, 0), 2);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct DemImproved;

impl PairRule for DemImproved {
    #[inline(always)]
    fn split<T: Units>(&self, ctx: PairContext, low: T, high: T) -> T {
        let keeps = if ctx.is_last_dimension() {
            low >= high
        } else {
            !ctx.low_bit(ctx.dimension + 1)
        };
        halve(low, high, keeps)
    }

    fn odd_unit(&self, dimension: u32, dimensions: u32, next_bit: bool) -> Option<OddUnit> {
        Some(if dimension + 1 == dimensions {
            OddUnit::Heavier
        } else if next_bit {
            OddUnit::High
        } else {
            OddUnit::Low
        })
    }
}

/// `oem`: Rim, Jang & Kim's odd–even method (§3).
///
/// When the pair's sum is `2m + 1`, the low node (bit `k` = 0) gets `m` if `m` is odd and
/// `m + 1` if `m` is even — that is, the low node always gets the *odd* one of the two
/// halves and the high node the even one — so loads of the same parity are routed to the
/// same subcube and meet again in the next phase, where their even sum splits exactly.
///
/// # Bound
/// Max − min ≤ `⌈n/2⌉` (Rim, Jang & Kim 2003, Theorem 1), and tight (§3.1, Fig. 6).
///
/// # Example
/// ```
/// use hetlb_core::rules::dimension_exchange::{Oem, PairContext, PairRule};
/// // Rim, Jang & Kim 2003 §3: P6 = 4 and P7 = 7 become 5 and 6.
/// let ctx = PairContext { dimension: 0, dimensions: 3, low: 6 };
/// assert_eq!(Oem.split(ctx, 4u64, 7), 5);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Oem;

impl PairRule for Oem {
    #[inline(always)]
    fn split<T: Units>(&self, _ctx: PairContext, low: T, high: T) -> T {
        let sum = low + high;
        // m = ⌊s/2⌋; the low node takes m + 1 exactly when m is even (so its share is odd).
        halve(low, high, (sum >> 1) & T::ONE == T::ZERO)
    }

    fn odd_unit(&self, _dimension: u32, _dimensions: u32, _next_bit: bool) -> Option<OddUnit> {
        Some(OddUnit::OddShare)
    }
}

/// `dem-hetero`: Chau & Fu's revised improved DEM for clusters of different sizes and speeds
/// (Chau & Fu 2003, §4, Fig. 5), as the figure writes it.
///
/// Node `u` holds `w_u` tasks on `p_u` processing units (processors × speed: the capacity).
/// A pair's ideal split gives the low node `share = (w_low + w_high)·p_low/(p_low + p_high)`;
/// shares are computed exactly (see [`crate::allocation`]).
///
/// * **Dimensions `k < n − 1`** (the figure's `if k ≠ n` branch, read as for
///   [`DemImproved`]): whenever the per-unit loads differ, the pair splits; when the share is
///   not an integer the node whose bit `k` equals bit `k + 1` takes it rounded up.
/// * **The last dimension** (the figure's `else` branch): tasks move only when the gap per
///   processing unit `|w_u/p_u − w_v/p_v|` exceeds 1 (compared exactly); the heavier node then
///   sends `⌊w_u − share_u⌋` tasks, so it keeps its share rounded up. A gap of at most one task
///   per unit is left as it is.
///
/// With unit capacities the gap is the difference in tasks, and a difference of 1 moves
/// nothing under [`Dem`] either: the rule is then exactly [`DemImproved`]. The identity holds
/// for any equal capacities `c < 2`. It breaks for equal capacities `c ≥ 2`: in the last
/// dimension a pair whose loads differ by `2 ≤ d ≤ c` tasks stays unbalanced, because the
/// figure's threshold is one task *per processing unit*, while [`DemImproved`] moves
/// `⌊d/2⌋`. Earlier dimensions are identical.
///
/// Chau & Fu's example (640 tasks on a 64-processor cluster, 960 on a 32-processor one) moves
/// 427 tasks when the orientation gives the larger cluster the rounded-up share, 426 when it
/// does not; the paper's text rounds 426.67 to the nearest, 427.
///
/// # Bound
/// Per processing unit: none stated in the paper beyond its claim of "at most one more than
/// the optimal solution" (Chau & Fu 2003 §5), which `hetlb reproduce chau-hetero` measures.
///
/// # Complexity
/// `O(1)` per pair for whole capacities.
///
/// # Example
/// ```
/// use hetlb_core::model::Capacities;
/// use hetlb_core::rules::dimension_exchange::{DemHetero, PairContext, PairRule};
/// let caps = Capacities::new(vec![64.0, 32.0, 64.0, 32.0]).unwrap();
/// let rule = DemHetero::new(&caps);
/// let ctx = PairContext { dimension: 0, dimensions: 2, low: 0 };
/// assert_eq!(rule.split(ctx, 640u64, 960), 1067); // 960 − 533 = 427 tasks move
/// // Last dimension: 66 and 30 tasks on 32 processors each differ by 1.125 per processor:
/// // they split; 64 and 32 differ by exactly 1 per processor: nothing moves.
/// let caps = Capacities::new(vec![32.0, 32.0]).unwrap();
/// let rule = DemHetero::new(&caps);
/// let last = PairContext { dimension: 0, dimensions: 1, low: 0 };
/// assert_eq!(rule.split(last, 66u64, 30), 48);
/// assert_eq!(rule.split(last, 64u64, 32), 64);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct DemHetero<'a> {
    capacities: &'a Capacities,
}

impl<'a> DemHetero<'a> {
    /// The rule for these capacities (one per node of the cube).
    pub fn new(capacities: &'a Capacities) -> Self {
        Self { capacities }
    }
}

impl PairRule for DemHetero<'_> {
    fn split<T: Units>(&self, ctx: PairContext, low: T, high: T) -> T {
        let (c_low, c_high) = (
            self.capacities.get(ctx.low),
            self.capacities.get(ctx.high()),
        );
        let (w_low, w_high) = (low.to_u64(), high.to_u64());
        let share = pair_share(w_low + w_high, c_low, c_high);
        if ctx.is_last_dimension() {
            // Fig. 5's `else` branch: only a gap of more than one task per unit moves tasks,
            // and the heavier node sends ⌊excess⌋, keeping its share rounded up.
            return if level_gap_exceeds(w_low, c_low, w_high, c_high, 1) {
                T::from_u64(share.floor + u64::from(!share.exact))
            } else if level_gap_exceeds(w_high, c_high, w_low, c_low, 1) {
                T::from_u64(share.floor)
            } else {
                low
            };
        }
        if share.exact {
            return T::from_u64(share.floor);
        }
        let low_rounds_up = !ctx.low_bit(ctx.dimension + 1);
        T::from_u64(share.floor + u64::from(low_rounds_up))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(dimension: u32, dimensions: u32, low: usize) -> PairContext {
        PairContext {
            dimension,
            dimensions,
            low,
        }
    }

    #[test]
    fn oem_gives_the_low_node_the_odd_half() {
        for s in 0u64..40 {
            let low = Oem.split(ctx(0, 2, 0), s, 0);
            assert!(low == s / 2 || low == s.div_ceil(2));
            if s % 2 == 1 {
                assert_eq!(low % 2, 1, "s = {s}");
            }
        }
    }

    #[test]
    fn hetero_with_equal_capacities_below_two_is_improved_dem() {
        for c in [0.25, 1.0, 1.5, 1.999] {
            let caps = Capacities::new(vec![c; 8]).unwrap();
            let rule = DemHetero::new(&caps);
            for k in 0..3 {
                for low in (0..8).filter(|u| (u >> k) & 1 == 0) {
                    for a in 0u64..12 {
                        for b in 0u64..12 {
                            let x = ctx(k, 3, low);
                            assert_eq!(rule.split(x, a, b), DemImproved.split(x, a, b), "c = {c}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn last_dimension_moves_only_past_one_task_per_unit() {
        // equal capacities c ≥ 2: a difference of d ≤ c tasks stays in the last dimension
        for c in [2u64, 3, 8] {
            let caps = Capacities::new(vec![c as f64; 4]).unwrap();
            let rule = DemHetero::new(&caps);
            let last = ctx(1, 2, 0);
            for a in 0u64..30 {
                for b in 0u64..30 {
                    let got = rule.split(last, a, b);
                    if a.abs_diff(b) <= c {
                        assert_eq!(got, a, "c = {c}, {a} {b}");
                    } else {
                        assert_eq!(got, Dem.split(last, a, b), "c = {c}, {a} {b}");
                    }
                    // earlier dimensions are unchanged
                    let first = ctx(0, 2, 0);
                    assert_eq!(rule.split(first, a, b), DemImproved.split(first, a, b));
                }
            }
        }
        // different capacities: 10 per unit against 9 per unit does not move
        let caps = Capacities::new(vec![4.0, 2.0]).unwrap();
        let rule = DemHetero::new(&caps);
        assert_eq!(rule.split(ctx(0, 1, 0), 40u64, 18), 40);
        // 10 against 8.5 per unit moves: the exact split, 38 and 19
        assert_eq!(rule.split(ctx(0, 1, 0), 40u64, 17), 38);
        // 10 against 8: the heavier keeps ⌈37.33⌉
        assert_eq!(rule.split(ctx(0, 1, 0), 40u64, 16), 38);
    }

    #[test]
    fn chau_fu_section_4_example() {
        let caps = Capacities::new(vec![64.0, 32.0, 64.0, 32.0]).unwrap();
        let rule = DemHetero::new(&caps);
        // pair (0,1): bit 1 is 0, so the low node (the 64-processor cluster) rounds up.
        assert_eq!(960 - (1600 - rule.split(ctx(0, 2, 0), 640u64, 960)), 427);
        // pair (2,3): bit 1 is 1, so the high node rounds up: 426 move.
        assert_eq!(960 - (1600 - rule.split(ctx(0, 2, 2), 640u64, 960)), 426);
        // alone in a 1-cube the last-dimension rule lets the heavier (per capacity) keep it.
        let caps = Capacities::new(vec![64.0, 32.0]).unwrap();
        let rule = DemHetero::new(&caps);
        assert_eq!(rule.split(ctx(0, 1, 0), 640u64, 960), 1066);
    }

    #[test]
    fn narrow_and_wide_units_agree() {
        for a in 0u8..100 {
            for b in 0u8..100 {
                for c in [ctx(0, 3, 0), ctx(0, 3, 2), ctx(2, 3, 1)] {
                    let wide = |x: u8| u64::from(x);
                    assert_eq!(
                        u64::from(Oem.split(c, a, b)),
                        Oem.split(c, wide(a), wide(b))
                    );
                    assert_eq!(
                        u64::from(Dem.split(c, a, b)),
                        Dem.split(c, wide(a), wide(b))
                    );
                    assert_eq!(
                        u64::from(DemImproved.split(c, a, b)),
                        DemImproved.split(c, wide(a), wide(b))
                    );
                }
            }
        }
    }
}
