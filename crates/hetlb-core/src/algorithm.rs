//! One type for every balancing rule, by its command-line name: the hypercube rules
//! (pairwise dimension exchange and whole-vector cube walking) and the diffusion rules, which
//! run on any network. [`balance`] balances the loads of a hypercube; [`balance_on`] any
//! network. Both take one [`BalanceOptions`] and fail with one [`BalanceError`].

use crate::embedding;
use crate::exchange;
use crate::model::{Capacities, ModelError};
use crate::plan::Plan;
use crate::rounds::{DEFAULT_MAX_ROUNDS, RoundError, RoundOptions, RoundRun, run_rounds_with};
use crate::rules::cube_walking;
use crate::rules::diffusion::{
    Dishet, DishetTight, FirstOrder, Gdem, LambdaError, NodeRule, Rounding,
};
use crate::rules::dimension_exchange::{Dem, DemFixed, DemHetero, DemImproved, Oem, PairRule};
use crate::summary::{PlanBuilder, PlanRecorder, PlanSummary, SummaryOptions};
use crate::topology::{Hypercube, Network, Shape, Topology};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// How a rule decides, which says where it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Family {
    /// A pair of hypercube neighbours splits its units, one dimension per phase (DEM and its
    /// variants, OEM). Hypercube only.
    PairwiseHypercube,
    /// The rule reads the whole load vector and sets exact targets (cube walking, hybrid).
    /// Hypercube only.
    WholeVector,
    /// Every node decides from its own load and its neighbours', round after round. Any
    /// connected network.
    Diffusion,
}

/// Every balancing rule, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Algorithm {
    /// `dem` — Cybenko's dimension exchange, heavier node keeps the odd unit.
    Dem,
    /// `dem-fixed` — dimension exchange, the node with bit `k` = 0 keeps the odd unit.
    DemFixed,
    /// `dem-improved` — Chau & Fu's improved DEM (Chau & Fu 2003, Fig. 2).
    DemImproved,
    /// `dem-hetero` — Chau & Fu's revised improved DEM for clusters of different capacities
    /// (Chau & Fu 2003, Fig. 5).
    DemHetero,
    /// `oem` — Rim, Jang & Kim's odd–even method (Rim, Jang & Kim 2003, §3).
    Oem,
    /// `cwa` — the cube walking algorithm (Wu & Shu 1996; Rim, Jang & Kim 2003, §5).
    Cwa,
    /// `hybrid` — OEM for `log P` phases, then CWA (Rim, Jang & Kim 2003, §5.5).
    Hybrid,
    /// `dishet` — DISHET (Neelakantan 2012, §4): balances while `LD > 1`, as the paper writes.
    Dishet,
    /// `dishet-tight` — DISHET acting from `LD ≥ 1` (not the paper's threshold).
    DishetTight,
    /// `diffusion` — first-order diffusion with capacities.
    Diffusion,
    /// `random-biasing` — diffusion with randomised rounding.
    RandomBiasing,
    /// `dynamic-biasing` — diffusion with the remainders biased to the largest deficit.
    DynamicBiasing,
    /// `gdem` — generalised dimension exchange.
    Gdem,
}

impl Algorithm {
    /// The hypercube rules, in documentation order.
    pub const HYPERCUBE: [Algorithm; 7] = [
        Algorithm::Dem,
        Algorithm::DemFixed,
        Algorithm::DemImproved,
        Algorithm::DemHetero,
        Algorithm::Oem,
        Algorithm::Cwa,
        Algorithm::Hybrid,
    ];

    /// The diffusion rules, which run on any network.
    pub const DIFFUSION: [Algorithm; 6] = [
        Algorithm::Dishet,
        Algorithm::DishetTight,
        Algorithm::Diffusion,
        Algorithm::RandomBiasing,
        Algorithm::DynamicBiasing,
        Algorithm::Gdem,
    ];

    /// Every rule: the hypercube ones, then the diffusion ones.
    pub fn all() -> impl Iterator<Item = Algorithm> {
        Self::HYPERCUBE.into_iter().chain(Self::DIFFUSION)
    }

    /// How it decides.
    pub fn family(self) -> Family {
        match self {
            Algorithm::Cwa | Algorithm::Hybrid => Family::WholeVector,
            Algorithm::Dem
            | Algorithm::DemFixed
            | Algorithm::DemImproved
            | Algorithm::DemHetero
            | Algorithm::Oem => Family::PairwiseHypercube,
            _ => Family::Diffusion,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Dem => "dem",
            Algorithm::DemFixed => "dem-fixed",
            Algorithm::DemImproved => "dem-improved",
            Algorithm::DemHetero => "dem-hetero",
            Algorithm::Oem => "oem",
            Algorithm::Cwa => "cwa",
            Algorithm::Hybrid => "hybrid",
            Algorithm::Dishet => "dishet",
            Algorithm::DishetTight => "dishet-tight",
            Algorithm::Diffusion => "diffusion",
            Algorithm::RandomBiasing => "random-biasing",
            Algorithm::DynamicBiasing => "dynamic-biasing",
            Algorithm::Gdem => "gdem",
        }
    }

    /// One line on what the rule does.
    pub fn summary(self) -> &'static str {
        match self {
            Algorithm::Dem => "dimension exchange; the heavier node keeps the odd unit",
            Algorithm::DemFixed => {
                "dimension exchange; the node whose bit k is 0 keeps the odd unit"
            }
            Algorithm::DemImproved => {
                "odd unit to the node whose bit k equals bit k+1; last phase as dem"
            }
            Algorithm::DemHetero => {
                "pairs split in proportion to capacities, rounded as dem-improved; last phase only past one task per capacity unit (Fig. 5)"
            }
            Algorithm::Oem => "odd-even method: the low node always gets the odd half",
            Algorithm::Cwa => {
                "cube walking: global load vector, exact targets, max difference <= 1"
            }
            Algorithm::Hybrid => "oem for log P phases, then cwa for log(N/P)",
            Algorithm::Dishet => {
                "excess over the capacity-weighted domain average poured into the lightest neighbours, while it is above one unit"
            }
            Algorithm::DishetTight => {
                "dishet acting from an excess of one unit (every edge ends within one unit; not the paper's threshold)"
            }
            Algorithm::Diffusion => {
                "first-order diffusion with capacities, flows rounded to the nearest safe unit"
            }
            Algorithm::RandomBiasing => {
                "first-order diffusion, fractional flows rounded up with their probability"
            }
            Algorithm::DynamicBiasing => {
                "first-order diffusion, pooled remainders sent to the largest deficit"
            }
            Algorithm::Gdem => "generalised dimension exchange over an edge colouring",
        }
    }

    /// The source paper and where in it.
    pub fn source(self) -> &'static str {
        match self {
            Algorithm::Dem => "Cybenko 1989; Rim, Jang & Kim 2003 §2; Chau & Fu 2003 Fig. 1",
            Algorithm::DemFixed => "Chau & Fu 2003, Table 1",
            Algorithm::DemImproved => "Chau & Fu 2003, §3, Fig. 2, Table 2",
            Algorithm::DemHetero => "Chau & Fu 2003, §4, Fig. 5",
            Algorithm::Oem => "Rim, Jang & Kim 2003, §3, Theorem 1, Table 1",
            Algorithm::Cwa => "Wu & Shu 1996, as in Rim, Jang & Kim 2003, §5",
            Algorithm::Hybrid => "Rim, Jang & Kim 2003, §5.5",
            Algorithm::Dishet => "Neelakantan 2012, §4, eqs. 1-5, procedure Balance",
            Algorithm::DishetTight => "a variant of Neelakantan 2012, §4 (LD >= 1)",
            Algorithm::Diffusion => "Cybenko 1989; Elsasser, Monien & Preis 2002",
            Algorithm::RandomBiasing | Algorithm::DynamicBiasing => {
                "baselines of Neelakantan 2012, §5; reading documented in rules::diffusion"
            }
            Algorithm::Gdem => "Xu & Lau 1992",
        }
    }

    /// The bound on the final max difference of a hypercube rule with equal capacities, as
    /// text (`None` for a diffusion rule, which runs to its fixed point).
    pub fn bound(self) -> Option<&'static str> {
        Some(match self {
            Algorithm::Dem | Algorithm::DemFixed => "<= n",
            Algorithm::DemImproved => "<= n/2",
            Algorithm::DemHetero => "<= n/2 for equal capacities below 2 (= dem-improved)",
            Algorithm::Oem => "<= ceil(n/2)",
            Algorithm::Cwa => "<= 1",
            Algorithm::Hybrid => "<= ceil(log P/2) + 1",
            _ => return None,
        })
    }

    /// True for rules whose balancing uses capacities.
    pub fn uses_capacities(self) -> bool {
        !matches!(
            self,
            Algorithm::Dem | Algorithm::DemFixed | Algorithm::DemImproved | Algorithm::Oem
        )
    }

    /// True for the rules that run on a hypercube only.
    pub fn needs_hypercube(self) -> bool {
        self.family() != Family::Diffusion
    }

    /// True for the dimension-exchange pair rules.
    pub fn is_pair_rule(self) -> bool {
        self.family() == Family::PairwiseHypercube
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Algorithm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A rule name that is not one of [`Algorithm::all`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown algorithm '{0}' (expected one of: dem, dem-fixed, dem-improved, dem-hetero, oem, cwa, hybrid, dishet, dishet-tight, diffusion, random-biasing, dynamic-biasing, gdem)"
)]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::all()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

/// Options of [`balance`] and [`balance_on`]; an option a rule does not have is refused.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct BalanceOptions {
    /// Node capacities; `None` for equal nodes. Rules that are not capacity-aware ignore
    /// them.
    pub capacities: Option<Capacities>,
    /// `P` for `hybrid` (default `2^⌊n/2⌋`).
    pub procs_per_group: Option<usize>,
    /// Round limit of the diffusion rules (default [`DEFAULT_MAX_ROUNDS`]).
    pub max_rounds: Option<u64>,
    /// Seed of `random-biasing`.
    pub seed: u64,
    /// `λ` of `gdem` (default: [`Network::gdem_lambda`]).
    pub lambda: Option<f64>,
}

impl BalanceOptions {
    /// No option: equal nodes, the rules' defaults, seed 0.
    ///
    /// ```
    /// use hetlb_core::{BalanceOptions, Capacities};
    /// let o = BalanceOptions::new()
    ///     .capacities(Some(Capacities::new(vec![1.0, 2.0]).unwrap()))
    ///     .max_rounds(Some(100))
    ///     .seed(7);
    /// assert_eq!(o.seed, 7);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`capacities`](Self::capacities).
    #[must_use]
    pub fn capacities(mut self, capacities: Option<Capacities>) -> Self {
        self.capacities = capacities;
        self
    }

    /// Sets [`procs_per_group`](Self::procs_per_group).
    #[must_use]
    pub fn procs_per_group(mut self, procs_per_group: Option<usize>) -> Self {
        self.procs_per_group = procs_per_group;
        self
    }

    /// Sets [`max_rounds`](Self::max_rounds).
    #[must_use]
    pub fn max_rounds(mut self, max_rounds: Option<u64>) -> Self {
        self.max_rounds = max_rounds;
        self
    }

    /// Sets [`seed`](Self::seed).
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets [`lambda`](Self::lambda).
    #[must_use]
    pub fn lambda(mut self, lambda: Option<f64>) -> Self {
        self.lambda = lambda;
        self
    }
}

/// Why a balance was refused.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum BalanceError {
    /// Bad loads, capacities or group size.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A group size given to a rule that has no groups.
    #[error("a group size only applies to hybrid, not to {0}")]
    GroupSizeUnused(Algorithm),
    /// The round engine refused its input.
    #[error(transparent)]
    Round(#[from] RoundError),
    /// A hypercube rule on another network.
    #[error(
        "{0} runs on a hypercube only (use gdem, the generalised dimension exchange, on other networks)"
    )]
    NeedsHypercube(Algorithm),
    /// A bad exchange parameter.
    #[error(transparent)]
    Lambda(#[from] LambdaError),
    /// An option the rule does not use.
    #[error("{algorithm} takes no {option}")]
    Unused {
        /// The option.
        option: &'static str,
        /// The rule.
        algorithm: Algorithm,
    },
}
impl BalanceError {
    /// The argument the error is about, as every face names it: `loads`, `capacities`,
    /// `procs-per-group`, `algorithm`, `lambda` or `max-rounds` (the command line prefixes
    /// `--`; the Python package writes `_` for `-`).
    ///
    /// # Example
    /// ```
    /// use hetlb_core::{balance, Algorithm, BalanceOptions};
    /// let o = BalanceOptions::new().procs_per_group(Some(2));
    /// let e = balance(Algorithm::Oem, &[1, 2], &o).unwrap_err();
    /// assert_eq!(e.argument(), "procs-per-group");
    /// assert_eq!(balance(Algorithm::Oem, &[1, u64::MAX], &Default::default()).unwrap_err().argument(), "loads");
    /// ```
    #[must_use]
    pub fn argument(&self) -> &'static str {
        match self {
            BalanceError::Model(ModelError::GroupSize { .. })
            | BalanceError::GroupSizeUnused(_) => "procs-per-group",
            BalanceError::Model(ModelError::CapacityCount { .. })
            | BalanceError::Round(RoundError::Model(ModelError::CapacityCount { .. })) => {
                "capacities"
            }
            BalanceError::NeedsHypercube(_) => "algorithm",
            BalanceError::Lambda(_) => "lambda",
            BalanceError::Unused { option, .. } if option.contains('λ') => "lambda",
            BalanceError::Unused { option, .. } if option.contains("round") => "max-rounds",
            BalanceError::Unused { .. } => "procs-per-group",
            _ => "loads",
        }
    }
}

/// Balances `loads` on the hypercube of their count with `algorithm` (any rule: the
/// diffusion rules run on the hypercube's graph). [`balance_on`] takes any network.
///
/// A hypercube rule takes any number of loads: on a count that is not a power of two it runs
/// embedded in a cube ([`crate::embedding`]: `cwa` on virtual nodes of capacity 0, the other
/// rules folded onto the largest cube), with its bound stated there.
///
/// # Errors
/// [`BalanceError`] for no loads, a diffusion rule on a count that is not a power of two, an
/// overflowing total, a capacity list of the wrong length, a bad group size, an option the
/// rule does not have.
///
/// # Complexity
/// `O(N log N)`.
///
/// # Example
/// ```
/// use hetlb_core::{balance, Algorithm, BalanceOptions, Metrics};
/// let loads = [5, 0, 3, 9, 2, 2, 8, 1];
/// for alg in Algorithm::all() {
///     let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
///     assert_eq!(plan.final_loads.iter().sum::<u64>(), 30);
/// }
/// let plan = balance(Algorithm::Cwa, &loads, &BalanceOptions::default()).unwrap();
/// assert!(Metrics::of(&plan, None).max_difference <= 1);
/// // six nodes: cwa on the 8-cube with two virtual nodes, oem folded onto the 4-cube
/// let six = [60, 0, 0, 0, 0, 0];
/// assert_eq!(balance(Algorithm::Cwa, &six, &BalanceOptions::default()).unwrap().final_loads, vec![10; 6]);
/// assert_eq!(balance(Algorithm::Oem, &six, &BalanceOptions::default()).unwrap().final_loads, vec![10; 6]);
/// ```
pub fn balance(
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
) -> Result<Plan, BalanceError> {
    if algorithm.family() == Family::Diffusion {
        let cube = Network::Hypercube(Hypercube::for_nodes(loads.len())?);
        return Ok(balance_on(&cube, algorithm, loads, options)?.plan);
    }
    if let Some(c) = &options.capacities
        && c.len() != loads.len()
    {
        return Err(ModelError::CapacityCount {
            capacities: c.len(),
            nodes: loads.len(),
        }
        .into());
    }
    if !loads.is_empty() && !loads.len().is_power_of_two() {
        return balance_embedded(algorithm, loads, options);
    }
    let caps = options.capacities.as_ref();
    match algorithm {
        Algorithm::Hybrid => {
            let n = Hypercube::for_nodes(loads.len())?.dimensions();
            let p = options.procs_per_group.unwrap_or(1 << (n / 2));
            Ok(cube_walking::hybrid(loads, caps, p)?)
        }
        _ if options.procs_per_group.is_some() => Err(BalanceError::GroupSizeUnused(algorithm)),
        Algorithm::Cwa => Ok(cube_walking::cube_walking(loads, caps)?),
        _ => {
            struct Planner<'a>(&'a [u64]);
            impl PairRuleVisitor for Planner<'_> {
                type Output = Result<Plan, ModelError>;
                fn visit<R: PairRule>(self, rule: &R) -> Self::Output {
                    exchange::plan(rule, self.0)
                }
            }
            let uniform;
            let caps = match caps {
                Some(c) => c,
                None => {
                    uniform = Capacities::uniform(loads.len().max(1));
                    &uniform
                }
            };
            let visited = visit_pair_rule(algorithm, caps, Planner(loads));
            Ok(visited.expect("pair rule")?)
        }
    }
}

/// A hypercube rule on a node count that is not a power of two ([`crate::embedding`]):
/// `cwa` on virtual nodes, the other rules folded onto the largest cube.
fn balance_embedded(
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
) -> Result<Plan, BalanceError> {
    let caps = options.capacities.as_ref();
    if algorithm == Algorithm::Cwa {
        if options.procs_per_group.is_some() {
            return Err(BalanceError::GroupSizeUnused(algorithm));
        }
        return Ok(embedding::on_virtual_nodes(
            loads,
            caps,
            cube_walking::walk_weighted,
        )?);
    }
    embedding::folded(loads, caps, |cube_loads, cube_caps| {
        let inner = BalanceOptions {
            capacities: cube_caps.cloned(),
            ..options.clone()
        };
        balance(algorithm, cube_loads, &inner)
    })
}

/// Balances `loads` on `network` with `algorithm`.
///
/// # Errors
/// [`BalanceError`] for a hypercube algorithm on another network, a load or capacity vector
/// of the wrong length, an overflowing total, a bad `λ`, or an option the algorithm ignores.
///
/// # Complexity
/// `O(N log N)` for the hypercube algorithms; `O(R·M log Δ)` for `R` rounds of a diffusion
/// algorithm.
///
/// # Example
/// ```
/// use hetlb_core::{balance_on, Algorithm, BalanceOptions};
/// use hetlb_core::topology::TopologySpec;
/// let options = BalanceOptions::default();
/// let cube = "hypercube:3".parse::<TopologySpec>().unwrap().build().unwrap();
/// let ring = "ring:8".parse::<TopologySpec>().unwrap().build().unwrap();
/// let loads = [8, 0, 3, 9, 2, 2, 8, 0];
/// for alg in Algorithm::all() {
///     let run = balance_on(&cube, alg, &loads, &options).unwrap();
///     assert_eq!(run.plan.final_loads.iter().sum::<u64>(), 32);
///     assert_eq!(balance_on(&ring, alg, &loads, &options).is_ok(), !alg.needs_hypercube());
/// }
/// ```
pub fn balance_on(
    network: &Network,
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
) -> Result<RoundRun, BalanceError> {
    balance_on_within(network, algorithm, loads, options, u64::MAX)
}

/// [`balance_on`], refusing a plan of more than `max_transfers` transfers (24 bytes each):
/// a hypercube algorithm before it runs (its plan has at most `N/2` transfers per
/// dimension), a diffusion algorithm in the round that passes the limit
/// ([`RoundError::TooManyTransfers`]).
///
/// # Errors
/// As [`balance_on`], and [`RoundError::TooManyTransfers`] (as [`BalanceError::Round`]).
///
/// # Example
/// ```
/// use hetlb_core::{balance_on_within, Algorithm, BalanceOptions};
/// use hetlb_core::rounds::RoundError;
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_core::BalanceError;
/// let path = "path:100".parse::<TopologySpec>().unwrap().build().unwrap();
/// let mut loads = vec![0u64; 100];
/// loads[0] = 10_000;
/// let o = BalanceOptions::default();
/// let e = balance_on_within(&path, Algorithm::Dishet, &loads, &o, 50).unwrap_err();
/// assert!(matches!(e, BalanceError::Round(RoundError::TooManyTransfers { limit: 50, .. })));
/// ```
pub fn balance_on_within(
    network: &Network,
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
    max_transfers: u64,
) -> Result<RoundRun, BalanceError> {
    // A hypercube rule hands its plan over whole (`PlanBuilder::whole`): the recorder's own
    // copy of the loads would go unused.
    let recorder = match algorithm.family() {
        Family::Diffusion => PlanRecorder::new(loads),
        _ => PlanRecorder::new(&[]),
    };
    balance_with(network, algorithm, loads, options, max_transfers, recorder)
}

/// [`balance_on_within`], summarised while it runs ([`PlanSummary`]): a diffusion algorithm
/// keeps `O(N)` memory however many transfers it makes, and `max_transfers` does not bound
/// it; a hypercube algorithm's plan (at most `N/2` transfers per dimension, refused above
/// `max_transfers`) is computed whole, then summarised. The summary gives the same metrics,
/// rounds and convergence as the plan.
///
/// # Errors
/// As [`balance_on_within`].
///
/// # Example
/// ```
/// use hetlb_core::{balance_on, balance_summarised, Algorithm, BalanceOptions, Metrics};
/// use hetlb_core::summary::SummaryOptions;
/// use hetlb_core::topology::TopologySpec;
/// let ring = "ring:64".parse::<TopologySpec>().unwrap().build().unwrap();
/// let mut loads = vec![0u64; 64];
/// loads[0] = 1 << 40;
/// let o = BalanceOptions::default();
/// let full = balance_on(&ring, Algorithm::Diffusion, &loads, &o).unwrap();
/// let s = balance_summarised(&ring, Algorithm::Diffusion, &loads, &o, 0, SummaryOptions::default()).unwrap();
/// assert_eq!(s.rounds, full.rounds);
/// assert_eq!(Metrics::of_summary(&s.plan, None), Metrics::of(&full.plan, None));
/// ```
pub fn balance_summarised(
    network: &Network,
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
    max_transfers: u64,
    summary: SummaryOptions,
) -> Result<RoundRun<PlanSummary>, BalanceError> {
    let builder = PlanSummary::new(loads, summary);
    let limit = if algorithm.family() == Family::Diffusion {
        u64::MAX
    } else {
        max_transfers
    };
    balance_with(network, algorithm, loads, options, limit, builder)
}

/// [`balance_on_within`] with the phases handed to `builder`.
fn balance_with<B: PlanBuilder>(
    network: &Network,
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
    max_transfers: u64,
    builder: B,
) -> Result<RoundRun<B::Output>, BalanceError> {
    let unused = |option| Err(BalanceError::Unused { option, algorithm });
    if options.lambda.is_some() && algorithm != Algorithm::Gdem {
        return unused("exchange parameter λ (only gdem has one)");
    }
    if algorithm.family() == Family::Diffusion {
        if options.procs_per_group.is_some() {
            return unused("group size (only hybrid has one)");
        }
        let limit = max_transfers;
        return match network {
            Network::Hypercube(cube) => {
                diffuse(cube, network, algorithm, loads, options, limit, builder)
            }
            Network::Graph { graph, .. } => {
                diffuse(graph, network, algorithm, loads, options, limit, builder)
            }
        };
    };
    if options.max_rounds.is_some() {
        return unused("round limit (the hypercube algorithms run one phase per dimension)");
    }
    let cube = match network {
        Network::Hypercube(cube) => *cube,
        // Every node reaches every other: the rule runs on its embedded cube.
        Network::Graph {
            shape: Shape::Complete(nodes),
            ..
        } if *nodes == loads.len() => {
            let plan = balance(algorithm, loads, options)?;
            return Ok(RoundRun::of_schedule(plan).map(|p| builder.whole(p)));
        }
        Network::Graph {
            shape: Shape::Complete(nodes),
            ..
        } => {
            return Err(RoundError::NodeCount {
                loads: loads.len(),
                nodes: *nodes,
            }
            .into());
        }
        Network::Graph { .. } => return Err(BalanceError::NeedsHypercube(algorithm)),
    };
    if loads.len() != cube.node_count() {
        return Err(RoundError::NodeCount {
            loads: loads.len(),
            nodes: cube.node_count(),
        }
        .into());
    }
    let most = (cube.node_count() as u128 / 2).saturating_mul(u128::from(cube.dimensions()));
    if most > u128::from(max_transfers) {
        return Err(RoundError::TooManyTransfers {
            limit: max_transfers,
            round: 1,
        }
        .into());
    }
    let plan = balance(algorithm, loads, options)?;
    Ok(RoundRun::of_schedule(plan).map(|p| builder.whole(p)))
}

fn diffuse<T: Topology, B: PlanBuilder>(
    topology: &T,
    network: &Network,
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
    max_transfers: u64,
    builder: B,
) -> Result<RoundRun<B::Output>, BalanceError> {
    let round_options = RoundOptions {
        max_rounds: options.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS),
        seed: options.seed,
        max_transfers,
    };
    let caps = options.capacities.as_ref();
    fn go<T: Topology, R: NodeRule, B: PlanBuilder>(
        rule: &R,
        topology: &T,
        loads: &[u64],
        caps: Option<&Capacities>,
        o: &RoundOptions,
        builder: B,
    ) -> Result<RoundRun<B::Output>, BalanceError> {
        Ok(run_rounds_with(rule, topology, loads, caps, o, builder)?)
    }
    let o = &round_options;
    match algorithm {
        Algorithm::Dishet => go(&Dishet, topology, loads, caps, o, builder),
        Algorithm::DishetTight => go(&DishetTight, topology, loads, caps, o, builder),
        Algorithm::Diffusion => {
            let rule = FirstOrder::new(Rounding::Nearest);
            go(&rule, topology, loads, caps, o, builder)
        }
        Algorithm::RandomBiasing => {
            let rule = FirstOrder::new(Rounding::Random);
            go(&rule, topology, loads, caps, o, builder)
        }
        Algorithm::DynamicBiasing => {
            let rule = FirstOrder::new(Rounding::Biased);
            go(&rule, topology, loads, caps, o, builder)
        }
        Algorithm::Gdem => {
            let colouring = network.edge_colouring();
            let lambda = options.lambda.unwrap_or_else(|| network.gdem_lambda());
            let rule = Gdem::new(&colouring, lambda)?;
            go(&rule, topology, loads, caps, o, builder)
        }
        a => Err(BalanceError::NeedsHypercube(a)),
    }
}

/// Code generic over a [`PairRule`], run by [`visit_pair_rule`] with the rule of an
/// [`Algorithm`]. (A closure cannot be generic, so this plays its part.)
pub trait PairRuleVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the rule.
    fn visit<R: PairRule>(self, rule: &R) -> Self::Output;
}

/// Runs `visitor` with the pair rule of `algorithm`; `None` for `cwa` and `hybrid`, which are
/// not pair rules. `capacities` are used by `dem-hetero` only.
///
/// # Example
/// ```
/// use hetlb_core::algorithm::{visit_pair_rule, PairRuleVisitor};
/// use hetlb_core::exchange::balance_in_place;
/// use hetlb_core::rules::dimension_exchange::PairRule;
/// use hetlb_core::{model::Capacities, Algorithm};
/// struct Final(Vec<u64>);
/// impl PairRuleVisitor for Final {
///     type Output = Vec<u64>;
///     fn visit<R: PairRule>(mut self, rule: &R) -> Vec<u64> {
///         balance_in_place(rule, &mut self.0).unwrap();
///         self.0
///     }
/// }
/// let caps = Capacities::uniform(4);
/// let out = visit_pair_rule(Algorithm::Oem, &caps, Final(vec![4, 7, 0, 0])).unwrap();
/// assert_eq!(out.iter().sum::<u64>(), 11);
/// ```
pub fn visit_pair_rule<V: PairRuleVisitor>(
    algorithm: Algorithm,
    capacities: &Capacities,
    visitor: V,
) -> Option<V::Output> {
    Some(match algorithm {
        Algorithm::Dem => visitor.visit(&Dem),
        Algorithm::DemFixed => visitor.visit(&DemFixed),
        Algorithm::DemImproved => visitor.visit(&DemImproved),
        Algorithm::DemHetero => visitor.visit(&DemHetero::new(capacities)),
        Algorithm::Oem => visitor.visit(&Oem),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rounds::Convergence;
    use crate::topology::TopologySpec;

    fn net(s: &str) -> Network {
        s.parse::<TopologySpec>().unwrap().build().unwrap()
    }

    #[test]
    fn names_round_trip() {
        for a in Algorithm::all() {
            assert_eq!(a.name().parse::<Algorithm>().unwrap(), a);
        }
        assert_eq!(Algorithm::all().count(), 13);
        assert!("dishet2".parse::<Algorithm>().is_err());
    }

    #[test]
    fn cube_algorithms_give_what_balance_gives() {
        let loads = [4, 7, 0, 9, 2, 2, 8, 1];
        for a in Algorithm::HYPERCUBE {
            let run =
                balance_on(&net("hypercube:3"), a, &loads, &BalanceOptions::default()).unwrap();
            assert_eq!(
                run.plan,
                balance(a, &loads, &BalanceOptions::default()).unwrap()
            );
            assert_eq!(run.convergence, Convergence::Schedule);
        }
    }

    #[test]
    fn misuse_is_refused() {
        let o = BalanceOptions::default();
        let ring = net("ring:8");
        assert_eq!(
            balance_on(&ring, Algorithm::Dem, &[0; 8], &o),
            Err(BalanceError::NeedsHypercube(Algorithm::Dem))
        );
        let lambda = BalanceOptions {
            lambda: Some(0.7),
            ..BalanceOptions::default()
        };
        assert!(matches!(
            balance_on(&ring, Algorithm::Dishet, &[0; 8], &lambda),
            Err(BalanceError::Unused { .. })
        ));
        assert!(balance_on(&ring, Algorithm::Gdem, &[0; 8], &lambda).is_ok());
        let bad = BalanceOptions {
            lambda: Some(1.0),
            ..BalanceOptions::default()
        };
        assert!(matches!(
            balance_on(&ring, Algorithm::Gdem, &[0; 8], &bad),
            Err(BalanceError::Lambda(_))
        ));
        assert!(matches!(
            balance_on(&ring, Algorithm::Diffusion, &[0; 7], &o),
            Err(BalanceError::Round(RoundError::NodeCount { .. }))
        ));
        assert!(matches!(
            balance_on(&net("hypercube:2"), Algorithm::Oem, &[0; 8], &o),
            Err(BalanceError::Round(RoundError::NodeCount { .. }))
        ));
    }
}
