//! One entry point for every algorithm on every network, by its command-line name.
//!
//! The hypercube algorithms ([`Algorithm`]: `dem`, `oem`, `cwa`, …) run on a
//! [`Network::Hypercube`] through [`crate::balance`]; the diffusion algorithms (`dishet`,
//! `diffusion`, `random-biasing`, `dynamic-biasing`, `gdem`) run on any [`Network`] through
//! the round engine. Both return a [`RoundRun`]: a plan, its rounds, whether it converged and
//! by which test.

use crate::algorithm::{Algorithm, BalanceError, BalanceOptions, balance};
use crate::model::Capacities;
use crate::rounds::{
    Convergence, DEFAULT_MAX_ROUNDS, RoundError, RoundOptions, RoundRun, run_rounds,
};
use crate::rules::diffusion::{
    Dishet, DishetTight, FirstOrder, Gdem, LambdaError, NodeRule, Rounding,
};
use crate::topology::{Network, Topology};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// Every algorithm, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NetworkAlgorithm {
    /// A hypercube algorithm.
    Cube(Algorithm),
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

impl NetworkAlgorithm {
    /// The diffusion algorithms, which run on any network.
    pub const DIFFUSION: [NetworkAlgorithm; 6] = [
        NetworkAlgorithm::Dishet,
        NetworkAlgorithm::DishetTight,
        NetworkAlgorithm::Diffusion,
        NetworkAlgorithm::RandomBiasing,
        NetworkAlgorithm::DynamicBiasing,
        NetworkAlgorithm::Gdem,
    ];

    /// Every algorithm: the hypercube ones, then the diffusion ones.
    pub fn all() -> impl Iterator<Item = NetworkAlgorithm> {
        Algorithm::ALL
            .into_iter()
            .map(NetworkAlgorithm::Cube)
            .chain(Self::DIFFUSION)
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            NetworkAlgorithm::Cube(a) => a.name(),
            NetworkAlgorithm::Dishet => "dishet",
            NetworkAlgorithm::DishetTight => "dishet-tight",
            NetworkAlgorithm::Diffusion => "diffusion",
            NetworkAlgorithm::RandomBiasing => "random-biasing",
            NetworkAlgorithm::DynamicBiasing => "dynamic-biasing",
            NetworkAlgorithm::Gdem => "gdem",
        }
    }

    /// One line on what the algorithm does.
    pub fn summary(self) -> &'static str {
        match self {
            NetworkAlgorithm::Cube(a) => a.summary(),
            NetworkAlgorithm::Dishet => {
                "excess over the capacity-weighted domain average poured into the lightest neighbours, while it is above one unit"
            }
            NetworkAlgorithm::DishetTight => {
                "dishet acting from an excess of one unit (every edge ends within one unit; not the paper's threshold)"
            }
            NetworkAlgorithm::Diffusion => {
                "first-order diffusion with capacities, flows rounded to the nearest safe unit"
            }
            NetworkAlgorithm::RandomBiasing => {
                "first-order diffusion, fractional flows rounded up with their probability"
            }
            NetworkAlgorithm::DynamicBiasing => {
                "first-order diffusion, pooled remainders sent to the largest deficit"
            }
            NetworkAlgorithm::Gdem => "generalised dimension exchange over an edge colouring",
        }
    }

    /// The source paper and where in it.
    pub fn source(self) -> &'static str {
        match self {
            NetworkAlgorithm::Cube(a) => a.source(),
            NetworkAlgorithm::Dishet => "Neelakantan 2012, §4, eqs. 1-5, procedure Balance",
            NetworkAlgorithm::DishetTight => "a variant of Neelakantan 2012, §4 (LD >= 1)",
            NetworkAlgorithm::Diffusion => "Cybenko 1989; Elsasser, Monien & Preis 2002",
            NetworkAlgorithm::RandomBiasing | NetworkAlgorithm::DynamicBiasing => {
                "baselines of Neelakantan 2012 (002) §5; reading documented in rules::diffusion"
            }
            NetworkAlgorithm::Gdem => "Xu & Lau 1992",
        }
    }

    /// True for the algorithms that run on a hypercube only.
    pub fn needs_hypercube(self) -> bool {
        matches!(self, NetworkAlgorithm::Cube(_))
    }

    /// True for algorithms whose balancing uses capacities.
    pub fn uses_capacities(self) -> bool {
        match self {
            NetworkAlgorithm::Cube(a) => a.uses_capacities(),
            _ => true,
        }
    }
}

impl fmt::Display for NetworkAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for NetworkAlgorithm {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// An algorithm name that is not one of [`NetworkAlgorithm::all`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown algorithm '{0}' (expected one of: dem, dem-fixed, dem-improved, dem-hetero, oem, cwa, hybrid, dishet, dishet-tight, diffusion, random-biasing, dynamic-biasing, gdem)"
)]
pub struct UnknownNetworkAlgorithm(pub String);

impl FromStr for NetworkAlgorithm {
    type Err = UnknownNetworkAlgorithm;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::all()
            .find(|a| a.name() == s)
            .ok_or_else(|| UnknownNetworkAlgorithm(s.to_string()))
    }
}

/// Options of [`balance_on`].
#[derive(Debug, Clone, Default)]
pub struct NetworkOptions {
    /// Node capacities; `None` for equal nodes.
    pub capacities: Option<Capacities>,
    /// `P` for `hybrid`.
    pub procs_per_group: Option<usize>,
    /// Round limit of the diffusion algorithms (default [`DEFAULT_MAX_ROUNDS`]).
    pub max_rounds: Option<u64>,
    /// Seed of `random-biasing`.
    pub seed: u64,
    /// `λ` of `gdem` (default: [`Network::gdem_lambda`]).
    pub lambda: Option<f64>,
}

/// Why [`balance_on`] refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NetworkError {
    /// A hypercube algorithm refused its input.
    #[error(transparent)]
    Balance(#[from] BalanceError),
    /// The round engine refused its input.
    #[error(transparent)]
    Round(#[from] RoundError),
    /// A hypercube algorithm on another network.
    #[error(
        "{0} runs on a hypercube only (use gdem, the generalised dimension exchange, on other networks)"
    )]
    NeedsHypercube(Algorithm),
    /// A bad exchange parameter.
    #[error(transparent)]
    Lambda(#[from] LambdaError),
    /// An option the algorithm does not use.
    #[error("{algorithm} takes no {option}")]
    Unused {
        /// The option.
        option: &'static str,
        /// The algorithm.
        algorithm: NetworkAlgorithm,
    },
}

/// Balances `loads` on `network` with `algorithm`.
///
/// # Errors
/// [`NetworkError`] for a hypercube algorithm on another network, a load or capacity vector
/// of the wrong length, an overflowing total, a bad `λ`, or an option the algorithm ignores.
///
/// # Complexity
/// `O(N log N)` for the hypercube algorithms; `O(R·M log Δ)` for `R` rounds of a diffusion
/// algorithm.
///
/// # Example
/// ```
/// use hetlb_core::network_algorithm::{balance_on, NetworkAlgorithm, NetworkOptions};
/// use hetlb_core::topology::TopologySpec;
/// let options = NetworkOptions::default();
/// let cube = "hypercube:3".parse::<TopologySpec>().unwrap().build().unwrap();
/// let ring = "ring:8".parse::<TopologySpec>().unwrap().build().unwrap();
/// let loads = [8, 0, 3, 9, 2, 2, 8, 0];
/// for alg in NetworkAlgorithm::all() {
///     let run = balance_on(&cube, alg, &loads, &options).unwrap();
///     assert_eq!(run.plan.final_loads.iter().sum::<u64>(), 32);
///     assert_eq!(balance_on(&ring, alg, &loads, &options).is_ok(), !alg.needs_hypercube());
/// }
/// ```
pub fn balance_on(
    network: &Network,
    algorithm: NetworkAlgorithm,
    loads: &[u64],
    options: &NetworkOptions,
) -> Result<RoundRun, NetworkError> {
    balance_on_within(network, algorithm, loads, options, u64::MAX)
}

/// [`balance_on`], refusing a plan of more than `max_transfers` transfers (24 bytes each):
/// a hypercube algorithm before it runs (its plan has at most `N/2` transfers per
/// dimension), a diffusion algorithm in the round that passes the limit
/// ([`RoundError::TooManyTransfers`]).
///
/// # Errors
/// As [`balance_on`], and [`RoundError::TooManyTransfers`] (as [`NetworkError::Round`]).
///
/// # Example
/// ```
/// use hetlb_core::network_algorithm::{balance_on_within, NetworkAlgorithm, NetworkOptions};
/// use hetlb_core::rounds::RoundError;
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_core::network_algorithm::NetworkError;
/// let path = "path:100".parse::<TopologySpec>().unwrap().build().unwrap();
/// let mut loads = vec![0u64; 100];
/// loads[0] = 10_000;
/// let o = NetworkOptions::default();
/// let e = balance_on_within(&path, NetworkAlgorithm::Dishet, &loads, &o, 50).unwrap_err();
/// assert!(matches!(e, NetworkError::Round(RoundError::TooManyTransfers { limit: 50, .. })));
/// ```
pub fn balance_on_within(
    network: &Network,
    algorithm: NetworkAlgorithm,
    loads: &[u64],
    options: &NetworkOptions,
    max_transfers: u64,
) -> Result<RoundRun, NetworkError> {
    let unused = |option| Err(NetworkError::Unused { option, algorithm });
    if options.lambda.is_some() && algorithm != NetworkAlgorithm::Gdem {
        return unused("exchange parameter λ (only gdem has one)");
    }
    let NetworkAlgorithm::Cube(cube_algorithm) = algorithm else {
        if options.procs_per_group.is_some() {
            return unused("group size (only hybrid has one)");
        }
        let limit = max_transfers;
        return match network {
            Network::Hypercube(cube) => diffuse(cube, network, algorithm, loads, options, limit),
            Network::Graph { graph, .. } => {
                diffuse(graph, network, algorithm, loads, options, limit)
            }
        };
    };
    let Network::Hypercube(cube) = network else {
        return Err(NetworkError::NeedsHypercube(cube_algorithm));
    };
    if options.max_rounds.is_some() {
        return unused("round limit (the hypercube algorithms run one phase per dimension)");
    }
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
    let plan = balance(
        cube_algorithm,
        loads,
        &BalanceOptions {
            capacities: options.capacities.clone(),
            procs_per_group: options.procs_per_group,
        },
    )?;
    let rounds = plan.phases.len() as u64;
    Ok(RoundRun {
        plan,
        rounds,
        executed_rounds: rounds,
        converged: true,
        convergence: Convergence::Schedule,
    })
}

fn diffuse<T: Topology>(
    topology: &T,
    network: &Network,
    algorithm: NetworkAlgorithm,
    loads: &[u64],
    options: &NetworkOptions,
    max_transfers: u64,
) -> Result<RoundRun, NetworkError> {
    let round_options = RoundOptions {
        max_rounds: options.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS),
        seed: options.seed,
        max_transfers,
    };
    let caps = options.capacities.as_ref();
    fn go<T: Topology, R: NodeRule>(
        rule: &R,
        topology: &T,
        loads: &[u64],
        caps: Option<&Capacities>,
        o: &RoundOptions,
    ) -> Result<RoundRun, NetworkError> {
        Ok(run_rounds(rule, topology, loads, caps, o)?)
    }
    match algorithm {
        NetworkAlgorithm::Dishet => go(&Dishet, topology, loads, caps, &round_options),
        NetworkAlgorithm::DishetTight => go(&DishetTight, topology, loads, caps, &round_options),
        NetworkAlgorithm::Diffusion => go(
            &FirstOrder::new(Rounding::Nearest),
            topology,
            loads,
            caps,
            &round_options,
        ),
        NetworkAlgorithm::RandomBiasing => go(
            &FirstOrder::new(Rounding::Random),
            topology,
            loads,
            caps,
            &round_options,
        ),
        NetworkAlgorithm::DynamicBiasing => go(
            &FirstOrder::new(Rounding::Biased),
            topology,
            loads,
            caps,
            &round_options,
        ),
        NetworkAlgorithm::Gdem => {
            let colouring = network.edge_colouring();
            let lambda = options.lambda.unwrap_or_else(|| network.gdem_lambda());
            let rule = Gdem::new(&colouring, lambda)?;
            go(&rule, topology, loads, caps, &round_options)
        }
        NetworkAlgorithm::Cube(a) => Err(NetworkError::NeedsHypercube(a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::TopologySpec;

    fn net(s: &str) -> Network {
        s.parse::<TopologySpec>().unwrap().build().unwrap()
    }

    #[test]
    fn names_round_trip() {
        for a in NetworkAlgorithm::all() {
            assert_eq!(a.name().parse::<NetworkAlgorithm>().unwrap(), a);
        }
        assert_eq!(NetworkAlgorithm::all().count(), 13);
        assert!("dishet2".parse::<NetworkAlgorithm>().is_err());
    }

    #[test]
    fn cube_algorithms_give_what_balance_gives() {
        let loads = [4, 7, 0, 9, 2, 2, 8, 1];
        for a in Algorithm::ALL {
            let run = balance_on(
                &net("hypercube:3"),
                NetworkAlgorithm::Cube(a),
                &loads,
                &NetworkOptions::default(),
            )
            .unwrap();
            assert_eq!(
                run.plan,
                balance(a, &loads, &BalanceOptions::default()).unwrap()
            );
            assert_eq!(run.convergence, Convergence::Schedule);
        }
    }

    #[test]
    fn misuse_is_refused() {
        let o = NetworkOptions::default();
        let ring = net("ring:8");
        assert_eq!(
            balance_on(&ring, NetworkAlgorithm::Cube(Algorithm::Dem), &[0; 8], &o),
            Err(NetworkError::NeedsHypercube(Algorithm::Dem))
        );
        let lambda = NetworkOptions {
            lambda: Some(0.7),
            ..NetworkOptions::default()
        };
        assert!(matches!(
            balance_on(&ring, NetworkAlgorithm::Dishet, &[0; 8], &lambda),
            Err(NetworkError::Unused { .. })
        ));
        assert!(balance_on(&ring, NetworkAlgorithm::Gdem, &[0; 8], &lambda).is_ok());
        let bad = NetworkOptions {
            lambda: Some(1.0),
            ..NetworkOptions::default()
        };
        assert!(matches!(
            balance_on(&ring, NetworkAlgorithm::Gdem, &[0; 8], &bad),
            Err(NetworkError::Lambda(_))
        ));
        assert!(matches!(
            balance_on(&ring, NetworkAlgorithm::Diffusion, &[0; 7], &o),
            Err(NetworkError::Round(RoundError::NodeCount { .. }))
        ));
        assert!(matches!(
            balance_on(
                &net("hypercube:2"),
                NetworkAlgorithm::Cube(Algorithm::Oem),
                &[0; 8],
                &o
            ),
            Err(NetworkError::Round(RoundError::NodeCount { .. }))
        ));
    }
}
