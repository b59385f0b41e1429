//! The engine-neutral interface of a balancing policy: what a policy sees of a running system
//! ([`View`]), what it answers ([`Order`]), and the [`Policy`] trait that the simulator
//! (`hetlb-sim`) and the runtime's scenarios on real workers both drive, so that the same
//! decision code runs in both.

use crate::BalanceError;
use crate::algorithm::Algorithm;
use crate::rules::delay_aware::{DelayAwareError, DelayAwareTransfer};
use crate::topology::Network;
use serde::Serialize;
use thiserror::Error;

/// The last load a node reported to its neighbours, and when.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Reported {
    /// Tasks held at the report.
    pub load: u64,
    /// Time of the report in seconds.
    pub time: f64,
}

/// A policy's read-only view of the running system.
pub trait View {
    /// Current time in seconds.
    fn now(&self) -> f64;
    /// Number of nodes.
    fn node_count(&self) -> usize;
    /// Tasks held by `node` now (queued and in service).
    fn load(&self, node: usize) -> u64;
    /// Mean execution rate of `node` in tasks per second.
    fn rate(&self, node: usize) -> f64;
    /// The neighbours of `node`, sorted.
    fn neighbors(&self, node: usize) -> &[usize];
    /// `(rate, mean delay)` of the link `from → to`, `None` when not adjacent.
    fn link(&self, from: usize, to: usize) -> Option<(f64, f64)>;
    /// The last status report of `node`.
    fn reported(&self, node: usize) -> Reported;

    /// Appends the load of every node, in node order, to `out` (what a global balancing
    /// reads; engines override it with one pass over their state).
    fn loads_into(&self, out: &mut Vec<u64>) {
        out.extend((0..self.node_count()).map(|i| self.load(i)));
    }

    /// Every node's load, in node order, when the engine keeps them in one array (for a
    /// policy that [reads all loads](Policy::reads_all_loads)): a global balancing then reads
    /// them where they are instead of copying them with [`View::loads_into`]. `None` by default.
    fn all_loads(&self) -> Option<&[u64]> {
        None
    }

    /// The network, for policies whose rules read its structure (degrees, colourings).
    fn network(&self) -> Option<&Network> {
        None
    }
}

/// How an order's tasks travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    /// Over the link: queued behind earlier transfers on it, `tasks / rate` seconds on the
    /// wire, then the link's delay.
    Link,
    /// At once, with no time passing (a synchronous collective such as a hypercube balance).
    Instant,
    /// Over the link to `via`, then over the link `via → to` (two hops, each queued behind
    /// earlier transfers on its link); the tasks do not enter `via`'s queue. For a sender and
    /// receiver that are not adjacent but share a neighbour.
    Relay {
        /// The node in between.
        via: usize,
    },
}

/// Move up to `tasks` tasks from `from` to `to` (the most recently queued ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Order {
    /// Sending node.
    pub from: usize,
    /// Receiving node.
    pub to: usize,
    /// Number of tasks.
    pub tasks: u64,
    /// How they travel.
    pub delivery: Delivery,
}

/// One decision of the delay-aware policy, for the report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// When it was taken.
    pub time: f64,
    /// The centre node.
    pub centre: usize,
    /// The transfers carried out: the centre's own, or the whole plan
    /// (the whole neighbourhood).
    pub transfers: Vec<DelayAwareTransfer>,
}

/// What a policy did, for the report.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct PolicyStats {
    /// Number of balancing operations.
    pub balancings: u64,
    /// Mean over balancings of max − min load right after balancing.
    pub mean_max_difference_after: Option<f64>,
    /// Mean over balancings of the largest load right after balancing.
    pub mean_max_load_after: Option<f64>,
    /// Mean over balancings of the average load right after balancing.
    pub mean_load_after: Option<f64>,
    /// Mean over balancings of total load / largest load right after balancing: the speedup
    /// over one processor of executing the balanced loads if nothing else arrived (Rim, Jang & Kim 2003 §4:
    /// the processing time after balancing is set by the most loaded processor).
    pub mean_batch_speedup: Option<f64>,
    /// The delay-aware decisions, in time order.
    pub decisions: Vec<DecisionRecord>,
}

/// Why a policy could not decide.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// The delay-aware rule refused its input.
    #[error(transparent)]
    DelayAware(#[from] DelayAwareError),
    /// A hypercube algorithm refused its input.
    #[error(transparent)]
    Balance(#[from] BalanceError),
    /// The diffusion policy could not run.
    #[error(transparent)]
    Diffusion(#[from] DiffusionError),
}

/// A balancing policy.
pub trait Policy {
    /// A short name for reports.
    fn name(&self) -> String;

    /// External load was just injected into `node`.
    ///
    /// # Errors
    /// When the policy's rule refuses its input.
    fn on_injection(
        &mut self,
        _view: &dyn View,
        _node: usize,
        _orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        Ok(())
    }

    /// One external task just arrived at `node`.
    ///
    /// # Errors
    /// When the policy's rule refuses its input.
    fn on_arrival(
        &mut self,
        _view: &dyn View,
        _node: usize,
        _orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        Ok(())
    }

    /// Whether the policy reads status reports (the engine then refreshes them).
    fn uses_reports(&self) -> bool {
        false
    }

    /// Whether the policy reads every node's load at once ([`View::loads_into`]) at many of
    /// its calls: a host may then keep the loads in one array, updated where a load changes,
    /// so that such a read is one copy of contiguous memory instead of a visit to every
    /// node. A hint: the loads read are the same either way.
    fn reads_all_loads(&self) -> bool {
        false
    }

    /// Seconds between periodic rounds, for a policy that balances in rounds: the engine then
    /// calls [`Policy::on_round`] at `0, interval, 2·interval, …` while work remains.
    fn round_interval(&self) -> Option<f64> {
        None
    }

    /// A periodic round (see [`Policy::round_interval`]).
    ///
    /// # Errors
    /// When the policy's rule refuses its input.
    fn on_round(&mut self, _view: &dyn View, _orders: &mut Vec<Order>) -> Result<(), PolicyError> {
        Ok(())
    }

    /// What the policy did.
    fn stats(&self) -> PolicyStats {
        PolicyStats::default()
    }
}

/// Never balances.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoBalancing;

impl Policy for NoBalancing {
    fn name(&self) -> String {
        "none".into()
    }
}

/// A diffusion rule that is not one of the five, or a bad λ.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DiffusionError {
    /// Not a diffusion algorithm.
    #[error(
        "{0} is not a diffusion algorithm (expected dishet, dishet-tight, diffusion, random-biasing, dynamic-biasing or gdem)"
    )]
    NotDiffusion(Algorithm),
    /// λ outside `(0, 1)`, or given to another rule than `gdem`.
    #[error("λ = {lambda} for {algorithm}: only gdem takes λ, strictly between 0 and 1")]
    Lambda {
        /// The value.
        lambda: f64,
        /// The rule.
        algorithm: Algorithm,
    },
    /// An interval that is not positive and finite.
    #[error("interval {0} must be positive and finite")]
    Interval(f64),
    /// The engine gave no network to decide on.
    #[error("the diffusion policy needs the network from its view")]
    NoNetwork,
}
