//! One entry point for every hypercube algorithm, by its command-line name.

use crate::exchange;
use crate::model::{Capacities, ModelError};
use crate::plan::Plan;
use crate::rules::cube_walking;
use crate::rules::dimension_exchange::{Dem, DemFixed, DemHetero, DemImproved, Oem, PairRule};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// The hypercube balancing algorithms, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// `dem` — Cybenko's dimension exchange, heavier node keeps the odd unit.
    Dem,
    /// `dem-fixed` — dimension exchange, the node with bit `k` = 0 keeps the odd unit.
    DemFixed,
    /// `dem-improved` — Chau & Fu's improved DEM (000_… Fig. 2).
    DemImproved,
    /// `dem-hetero` — Chau & Fu's revised improved DEM for clusters of different capacities
    /// (000_… Fig. 5).
    DemHetero,
    /// `oem` — Rim, Jang & Kim's odd–even method (004_… §3).
    Oem,
    /// `cwa` — the cube walking algorithm (Wu & Shu 1996; 004_… §5).
    Cwa,
    /// `hybrid` — OEM for `log P` phases, then CWA (004_… §5.5).
    Hybrid,
}

impl Algorithm {
    /// Every algorithm, in documentation order.
    pub const ALL: [Algorithm; 7] = [
        Algorithm::Dem,
        Algorithm::DemFixed,
        Algorithm::DemImproved,
        Algorithm::DemHetero,
        Algorithm::Oem,
        Algorithm::Cwa,
        Algorithm::Hybrid,
    ];

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
        }
    }

    /// One line on what the algorithm does.
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
        }
    }

    /// The source paper and where in it.
    pub fn source(self) -> &'static str {
        match self {
            Algorithm::Dem => "Cybenko 1989; Rim et al. 2003 (004) §2; Chau & Fu (000) Fig. 1",
            Algorithm::DemFixed => "Chau & Fu (000) Table 1",
            Algorithm::DemImproved => "Chau & Fu (000) §3, Fig. 2, Table 2",
            Algorithm::DemHetero => "Chau & Fu (000) §4, Fig. 5",
            Algorithm::Oem => "Rim, Jang & Kim 2003 (004) §3, Theorem 1, Table 1",
            Algorithm::Cwa => "Wu & Shu 1996, as in Rim et al. 2003 (004) §5",
            Algorithm::Hybrid => "Rim et al. 2003 (004) §5.5",
        }
    }

    /// The bound on the final max difference with equal capacities, as text.
    pub fn bound(self) -> &'static str {
        match self {
            Algorithm::Dem | Algorithm::DemFixed => "<= n",
            Algorithm::DemImproved => "<= n/2",
            Algorithm::DemHetero => "<= n/2 for equal capacities below 2 (= dem-improved)",
            Algorithm::Oem => "<= ceil(n/2)",
            Algorithm::Cwa => "<= 1",
            Algorithm::Hybrid => "<= ceil(log P/2) + 1",
        }
    }

    /// True for algorithms whose balancing uses capacities.
    pub fn uses_capacities(self) -> bool {
        matches!(
            self,
            Algorithm::DemHetero | Algorithm::Cwa | Algorithm::Hybrid
        )
    }

    /// True for the dimension-exchange pair rules (everything but `cwa` and `hybrid`).
    pub fn is_pair_rule(self) -> bool {
        !matches!(self, Algorithm::Cwa | Algorithm::Hybrid)
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An algorithm name that is not one of [`Algorithm::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown algorithm '{0}' (expected one of: dem, dem-fixed, dem-improved, dem-hetero, oem, cwa, hybrid)"
)]
pub struct UnknownAlgorithm(pub String);

impl FromStr for Algorithm {
    type Err = UnknownAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL
            .into_iter()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownAlgorithm(s.to_string()))
    }
}

/// Options of [`balance`].
#[derive(Debug, Clone, Default)]
pub struct BalanceOptions {
    /// Node capacities; `None` for equal nodes. Algorithms that are not capacity-aware
    /// ignore them.
    pub capacities: Option<Capacities>,
    /// `P` for `hybrid` (default `2^⌊n/2⌋`); an error for the other algorithms.
    pub procs_per_group: Option<usize>,
}

/// Why [`balance`] refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BalanceError {
    /// Bad loads, capacities or group size.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// A group size given to an algorithm that has no groups.
    #[error("a group size only applies to hybrid, not to {0}")]
    GroupSizeUnused(Algorithm),
}

/// Balances `loads` on a hypercube with `algorithm`.
///
/// # Errors
/// [`BalanceError`] for a load count that is not a power of two, an overflowing total, a
/// capacity list of the wrong length, a bad group size.
///
/// # Complexity
/// `O(N log N)`.
///
/// # Example
/// ```
/// use hetlb_core::{balance, Algorithm, BalanceOptions, Metrics};
/// let loads = [5, 0, 3, 9, 2, 2, 8, 1];
/// for alg in Algorithm::ALL {
///     let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
///     assert_eq!(plan.final_loads.iter().sum::<u64>(), 30);
/// }
/// let plan = balance(Algorithm::Cwa, &loads, &BalanceOptions::default()).unwrap();
/// assert!(Metrics::of(&plan, None).max_difference <= 1);
/// ```
pub fn balance(
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
) -> Result<Plan, BalanceError> {
    if let Some(c) = &options.capacities
        && c.len() != loads.len()
    {
        return Err(ModelError::CapacityCount {
            capacities: c.len(),
            nodes: loads.len(),
        }
        .into());
    }
    let caps = options.capacities.as_ref();
    match algorithm {
        Algorithm::Hybrid => {
            let n = crate::topology::Hypercube::for_nodes(loads.len())?.dimensions();
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
        Algorithm::Cwa | Algorithm::Hybrid => return None,
    })
}
