//! Keeping subdomains compact: a drifting hotspot over items with positions, rebalanced at
//! every step three ways, side by side in one run —
//!
//! * **positions**: hetlb's `rebalance` with the items' positions (direct routing nearest
//!   first, the items furthest towards the receiver moved);
//! * **no positions**: the same rule and routing, items chosen without their positions;
//! * **rcb**: a geometric partition computed from scratch at every step, recursive
//!   coordinate bisection with capacity-proportional cuts (Zoltan's RCB, written here as the
//!   reference: what a from-scratch partitioner gives).
//!
//! Per step and method: the spread of the ranks' regions (RMS distance of each rank's items
//! from its centroid over that of all items from theirs: 1.0 random, lower compact), the
//! units moved against the minimum (the sum of the positive excesses over the
//! capacity-proportional targets), the imbalance after (max load ÷ capacity over the mean)
//! and the time of the call (the slowest rank's wall time; rcb: the partition's computation on one
//! thread). Items start in rcb's compact partition of the first step; ranks have capacities
//! 1 to P; the hotspot crosses the domain over the steps.

use crate::BenchError;
use crate::timing::median;
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use hetlb_peer::{Balancer, BalancerConfig, Item, Speeds};
use hetlb_transport::threads;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The most ranks (threads).
pub const MAX_RANKS: usize = 256;
/// The most items.
pub const MAX_ITEMS: u64 = 20_000_000;

/// What [`run`] measures.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LocalityConfig {
    /// Ranks (threads), 2 to [`MAX_RANKS`]; rank `r` has capacity `r + 1`.
    pub ranks: usize,
    /// Items, uniformly placed, 1 to [`MAX_ITEMS`].
    pub items: u64,
    /// Steps (one rebalance each), 1 to 1000.
    pub steps: usize,
    /// Dimensions of the domain, 2 or 3.
    pub dims: usize,
    /// The rule hetlb balances with.
    pub rule: Algorithm,
    /// The seed of the items' positions.
    pub seed: u64,
}

impl Default for LocalityConfig {
    fn default() -> Self {
        Self {
            ranks: 8,
            items: 200_000,
            steps: 20,
            dims: 2,
            rule: Algorithm::Cwa,
            seed: 1,
        }
    }
}

/// One method at one step.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct StepRow {
    /// The step, from 1.
    pub step: usize,
    /// `positions`, `no positions` or `rcb`.
    pub method: &'static str,
    /// The spread of the ranks' regions after the step.
    pub spread: f64,
    /// Units whose rank changed at this step.
    pub moved: u64,
    /// The least units any method must move: Σ of the positive excesses over the
    /// capacity-proportional targets before the step.
    pub minimum: u64,
    /// Max load ÷ capacity over the mean, after the step.
    pub imbalance: f64,
    /// Seconds of the step's call (rcb: of computing the partition).
    pub seconds: f64,
}

/// One method over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct MethodTotal {
    /// The method.
    pub method: &'static str,
    /// The largest spread of any step.
    pub worst_spread: f64,
    /// The largest ratio of this method's spread to rcb's at the same step.
    pub worst_spread_over_rcb: f64,
    /// Σ units moved over Σ minimum.
    pub moved_over_minimum: f64,
    /// The largest step's units moved over its minimum (steps with a minimum of 0 left out).
    pub worst_moved_over_minimum: f64,
    /// The largest imbalance after a step.
    pub worst_imbalance: f64,
    /// The median seconds of a step's call.
    pub median_seconds: f64,
}

/// What [`run`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct LocalityReport {
    /// Ranks.
    pub ranks: usize,
    /// Items.
    pub items: u64,
    /// Steps.
    pub steps: usize,
    /// Dimensions.
    pub dims: usize,
    /// The rule.
    pub rule: String,
    /// Every step of every method.
    pub rows: Vec<StepRow>,
    /// Per method, over the run.
    pub totals: Vec<MethodTotal>,
}

/// A particle: an id, a position, its cost, and whether it tells its position.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Particle {
    /// Its index among all items.
    pub id: u64,
    /// Where it is.
    pub at: [f64; 3],
    /// Its cost at the current step.
    pub cost: u64,
    /// Whether it tells its position to the balancer.
    pub located: bool,
}

impl Item for Particle {
    fn id(&self) -> u64 {
        self.id
    }
    fn load(&self) -> u64 {
        self.cost
    }
    fn position(&self) -> Option<[f64; 3]> {
        self.located.then_some(self.at)
    }
}

/// The hotspot's centre at `step` of `steps`: across the domain along the first axis.
fn hotspot(step: usize, steps: usize) -> [f64; 3] {
    let t = if steps > 1 {
        step as f64 / (steps - 1) as f64
    } else {
        0.5
    };
    [0.1 + 0.8 * t, 0.5, 0.5]
}

/// An item's cost at a hotspot: 1, up to 9 near the hotspot (a Gaussian of width 0.15).
fn cost(at: &[f64; 3], centre: &[f64; 3], dims: usize) -> u64 {
    let d2: f64 = (0..dims).map(|k| (at[k] - centre[k]).powi(2)).sum();
    1 + (8.0 * (-d2 / (2.0 * 0.15f64.powi(2))).exp()).round() as u64
}

fn check(cfg: &LocalityConfig) -> Result<(), BenchError> {
    let bad =
        |setting: &'static str, message: String| Err(BenchError::Setting { setting, message });
    if !(2..=MAX_RANKS).contains(&cfg.ranks) {
        return bad(
            "ranks",
            format!("{} is not from 2 to {MAX_RANKS}", cfg.ranks),
        );
    }
    if !(1..=MAX_ITEMS).contains(&cfg.items) {
        return bad(
            "items",
            format!("{} is not from 1 to {MAX_ITEMS}", cfg.items),
        );
    }
    if !(1..=1000).contains(&cfg.steps) {
        return bad("steps", format!("{} is not from 1 to 1000", cfg.steps));
    }
    if !(2..=3).contains(&cfg.dims) {
        return bad("dims", format!("{} is not 2 or 3", cfg.dims));
    }
    Ok(())
}

/// Runs the three methods over the steps (see the module documentation).
///
/// # Errors
/// [`BenchError::Setting`] for a setting out of range; [`BenchError::Peer`] when a call fails.
///
/// # Example
/// ```
/// use hetlb_bench::locality::{LocalityConfig, run};
/// let mut cfg = LocalityConfig::default();
/// (cfg.ranks, cfg.items, cfg.steps) = (4, 2_000, 3);
/// let r = run(&cfg).unwrap();
/// assert_eq!(r.rows.len(), 3 * 3);
/// assert!(r.totals.iter().all(|t| t.worst_imbalance >= 1.0));
/// ```
pub fn run(cfg: &LocalityConfig) -> Result<LocalityReport, BenchError> {
    run_with(cfg, &|setup, located| hetlb_on_threads(setup, located))
}

/// Everything a method's run starts from, the same on every rank of an MPI run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Setup {
    /// What is measured.
    pub cfg: LocalityConfig,
    /// Every item's position.
    pub positions: Vec<[f64; 3]>,
    /// Every rank's capacity (`r + 1`).
    pub capacities: Vec<f64>,
    /// Every item's cost at each step (index 0: the start).
    pub costs: Vec<Vec<u64>>,
    /// Every item's rank at the start (rcb's partition of the first step).
    pub start: Vec<usize>,
}

impl Setup {
    /// The items, their costs at every step and the start, from `cfg`.
    ///
    /// # Errors
    /// [`BenchError::Setting`] for a setting out of range.
    pub fn new(cfg: &LocalityConfig) -> Result<Self, BenchError> {
        check(cfg)?;
        let mut rng = Pcg64::seed_from_u64(cfg.seed);
        let positions: Vec<[f64; 3]> = (0..cfg.items)
            .map(|_| {
                let mut at = [0.5; 3];
                for x in at.iter_mut().take(cfg.dims) {
                    *x = rng.random::<f64>();
                }
                at
            })
            .collect();
        let capacities: Vec<f64> = (1..=cfg.ranks).map(|c| c as f64).collect();
        let costs: Vec<Vec<u64>> = (0..=cfg.steps)
            .map(|step| {
                let c = hotspot(step, cfg.steps);
                positions.iter().map(|at| cost(at, &c, cfg.dims)).collect()
            })
            .collect();
        let start = rcb(&positions, &costs[0], &capacities, cfg.dims);
        Ok(Self {
            cfg: cfg.clone(),
            positions,
            capacities,
            costs,
            start,
        })
    }

    /// The balancer's configuration: the rule, direct routing, capacities 1..P.
    pub fn config(&self) -> BalancerConfig {
        BalancerConfig::for_algorithm(self.cfg.rule)
            .routing(Routing::Direct)
            .speeds(Speeds::Fixed(self.capacities.clone()))
    }

    /// The particles `rank` holds at the start (telling their positions when `located`).
    pub fn particles_of(&self, rank: usize, located: bool) -> Vec<Particle> {
        self.start
            .iter()
            .enumerate()
            .filter(|&(_, &r)| r == rank)
            .map(|(i, _)| Particle {
                id: i as u64,
                at: self.positions[i],
                cost: self.costs[0][i],
                located,
            })
            .collect()
    }

    /// Every item's rank after each step, from what each rank held after it (`held[rank]`:
    /// per step, the ids and the call's seconds); index 0 is the start.
    ///
    /// # Errors
    /// [`BenchError::Setting`] when an item is held by no rank or by two after a step.
    pub fn owners(&self, held: &[RankSteps]) -> Result<Owners, BenchError> {
        let lost = |step: usize, what: &str| BenchError::Setting {
            setting: "items",
            message: format!("an item is held by {what} after step {step}"),
        };
        let mut owners = vec![(self.start.clone(), 0.0)];
        for step in 0..self.cfg.steps {
            let mut owner = vec![usize::MAX; self.positions.len()];
            for (rank, per_step) in held.iter().enumerate() {
                for &id in &per_step[step].0 {
                    let slot = owner
                        .get_mut(id as usize)
                        .ok_or_else(|| lost(step + 1, "an unknown id"))?;
                    if *slot != usize::MAX {
                        return Err(lost(step + 1, "two ranks"));
                    }
                    *slot = rank;
                }
            }
            if owner.contains(&usize::MAX) {
                return Err(lost(step + 1, "no rank"));
            }
            let slowest = held.iter().map(|h| h[step].1).fold(0.0, f64::max);
            owners.push((owner, slowest));
        }
        Ok(owners)
    }
}

/// [`run`] with hetlb's steps run by `hetlb(setup, located)` (threads, or MPI processes in
/// the `locality_mpi` example): every item's rank after each step and the step's call time.
///
/// # Errors
/// As [`run`], and whatever `hetlb` returns.
pub fn run_with(
    cfg: &LocalityConfig,
    hetlb: &dyn Fn(&Setup, bool) -> Result<Owners, BenchError>,
) -> Result<LocalityReport, BenchError> {
    let setup = Setup::new(cfg)?;
    let costs_at = |step: usize| setup.costs[step].clone();
    let mut rows = Vec::new();
    for located in [true, false] {
        let owners = hetlb(&setup, located)?;
        let method = if located { "positions" } else { "no positions" };
        rows.extend(measure(
            method,
            &owners,
            &setup.positions,
            &setup.capacities,
            &costs_at,
        ));
    }
    let mut owners = vec![(setup.start.clone(), 0.0)];
    for step in 1..=cfg.steps {
        let t = Instant::now();
        let part = rcb(
            &setup.positions,
            &setup.costs[step],
            &setup.capacities,
            cfg.dims,
        );
        owners.push((part, t.elapsed().as_secs_f64()));
    }
    rows.extend(measure(
        "rcb",
        &owners,
        &setup.positions,
        &setup.capacities,
        &costs_at,
    ));
    let totals = totals(&rows);
    Ok(LocalityReport {
        ranks: cfg.ranks,
        items: cfg.items,
        steps: cfg.steps,
        dims: cfg.dims,
        rule: cfg.rule.name().to_string(),
        rows,
        totals,
    })
}

/// Every item's rank after each step (index 0: the start), with the step's call time.
pub type Owners = Vec<(Vec<usize>, f64)>;

/// What one rank held after each step (item ids), and the step's call time.
pub type RankSteps = Vec<(Vec<u64>, f64)>;

/// One rank's steps: updates its items' costs, rebalances, records what it holds.
///
/// # Errors
/// [`BenchError::Peer`] when a call fails.
pub fn rank_steps<G: hetlb_transport::Group>(
    setup: &Setup,
    member: &G,
    located: bool,
) -> Result<RankSteps, BenchError> {
    let mut b = Balancer::new(member, setup.config())?;
    let mut mine = setup.particles_of(member.rank(), located);
    let mut out = Vec::with_capacity(setup.cfg.steps);
    for costs in setup.costs.iter().skip(1) {
        for item in &mut mine {
            item.cost = costs[item.id as usize];
        }
        let t = Instant::now();
        b.rebalance(&mut mine)?;
        let seconds = t.elapsed().as_secs_f64();
        out.push((mine.iter().map(|x| x.id).collect(), seconds));
    }
    Ok(out)
}

/// Every item's rank after each step of hetlb's calls on threads (index 0: the start), with
/// the step's call time (the slowest rank's).
fn hetlb_on_threads(setup: &Setup, located: bool) -> Result<Owners, BenchError> {
    let held: Vec<Result<RankSteps, BenchError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = threads::group(setup.cfg.ranks)
            .into_iter()
            .map(|member| scope.spawn(move || rank_steps(setup, &member, located)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(panicked())))
            .collect()
    });
    let held: Vec<RankSteps> = held.into_iter().collect::<Result<_, _>>()?;
    setup.owners(&held)
}

fn panicked() -> BenchError {
    BenchError::Setting {
        setting: "ranks",
        message: "a rank's thread panicked".into(),
    }
}

/// The rows of one method: at each step, against the owners before it.
fn measure(
    method: &'static str,
    owners: &[(Vec<usize>, f64)],
    positions: &[[f64; 3]],
    capacities: &[f64],
    costs_at: &dyn Fn(usize) -> Vec<u64>,
) -> Vec<StepRow> {
    (1..owners.len())
        .map(|step| {
            let costs = costs_at(step);
            let (before, after) = (&owners[step - 1].0, &owners[step].0);
            let moved = (0..positions.len())
                .filter(|&i| before[i] != after[i])
                .map(|i| costs[i])
                .sum();
            StepRow {
                step,
                method,
                spread: spread(positions, after, capacities.len()),
                moved,
                minimum: minimum(&loads(before, &costs, capacities.len()), capacities),
                imbalance: imbalance(&loads(after, &costs, capacities.len()), capacities),
                seconds: owners[step].1,
            }
        })
        .collect()
}

fn loads(owner: &[usize], costs: &[u64], ranks: usize) -> Vec<u64> {
    let mut l = vec![0u64; ranks];
    for (i, &r) in owner.iter().enumerate() {
        l[r] += costs[i];
    }
    l
}

/// Σ of the positive excesses over the capacity-proportional targets.
fn minimum(loads: &[u64], capacities: &[f64]) -> u64 {
    let total: u64 = loads.iter().sum();
    let cap: f64 = capacities.iter().sum();
    loads
        .iter()
        .zip(capacities)
        .map(|(&l, &c)| (l as f64 - total as f64 * c / cap).max(0.0))
        .sum::<f64>()
        .round() as u64
}

fn imbalance(loads: &[u64], capacities: &[f64]) -> f64 {
    let total: u64 = loads.iter().sum();
    let cap: f64 = capacities.iter().sum();
    let worst = loads
        .iter()
        .zip(capacities)
        .map(|(&l, &c)| l as f64 / c)
        .fold(0.0, f64::max);
    worst / (total as f64 / cap)
}

/// The spread of the ranks' regions (see the module documentation).
fn spread(positions: &[[f64; 3]], owner: &[usize], ranks: usize) -> f64 {
    let mut n = vec![0f64; ranks];
    let mut sum = vec![[0f64; 3]; ranks];
    let mut sq = vec![0f64; ranks];
    for (at, &r) in positions.iter().zip(owner) {
        n[r] += 1.0;
        for k in 0..3 {
            sum[r][k] += at[k];
        }
        sq[r] += at.iter().map(|x| x * x).sum::<f64>();
    }
    let norm2 = |s: &[f64; 3]| s.iter().map(|x| x * x).sum::<f64>();
    let within: f64 = (0..ranks)
        .filter(|&r| n[r] > 0.0)
        .map(|r| sq[r] - norm2(&sum[r]) / n[r])
        .sum();
    let all_n: f64 = n.iter().sum();
    let mut all = [0f64; 3];
    for s in &sum {
        for k in 0..3 {
            all[k] += s[k];
        }
    }
    let total = sq.iter().sum::<f64>() - norm2(&all) / all_n;
    (within / total).max(0.0).sqrt()
}

/// Recursive coordinate bisection with capacity-proportional cuts: every item's rank.
///
/// # Complexity
/// `O(N log N log P)`.
pub fn rcb(positions: &[[f64; 3]], costs: &[u64], capacities: &[f64], dims: usize) -> Vec<usize> {
    let mut owner = vec![0usize; positions.len()];
    let mut items: Vec<usize> = (0..positions.len()).collect();
    bisect(
        &mut items,
        0,
        capacities.len(),
        positions,
        costs,
        capacities,
        dims,
        &mut owner,
    );
    owner
}

#[allow(clippy::too_many_arguments)]
fn bisect(
    items: &mut [usize],
    lo: usize,
    hi: usize,
    positions: &[[f64; 3]],
    costs: &[u64],
    capacities: &[f64],
    dims: usize,
    owner: &mut [usize],
) {
    if hi - lo == 1 {
        for &i in items.iter() {
            owner[i] = lo;
        }
        return;
    }
    let mid = (lo + hi) / 2;
    let left: f64 = capacities[lo..mid].iter().sum();
    let right: f64 = capacities[mid..hi].iter().sum();
    // Cut across the widest extent.
    let axis = (0..dims)
        .max_by(|&a, &b| {
            let extent = |k: usize| {
                let (mn, mx) = items.iter().fold((f64::MAX, f64::MIN), |(mn, mx), &i| {
                    (mn.min(positions[i][k]), mx.max(positions[i][k]))
                });
                mx - mn
            };
            extent(a).total_cmp(&extent(b))
        })
        .unwrap_or(0);
    items.sort_by(|&a, &b| positions[a][axis].total_cmp(&positions[b][axis]));
    let total: f64 = items.iter().map(|&i| costs[i] as f64).sum();
    let goal = total * left / (left + right);
    let mut acc = 0.0;
    let mut cut = 0;
    while cut < items.len() && acc + costs[items[cut]] as f64 / 2.0 <= goal {
        acc += costs[items[cut]] as f64;
        cut += 1;
    }
    let (a, b) = items.split_at_mut(cut);
    bisect(a, lo, mid, positions, costs, capacities, dims, owner);
    bisect(b, mid, hi, positions, costs, capacities, dims, owner);
}

fn totals(rows: &[StepRow]) -> Vec<MethodTotal> {
    let rcb_at = |step: usize| {
        rows.iter()
            .find(|r| r.method == "rcb" && r.step == step)
            .map_or(f64::NAN, |r| r.spread)
    };
    ["positions", "no positions", "rcb"]
        .iter()
        .map(|&method| {
            let mine: Vec<&StepRow> = rows.iter().filter(|r| r.method == method).collect();
            let moved: u64 = mine.iter().map(|r| r.moved).sum();
            let minimum: u64 = mine.iter().map(|r| r.minimum).sum();
            MethodTotal {
                method,
                worst_spread: mine.iter().map(|r| r.spread).fold(0.0, f64::max),
                worst_spread_over_rcb: mine
                    .iter()
                    .map(|r| r.spread / rcb_at(r.step))
                    .fold(0.0, f64::max),
                moved_over_minimum: moved as f64 / minimum.max(1) as f64,
                worst_moved_over_minimum: mine
                    .iter()
                    .filter(|r| r.minimum > 0)
                    .map(|r| r.moved as f64 / r.minimum as f64)
                    .fold(0.0, f64::max),
                worst_imbalance: mine.iter().map(|r| r.imbalance).fold(0.0, f64::max),
                median_seconds: median(&mine.iter().map(|r| r.seconds).collect::<Vec<_>>()),
            }
        })
        .collect()
}
