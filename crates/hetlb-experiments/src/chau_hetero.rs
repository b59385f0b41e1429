//! Chau & Fu's claim for heterogeneous clusters, measured (*Load Balancing Between
//! Heterogenous Computing Clusters*, §§4–5).
//!
//! The paper ends (§5): "the maximum load difference between any two computing clusters can
//! be at most one more than the optimal solution". It gives no experiment for clusters of
//! different sizes and speeds. Here every trial draws an `n`-cube of clusters — sizes
//! (Sharcnet's from §1 half of the time, otherwise uniform on `1..=256` processors), relative
//! speeds uniform on `1..=4`, loads uniform on `0..=max_load` — balances it with `dem-hetero`
//! (Fig. 5), and compares the largest difference of load per processing unit, `max w/p − min
//! w/p` with `p` = processors × speed, with the smallest difference any integer allocation of
//! the same total achieves ([`optimal_range`]). All quantities are exact fractions.
//!
//! The same loads on equal clusters (`p = 1`, where `dem-hetero` is `dem-improved`) are the
//! control: the setting in which the claim was made.

use crate::seed::stream;
use hetlb_core::Capacities;
use hetlb_core::exchange::balance_in_place;
use hetlb_core::rules::dimension_exchange::DemHetero;
use rand::RngExt;
use rayon::prelude::*;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::RangeInclusive;
use thiserror::Error;

/// Cluster sizes at Sharcnet in 2003 (Chau & Fu §1): McMaster 96, Guelph 108, Western 48, 144 and
/// 64, Windsor and Laurier 8 each.
pub const SHARCNET_SIZES: [u64; 7] = [96, 108, 48, 144, 64, 8, 8];
/// The largest random cluster size (processors).
pub const MAX_SIZE: u64 = 256;
/// The largest relative speed of a processor.
pub const MAX_SPEED: u64 = 4;

/// A non-negative fraction `num / den`, compared exactly.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Fraction {
    /// Numerator.
    pub num: u128,
    /// Denominator (positive).
    pub den: u128,
}

impl Fraction {
    /// `num / den`.
    pub fn new(num: u128, den: u128) -> Self {
        Self { num, den }
    }

    /// Zero.
    pub const ZERO: Fraction = Fraction { num: 0, den: 1 };

    /// As a float.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// `self − other`, which must not be negative.
    ///
    /// # Panics
    /// When `other > self` (a bug in the caller).
    pub fn minus(self, other: Fraction) -> Fraction {
        let a = self.num * other.den;
        let b = other.num * self.den;
        assert!(a >= b, "negative difference");
        Fraction::new(a - b, self.den * other.den)
    }
}

impl PartialEq for Fraction {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Fraction {}

impl PartialOrd for Fraction {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Fraction {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }
}

/// `max_i w_i/c_i − min_i w_i/c_i`, exactly.
///
/// # Example
/// ```
/// use hetlb_experiments::chau_hetero::{level_range, Fraction};
/// assert_eq!(level_range(&[10, 30], &[2, 4]), Fraction::new(5, 2)); // 7.5 − 5
/// ```
pub fn level_range(loads: &[u64], capacities: &[u64]) -> Fraction {
    let level = |i: usize| Fraction::new(u128::from(loads[i]), u128::from(capacities[i]));
    let (mut lo, mut hi) = (level(0), level(0));
    for i in 1..loads.len() {
        let x = level(i);
        lo = lo.min(x);
        hi = hi.max(x);
    }
    hi.minus(lo)
}

/// A node's level if it held `load` units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Keyed {
    level: Fraction,
    node: usize,
}

impl PartialOrd for Keyed {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Keyed {
    fn cmp(&self, other: &Self) -> Ordering {
        self.level
            .cmp(&other.level)
            .then(other.node.cmp(&self.node))
    }
}

fn frac(load: u64, capacity: u64) -> Fraction {
    Fraction::new(u128::from(load), u128::from(capacity))
}

/// The smallest `max_i w_i/c_i − min_i w_i/c_i` over all integer allocations `w` of `total`
/// units to nodes of whole capacities `c` (positive).
///
/// # Method
/// Write `T*` for the smallest possible largest level (the optimal makespan: the smallest `U`
/// with `Σ⌊U·c_i⌋ ≥ total`). For a lower level `L`, an allocation with every level in
/// `[L, U]` exists exactly when `Σ⌈L·c_i⌉ ≤ total` and `U ≥ max(T*, A(L))` with
/// `A(L) = max_i ⌈L·c_i⌉/c_i`. So the answer is `min_L max(T*, A(L)) − L`; `A` is a step
/// function that changes only at the points `k/c_i`, and on each step the difference is
/// smallest at the step's right end. Only nodes with `⌈L·c_i⌉/c_i > T*` lift the top above
/// `T*`, and a node that falls to `T*` never rises again as `L` falls; so the points of
/// those nodes alone are visited, from the largest feasible `L` downwards (a heap merges
/// them), until `T* − L` reaches the best found.
///
/// # Complexity
/// `O(N log N)`: each node is visited at a few points before it drops out.
///
/// # Example
/// ```
/// use hetlb_experiments::chau_hetero::{optimal_range, Fraction};
/// // 10 units on capacities 1 and 4: 2 and 8 give levels 2 and 2.
/// assert_eq!(optimal_range(10, &[1, 4]), Fraction::ZERO);
/// // 3 units on two equal nodes: 2 and 1.
/// assert_eq!(optimal_range(3, &[1, 1]), Fraction::new(1, 1));
/// // 1 unit on capacities 2 and 3: levels 0 and 1/3.
/// assert_eq!(optimal_range(1, &[2, 3]), Fraction::new(1, 3));
/// ```
pub fn optimal_range(total: u64, capacities: &[u64]) -> Fraction {
    if capacities.len() <= 1 {
        return Fraction::ZERO;
    }
    let t_star = lowest_top(total, capacities);
    let l_max = highest_bottom(total, capacities);
    narrowest_below(capacities, t_star, l_max)
}

/// `T*`, the smallest possible largest level: proportional floors, then the remaining units
/// to the lowest next level.
fn lowest_top(total: u64, capacities: &[u64]) -> Fraction {
    let n = capacities.len();
    let sum_c: u128 = capacities.iter().map(|&c| u128::from(c)).sum();
    let w = u128::from(total);
    let mut loads: Vec<u64> = capacities
        .iter()
        .map(|&c| (w * u128::from(c) / sum_c) as u64)
        .collect();
    let mut left = total - loads.iter().sum::<u64>();
    let mut heap: BinaryHeap<std::cmp::Reverse<Keyed>> = (0..n)
        .map(|i| {
            std::cmp::Reverse(Keyed {
                level: frac(loads[i] + 1, capacities[i]),
                node: i,
            })
        })
        .collect();
    while left > 0 {
        let std::cmp::Reverse(k) = heap.pop().expect("one entry per node");
        loads[k.node] += 1;
        left -= 1;
        heap.push(std::cmp::Reverse(Keyed {
            level: frac(loads[k.node] + 1, capacities[k.node]),
            node: k.node,
        }));
    }
    (0..n)
        .map(|i| frac(loads[i], capacities[i]))
        .max()
        .unwrap_or(Fraction::ZERO)
}

/// `L_max`, the largest possible smallest level: proportional ceilings, then the surplus
/// taken from the highest level after one unit less.
fn highest_bottom(total: u64, capacities: &[u64]) -> Fraction {
    let n = capacities.len();
    let sum_c: u128 = capacities.iter().map(|&c| u128::from(c)).sum();
    let w = u128::from(total);
    let mut loads: Vec<u64> = capacities
        .iter()
        .map(|&c| (w * u128::from(c)).div_ceil(sum_c) as u64)
        .collect();
    let mut surplus = loads.iter().sum::<u64>() - total;
    let mut heap: BinaryHeap<Keyed> = (0..n)
        .filter(|&i| loads[i] > 0)
        .map(|i| Keyed {
            level: frac(loads[i] - 1, capacities[i]),
            node: i,
        })
        .collect();
    while surplus > 0 {
        let k = heap.pop().expect("a node with units");
        loads[k.node] -= 1;
        surplus -= 1;
        if loads[k.node] > 0 {
            heap.push(Keyed {
                level: frac(loads[k.node] - 1, capacities[k.node]),
                node: k.node,
            });
        }
    }
    (0..n)
        .map(|i| frac(loads[i], capacities[i]))
        .min()
        .unwrap_or(Fraction::ZERO)
}

/// `min_L max(T*, A(L)) − L` over the lower levels `L ≤ L_max` (see [`optimal_range`]).
fn narrowest_below(capacities: &[u64], t_star: Fraction, l_max: Fraction) -> Fraction {
    let n = capacities.len();
    // k_i = ⌈L·c_i⌉ at L = L_max. Only nodes with k_i/c_i > T* can lift the top above T*,
    // and as L falls k_i/c_i only falls: a node at or below T* stays there. Those above T*
    // are active; each has a point or two to visit before it drops out.
    let mut k: Vec<u64> = capacities
        .iter()
        .map(|&c| (l_max.num * u128::from(c)).div_ceil(l_max.den) as u64)
        .collect();
    let above = |i: usize, k: u64| frac(k, capacities[i]) > t_star;
    // A(L) over the active nodes (entries whose k is stale are skipped).
    let mut upper: BinaryHeap<(Keyed, u64)> = BinaryHeap::new();
    // The next point below L of every active node: (k_i − 1)/c_i.
    let mut points: BinaryHeap<Keyed> = BinaryHeap::new();
    let activate =
        |i: usize, k: u64, upper: &mut BinaryHeap<(Keyed, u64)>, points: &mut BinaryHeap<Keyed>| {
            upper.push((
                Keyed {
                    level: frac(k, capacities[i]),
                    node: i,
                },
                k,
            ));
            points.push(Keyed {
                level: frac(k - 1, capacities[i]),
                node: i,
            });
        };
    for i in (0..n).filter(|&i| above(i, k[i])) {
        activate(i, k[i], &mut upper, &mut points);
    }
    let top = |upper: &mut BinaryHeap<(Keyed, u64)>, k: &[u64]| loop {
        match upper.peek() {
            None => return t_star,
            Some(&(entry, at)) if at == k[entry.node] => return entry.level.max(t_star),
            Some(_) => {
                upper.pop();
            }
        }
    };
    let mut best = top(&mut upper, &k).minus(l_max);
    while let Some(&next) = points.peek() {
        let l = next.level;
        // every L ≤ L_max lies at or below the mean level, so at or below T*
        if t_star.minus(l) >= best {
            break;
        }
        while points.peek().is_some_and(|p| p.level == l) {
            let i = points.pop().expect("peeked").node;
            k[i] -= 1;
            if above(i, k[i]) {
                activate(i, k[i], &mut upper, &mut points);
            }
            // otherwise the node dropped out: its entry in `upper` is stale from now on
        }
        best = best.min(top(&mut upper, &k).minus(l));
    }
    best
}

/// One trial's cube: capacities `p = processors × speed` and loads.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Clusters {
    /// Processors of each cluster.
    pub sizes: Vec<u64>,
    /// Relative speed of each cluster's processors.
    pub speeds: Vec<u64>,
    /// `sizes[i] × speeds[i]`.
    pub capacities: Vec<u64>,
    /// Tasks of each cluster before balancing.
    pub loads: Vec<u64>,
}

/// Draws trial `trial` of dimension `n` (seeded per `(n, trial)`).
///
/// # Example
/// ```
/// use hetlb_experiments::chau_hetero::draw;
/// let a = draw(3, 7, 1, 1000);
/// assert_eq!(a.loads.len(), 8);
/// assert_eq!(a, draw(3, 7, 1, 1000));
/// assert!(a.capacities.iter().zip(&a.sizes).zip(&a.speeds).all(|((c, s), v)| *c == s * v));
/// ```
pub fn draw(n: u32, trial: u64, seed: u64, max_load: u64) -> Clusters {
    let mut rng = stream(seed, 0xC4A0 + u64::from(n), trial);
    let nodes = 1usize << n;
    let mut c = Clusters {
        sizes: Vec::with_capacity(nodes),
        speeds: Vec::with_capacity(nodes),
        capacities: Vec::with_capacity(nodes),
        loads: Vec::with_capacity(nodes),
    };
    for _ in 0..nodes {
        let size = if rng.random::<bool>() {
            SHARCNET_SIZES[rng.random_range(0..SHARCNET_SIZES.len())]
        } else {
            rng.random_range(1..=MAX_SIZE)
        };
        let speed = rng.random_range(1..=MAX_SPEED);
        c.sizes.push(size);
        c.speeds.push(speed);
        c.capacities.push(size * speed);
        c.loads.push(rng.random_range(0..=max_load));
    }
    c
}

/// How a trial's capacities are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Each cluster its own size and speed ([`draw`]).
    Random,
    /// Capacities of product form, `c(u) = Π_k f_k(bit k of u)`, with `f_k(0)` and `f_k(1)`
    /// uniform on `1..=4` for every dimension `k` ([`draw_product`]).
    ProductForm,
}

impl Kind {
    /// The name in tables.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Random => "random",
            Kind::ProductForm => "product form",
        }
    }
}

/// Draws trial `trial` of dimension `n` with capacities of product form: for every dimension
/// `k` two factors `f_k(0), f_k(1)` uniform on `1..=4`, and `c(u) = Π_k f_k(bit k of u)`;
/// loads uniform on `0..=max_load` (seeded per `(n, trial)`, apart from [`draw`]'s).
///
/// Equal clusters are of this form (every factor 1), and so is the paper's example of
/// clusters of 64 and 32 processors alternating (`f_0 = (64, 32)`, the others 1).
///
/// # Example
/// ```
/// use hetlb_experiments::chau_hetero::{draw_product, is_product_form};
/// let c = draw_product(4, 3, 1, 1000);
/// assert!(is_product_form(&c.capacities));
/// assert_eq!(c, draw_product(4, 3, 1, 1000));
/// ```
pub fn draw_product(n: u32, trial: u64, seed: u64, max_load: u64) -> Clusters {
    let mut rng = stream(seed, 0xC4B0 + u64::from(n), trial);
    let factors: Vec<[u64; 2]> = (0..n)
        .map(|_| {
            [
                rng.random_range(1..=MAX_SPEED),
                rng.random_range(1..=MAX_SPEED),
            ]
        })
        .collect();
    let nodes = 1usize << n;
    let capacities: Vec<u64> = (0..nodes)
        .map(|u| {
            factors
                .iter()
                .enumerate()
                .map(|(k, f)| f[(u >> k) & 1])
                .product()
        })
        .collect();
    Clusters {
        sizes: capacities.clone(),
        speeds: vec![1; nodes],
        loads: (0..nodes).map(|_| rng.random_range(0..=max_load)).collect(),
        capacities,
    }
}

/// Whether capacities on a hypercube (one per node, a power of two of them) are of product
/// form, `c(u) = Π_k f_k(bit k of u)`: in every dimension `k`, every pair `u`, `u + 2^k`
/// (bit `k` of `u` clear) has the same ratio `c(u) : c(u + 2^k)`. Exact, in integers.
///
/// Under this condition every pair a dimension exchange joins splits its subcubes in the
/// same proportion, so the subcubes end level, and `dem-hetero` stays within about one of
/// the optimum whatever the load scale (`hetlb reproduce chau-hetero` measures it).
///
/// # Example
/// ```
/// use hetlb_experiments::chau_hetero::is_product_form;
/// assert!(is_product_form(&[64, 32, 64, 32])); // the paper's clusters
/// assert!(is_product_form(&[1, 1, 1, 1]));
/// assert!(is_product_form(&[2, 6, 8, 24])); // (2, 6) × (1, 4)
/// assert!(!is_product_form(&[1, 2, 3, 4]));
/// ```
pub fn is_product_form(capacities: &[u64]) -> bool {
    let n = capacities.len();
    if !n.is_power_of_two() {
        return false;
    }
    let c = |i: usize| u128::from(capacities[i]);
    (0..n.trailing_zeros()).all(|k| {
        let bit = 1usize << k;
        (0..n)
            .filter(|u| u & bit == 0)
            .all(|u| c(u) * c(bit) == c(u | bit) * c(0))
    })
}

/// The share of trials within the claim at one load scale, for one kind of clusters.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ScaleRow {
    /// Cube dimension.
    pub n: u32,
    /// Loads uniform on `0..=max_load`.
    pub max_load: u64,
    /// How the capacities were drawn.
    pub kind: Kind,
    /// Trials.
    pub trials: u64,
    /// Trials whose excess over the optimum is at most 1.
    pub within_claim: u64,
    /// Mean excess divided by the mean load per unit.
    pub mean_relative_excess: f64,
}

/// Runs `trials` trials of each kind for every dimension in `dims` and every load scale in
/// `scales` (loads uniform on `0..=scale`); `progress` is called per trial.
///
/// # Errors
/// As [`run`].
pub fn pass_rates(
    dims: RangeInclusive<u32>,
    scales: &[u64],
    trials: u64,
    seed: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<ScaleRow>, ChauHeteroError> {
    check(&dims, trials, scales.iter().copied().max().unwrap_or(0))?;
    let mut rows = Vec::new();
    for n in dims {
        for &max_load in scales {
            for kind in [Kind::Random, Kind::ProductForm] {
                let outcomes: Vec<Outcome> = (0..trials)
                    .into_par_iter()
                    .map(|t| {
                        let c = match kind {
                            Kind::Random => draw(n, t, seed, max_load),
                            Kind::ProductForm => draw_product(n, t, seed, max_load),
                        };
                        progress(1);
                        measure(&c)
                    })
                    .collect();
                let one = Fraction::new(1, 1);
                rows.push(ScaleRow {
                    n,
                    max_load,
                    kind,
                    trials,
                    within_claim: outcomes.iter().filter(|o| o.excess() <= one).count() as u64,
                    mean_relative_excess: outcomes
                        .iter()
                        .map(|o| {
                            if o.mean_level > 0.0 {
                                o.excess().to_f64() / o.mean_level
                            } else {
                                0.0
                            }
                        })
                        .sum::<f64>()
                        / trials as f64,
                });
            }
        }
    }
    Ok(rows)
}

fn check(dims: &RangeInclusive<u32>, trials: u64, max_load: u64) -> Result<(), ChauHeteroError> {
    if trials == 0 {
        return Err(ChauHeteroError::NoTrials);
    }
    if let Some(&n) = [*dims.start(), *dims.end()]
        .iter()
        .find(|&&n| !(1..=16).contains(&n))
    {
        return Err(ChauHeteroError::Dimension(n));
    }
    if max_load > 1 << 40 {
        return Err(ChauHeteroError::MaxLoad(max_load));
    }
    Ok(())
}

/// What one trial measured.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Outcome {
    /// `dem-hetero`'s max − min of load per unit of capacity.
    pub dem_hetero: Fraction,
    /// The smallest possible.
    pub optimal: Fraction,
    /// `total / Σc`, the mean load per unit.
    pub mean_level: f64,
    /// The same loads on equal clusters: `dem-improved`'s max − min.
    pub equal_dem: u64,
    /// … and the optimal one (0 or 1).
    pub equal_optimal: u64,
}

impl Outcome {
    /// `dem_hetero − optimal`.
    pub fn excess(&self) -> Fraction {
        self.dem_hetero.minus(self.optimal)
    }
}

/// Runs one trial.
pub fn measure(c: &Clusters) -> Outcome {
    let caps = Capacities::new(c.capacities.iter().map(|&x| x as f64).collect())
        .expect("positive whole capacities");
    let mut loads = c.loads.clone();
    balance_in_place(&DemHetero::new(&caps), &mut loads).expect("a power of two");
    let total: u64 = c.loads.iter().sum();
    let sum_c: u64 = c.capacities.iter().sum();
    let mut equal = c.loads.clone();
    balance_in_place(
        &DemHetero::new(&Capacities::uniform(equal.len())),
        &mut equal,
    )
    .expect("a power of two");
    let (lo, hi) = (
        equal.iter().min().copied().unwrap_or(0),
        equal.iter().max().copied().unwrap_or(0),
    );
    Outcome {
        dem_hetero: level_range(&loads, &c.capacities),
        optimal: optimal_range(total, &c.capacities),
        mean_level: total as f64 / sum_c as f64,
        equal_dem: hi - lo,
        equal_optimal: u64::from(!total.is_multiple_of(c.loads.len() as u64)),
    }
}

/// The excess classes of the histogram: `(label, upper bound)`; a trial falls in the first
/// class whose bound its excess does not exceed.
pub const CLASSES: [(&str, f64); 8] = [
    ("0", 0.0),
    ("(0, 0.5]", 0.5),
    ("(0.5, 1]", 1.0),
    ("(1, 2]", 2.0),
    ("(2, 10]", 10.0),
    ("(10, 100]", 100.0),
    ("(100, 1000]", 1000.0),
    ("> 1000", f64::INFINITY),
];

/// The class of an excess (exact at the bounds 0, 1 and 2, which are whole numbers).
pub fn class_of(excess: Fraction) -> usize {
    CLASSES
        .iter()
        .position(|&(_, bound)| {
            if bound.is_infinite() {
                return true;
            }
            let b = bound as u128;
            if bound.fract() == 0.0 {
                excess.num <= b * excess.den
            } else {
                excess.to_f64() <= bound
            }
        })
        .unwrap_or(CLASSES.len() - 1)
}

/// The worst trial of a dimension.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Worst {
    /// The trial's index (with the seed and `n`, enough to draw it again).
    pub trial: u64,
    /// `dem-hetero`'s range minus the optimal one.
    pub excess: f64,
    /// `dem-hetero`'s range.
    pub dem_hetero: f64,
    /// The optimal range.
    pub optimal: f64,
    /// The mean load per unit.
    pub mean_level: f64,
    /// The clusters of the trial.
    pub clusters: Clusters,
}

/// One dimension's results.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Row {
    /// Cube dimension: `2^n` clusters.
    pub n: u32,
    /// Trials.
    pub trials: u64,
    /// Mean `dem-hetero` range (load per unit).
    pub mean_dem_hetero: f64,
    /// Mean optimal range.
    pub mean_optimal: f64,
    /// Mean excess.
    pub mean_excess: f64,
    /// Mean excess divided by the mean load per unit.
    pub mean_relative_excess: f64,
    /// Trials per excess class ([`CLASSES`]).
    pub classes: Vec<u64>,
    /// Trials whose excess is at most 1 (the claim).
    pub within_claim: u64,
    /// Equal clusters: trials whose excess (`dem-improved` − optimal) is at most 1.
    pub equal_within_claim: u64,
    /// Equal clusters: the largest excess.
    pub equal_worst_excess: u64,
    /// The worst trial.
    pub worst: Worst,
}

/// A configuration the experiment cannot run.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ChauHeteroError {
    /// Zero trials.
    #[error("the number of trials must be at least 1")]
    NoTrials,
    /// Zero trials per cell of the pass-rate table.
    #[error("the number of trials per load scale must be at least 1")]
    NoScaleTrials,
    /// A load scale above 2^40.
    #[error("{0} is too large (at most 2^40)")]
    Scale(u64),
    /// A dimension outside `1..=16`.
    #[error("dimension {0} is out of range: 1 to 16")]
    Dimension(u32),
    /// Totals that could overflow.
    #[error("the maximum load {0} is too large: at most 2^40")]
    MaxLoad(u64),
}

/// Runs `trials` trials for every dimension in `dims`; `progress` is called with the number of
/// trials just finished. Deterministic for a seed whatever the thread count.
///
/// # Errors
/// [`ChauHeteroError`] for zero trials, a dimension outside `1..=16` or a maximum load above
/// 2^40.
pub fn run(
    dims: RangeInclusive<u32>,
    trials: u64,
    seed: u64,
    max_load: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<Row>, ChauHeteroError> {
    check(&dims, trials, max_load)?;
    Ok(dims
        .map(|n| {
            let outcomes: Vec<(u64, Outcome)> = (0..trials)
                .into_par_iter()
                .map(|t| {
                    let o = measure(&draw(n, t, seed, max_load));
                    progress(1);
                    (t, o)
                })
                .collect();
            summarise(n, seed, max_load, &outcomes)
        })
        .collect())
}

fn summarise(n: u32, seed: u64, max_load: u64, outcomes: &[(u64, Outcome)]) -> Row {
    let count = outcomes.len() as f64;
    let mean =
        |f: &dyn Fn(&Outcome) -> f64| outcomes.iter().map(|(_, o)| f(o)).sum::<f64>() / count;
    let mut classes = vec![0u64; CLASSES.len()];
    for (_, o) in outcomes {
        classes[class_of(o.excess())] += 1;
    }
    let one = Fraction::new(1, 1);
    let (worst_trial, worst) = outcomes
        .iter()
        .max_by(|a, b| a.1.excess().cmp(&b.1.excess()).then(b.0.cmp(&a.0)))
        .copied()
        .expect("at least one trial");
    Row {
        n,
        trials: outcomes.len() as u64,
        mean_dem_hetero: mean(&|o| o.dem_hetero.to_f64()),
        mean_optimal: mean(&|o| o.optimal.to_f64()),
        mean_excess: mean(&|o| o.excess().to_f64()),
        classes,
        mean_relative_excess: mean(&|o| {
            if o.mean_level > 0.0 {
                o.excess().to_f64() / o.mean_level
            } else {
                0.0
            }
        }),
        within_claim: outcomes.iter().filter(|(_, o)| o.excess() <= one).count() as u64,
        equal_within_claim: outcomes
            .iter()
            .filter(|(_, o)| o.equal_dem <= o.equal_optimal + 1)
            .count() as u64,
        equal_worst_excess: outcomes
            .iter()
            .map(|(_, o)| o.equal_dem - o.equal_optimal)
            .max()
            .unwrap_or(0),
        worst: Worst {
            trial: worst_trial,
            excess: worst.excess().to_f64(),
            dem_hetero: worst.dem_hetero.to_f64(),
            optimal: worst.optimal.to_f64(),
            mean_level: worst.mean_level,
            clusters: draw(n, worst_trial, seed, max_load),
        },
    }
}

/// When Chau & Fu's claim holds, stated with the measurement.
pub const CONDITION: &str = "The claim holds when the capacities are of product form, c(u) = \
    Π_k f_k(bit k of u): in every dimension each pair the exchange joins then splits its \
    subcubes in the same proportion, so the subcubes end level. Equal clusters, and the \
    paper's 64/32 example, are of that form. Capacities drawn cluster by cluster are not: the \
    subcubes a pair joins do not end level, and the excess grows with the load, so an \
    absolute bound of one task holds only at small loads.";

impl Worst {
    /// The difference of load per unit of capacity before balancing, `max w/p − min w/p`
    /// (in floating point).
    pub fn initial_spread(&self) -> f64 {
        let c = &self.clusters;
        let levels: Vec<f64> = c
            .loads
            .iter()
            .zip(&c.capacities)
            .map(|(&l, &p)| l as f64 / p as f64)
            .collect();
        levels.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
            - levels.iter().cloned().fold(f64::INFINITY, f64::min)
    }
}

/// The whole measurement: one row per dimension ([`run`]) and the pass-rate table
/// ([`pass_rates`]), with the drawing's constants.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ChauHeteroReport {
    /// Trials per dimension.
    pub trials: u64,
    /// Seed of every stream.
    pub seed: u64,
    /// Loads uniform on `0..=max_load`.
    pub max_load: u64,
    /// [`SHARCNET_SIZES`].
    pub sharcnet_sizes: Vec<u64>,
    /// [`MAX_SIZE`].
    pub max_random_size: u64,
    /// [`MAX_SPEED`].
    pub max_speed: u64,
    /// The labels of [`CLASSES`].
    pub classes: Vec<&'static str>,
    /// Mean excess ÷ mean load per unit over every trial: the headline figure.
    pub mean_relative_excess: f64,
    /// One per dimension.
    pub rows: Vec<Row>,
    /// The share within the claim per load scale, random clusters and product form.
    pub pass_rates: Vec<ScaleRow>,
    /// When the claim holds ([`CONDITION`]).
    pub condition: &'static str,
}

impl ChauHeteroReport {
    /// Trials over every dimension.
    pub fn total_trials(&self) -> u64 {
        self.rows.iter().map(|r| r.trials).sum()
    }

    /// Trials within the claim (excess at most 1) over every dimension.
    pub fn within_claim(&self) -> u64 {
        self.rows.iter().map(|r| r.within_claim).sum()
    }

    /// Trials of the same loads on equal clusters within the claim.
    pub fn equal_within_claim(&self) -> u64 {
        self.rows.iter().map(|r| r.equal_within_claim).sum()
    }

    /// The dimension whose worst trial has the largest excess.
    pub fn worst(&self) -> Option<&Row> {
        self.rows
            .iter()
            .max_by(|a, b| a.worst.excess.total_cmp(&b.worst.excess))
    }

    /// The pass-rate cell of dimension `n`, `kind` and load scale `max_load`.
    pub fn pass_rate(&self, n: u32, kind: Kind, max_load: u64) -> Option<&ScaleRow> {
        self.pass_rates
            .iter()
            .find(|r| r.n == n && r.kind == kind && r.max_load == max_load)
    }
}

/// The measurement's settings. Build with [`ChauHetero::new`] and the setters.
///
/// # Example
/// ```
/// use hetlb_experiments::chau_hetero::ChauHetero;
/// let report = ChauHetero::new()
///     .dims(2..=3)
///     .trials(20)
///     .scales(vec![100])
///     .scale_trials(5)
///     .run(&|_| {})
///     .unwrap();
/// assert_eq!(report.rows.len(), 2);
/// assert_eq!(report.pass_rates.len(), 2 * 2); // dimensions × kinds
/// assert_eq!(report.total_trials(), 40);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChauHetero {
    /// Cube dimensions `n` (`2^n` clusters), within `1..=16`.
    pub dims: RangeInclusive<u32>,
    /// Random trials per dimension.
    pub trials: u64,
    /// Seed of the random streams.
    pub seed: u64,
    /// Loads uniform on `0..=max_load`.
    pub max_load: u64,
    /// Load scales of the pass-rate table.
    pub scales: Vec<u64>,
    /// Trials per dimension, scale and kind of clusters in the pass-rate table.
    pub scale_trials: u64,
}

impl Default for ChauHetero {
    fn default() -> Self {
        Self::new()
    }
}

impl ChauHetero {
    /// `n = 2..=12`, 2,000 trials, seed 1, loads to 10^6; scales 100, 1000 and 10^6 with 200
    /// trials per cell.
    pub fn new() -> Self {
        Self {
            dims: 2..=12,
            trials: 2000,
            seed: 1,
            max_load: 1_000_000,
            scales: vec![100, 1000, 1_000_000],
            scale_trials: 200,
        }
    }

    /// Sets the dimensions.
    #[must_use]
    pub fn dims(mut self, dims: RangeInclusive<u32>) -> Self {
        self.dims = dims;
        self
    }

    /// Sets the trials per dimension.
    #[must_use]
    pub fn trials(mut self, trials: u64) -> Self {
        self.trials = trials;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the largest load.
    #[must_use]
    pub fn max_load(mut self, max_load: u64) -> Self {
        self.max_load = max_load;
        self
    }

    /// Sets the load scales of the pass-rate table.
    #[must_use]
    pub fn scales(mut self, scales: Vec<u64>) -> Self {
        self.scales = scales;
        self
    }

    /// Sets the trials per cell of the pass-rate table.
    #[must_use]
    pub fn scale_trials(mut self, scale_trials: u64) -> Self {
        self.scale_trials = scale_trials;
        self
    }

    /// Trials [`ChauHetero::run`] reports to its `progress`.
    pub fn steps(&self) -> u64 {
        let dims = self.dims.clone().count() as u64;
        self.trials.saturating_mul(dims).saturating_add(
            self.scale_trials
                .saturating_mul(dims)
                .saturating_mul(2 * self.scales.len() as u64),
        )
    }

    /// Runs [`run`] and [`pass_rates`]; `progress` is called with the number of trials just
    /// finished. Deterministic for a seed whatever the thread count.
    ///
    /// # Complexity
    /// [`ChauHetero::steps`] trials, each `O(2^n · n)` for the exchange and
    /// `O(2^n log 2^n)` per step of the optimal allocation's search.
    ///
    /// # Errors
    /// [`ChauHeteroError`] for zero trials (either table), a dimension outside `1..=16`, or a
    /// maximum load or scale above 2^40.
    pub fn run(
        &self,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<ChauHeteroReport, ChauHeteroError> {
        if let Some(&bad) = self.scales.iter().find(|&&x| x > 1 << 40) {
            return Err(ChauHeteroError::Scale(bad));
        }
        if self.scale_trials == 0 {
            return Err(ChauHeteroError::NoScaleTrials);
        }
        let rows = run(
            self.dims.clone(),
            self.trials,
            self.seed,
            self.max_load,
            progress,
        )?;
        let rates = pass_rates(
            self.dims.clone(),
            &self.scales,
            self.scale_trials,
            self.seed,
            progress,
        )?;
        let all: u64 = rows.iter().map(|r| r.trials).sum();
        let mean_relative_excess = rows
            .iter()
            .map(|r| r.mean_relative_excess * r.trials as f64)
            .sum::<f64>()
            / all.max(1) as f64;
        Ok(ChauHeteroReport {
            trials: self.trials,
            seed: self.seed,
            max_load: self.max_load,
            sharcnet_sizes: SHARCNET_SIZES.to_vec(),
            max_random_size: MAX_SIZE,
            max_speed: MAX_SPEED,
            classes: CLASSES.iter().map(|c| c.0).collect(),
            mean_relative_excess,
            rows,
            pass_rates: rates,
            condition: CONDITION,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The smallest range over every allocation, by brute force.
    fn brute(total: u64, caps: &[u64]) -> Fraction {
        fn go(total: u64, caps: &[u64], i: usize, loads: &mut Vec<u64>, best: &mut Fraction) {
            if i + 1 == caps.len() {
                loads.push(total);
                *best = (*best).min(level_range(loads, caps));
                loads.pop();
                return;
            }
            for w in 0..=total {
                loads.push(w);
                go(total - w, caps, i + 1, loads, best);
                loads.pop();
            }
        }
        let mut best = Fraction::new(u128::from(u64::MAX), 1);
        go(total, caps, 0, &mut Vec::new(), &mut best);
        best
    }

    proptest! {
        #[test]
        fn optimal_range_is_the_minimum_over_all_allocations(
            total in 0u64..14,
            caps in prop::collection::vec(1u64..7, 1..5),
        ) {
            prop_assert_eq!(optimal_range(total, &caps), brute(total, &caps));
        }
    }

    #[test]
    fn equal_capacities_give_zero_or_one() {
        assert_eq!(optimal_range(16, &[1; 8]), Fraction::ZERO);
        assert_eq!(optimal_range(17, &[1; 8]), Fraction::new(1, 1));
        assert_eq!(optimal_range(17, &[3; 8]), Fraction::new(1, 3));
    }

    #[test]
    fn classes_are_exact_at_whole_bounds() {
        assert_eq!(class_of(Fraction::ZERO), 0);
        assert_eq!(class_of(Fraction::new(1, 1)), 2);
        assert_eq!(class_of(Fraction::new(10_000_000_001, 10_000_000_000)), 3);
        assert_eq!(class_of(Fraction::new(1, 3)), 1);
        assert_eq!(class_of(Fraction::new(5000, 1)), 7);
    }

    /// The condition, by computation: on product-form capacities the dimension exchange stays
    /// within about one of the optimum at every load scale, while on capacities drawn
    /// cluster by cluster the share within the claim falls as the loads grow.
    #[test]
    fn the_claim_holds_on_product_form_capacities_at_every_scale() {
        let rows = pass_rates(3..=3, &[100, 1_000_000], 100, 1, &|_| {}).unwrap();
        let get = |kind, scale| {
            rows.iter()
                .find(|r| r.kind == kind && r.max_load == scale)
                .unwrap()
        };
        for scale in [100, 1_000_000] {
            let p = get(Kind::ProductForm, scale);
            assert!(p.within_claim >= 95, "{p:?}");
        }
        let small = get(Kind::Random, 100);
        let large = get(Kind::Random, 1_000_000);
        assert!(
            large.within_claim < small.within_claim,
            "{small:?} {large:?}"
        );
        assert!(large.within_claim <= 5, "{large:?}");
        // Every product-form draw is of product form; random draws almost never are.
        for t in 0..50 {
            assert!(is_product_form(&draw_product(3, t, 1, 10).capacities));
        }
        let random = (0..50)
            .filter(|&t| is_product_form(&draw(3, t, 1, 10).capacities))
            .count();
        assert!(random <= 1);
    }

    /// The paper's own example is of product form, and every exchange of it is exact.
    #[test]
    fn the_papers_clusters_are_of_product_form() {
        let caps = [64, 32, 64, 32, 64, 32, 64, 32];
        assert!(is_product_form(&caps));
        let c = Clusters {
            sizes: caps.to_vec(),
            speeds: vec![1; 8],
            capacities: caps.to_vec(),
            loads: vec![640, 960, 17, 0, 5000, 3, 99, 1234],
        };
        let o = measure(&c);
        assert!(o.excess() <= Fraction::new(1, 1), "{:?}", o.excess());
    }

    #[test]
    fn runs_are_reproducible_and_count_every_trial() {
        let a = run(2..=3, 20, 5, 1000, &|_| {}).unwrap();
        let b = run(2..=3, 20, 5, 1000, &|_| {}).unwrap();
        assert_eq!(a.len(), 2);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.classes, y.classes);
            assert_eq!(x.classes.iter().sum::<u64>(), 20);
            assert_eq!(x.worst.trial, y.worst.trial);
            assert!(x.mean_optimal <= x.mean_dem_hetero);
        }
        assert_eq!(
            run(2..=2, 0, 1, 1, &|_| {}).unwrap_err(),
            ChauHeteroError::NoTrials
        );
        assert!(run(0..=2, 1, 1, 1, &|_| {}).is_err());
    }
}
