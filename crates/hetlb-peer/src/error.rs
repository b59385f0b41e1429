//! What can go wrong in a collective rebalance, and what a rank holds afterwards.

use super::store::RecordError;
use hetlb_core::advice::AdviceError;
use hetlb_core::algorithm::{BalanceError, UnknownAlgorithm};
use hetlb_core::model::ModelError;
use hetlb_core::topology::{BuildError, GraphError, SpecError};
use hetlb_transport::TransportError;
use std::sync::Arc;
use thiserror::Error;

/// A mistake in a balancer's configuration, found before anything moved.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A rule name that is not one of hetlb's.
    #[error("unknown rule '{}' (expected one of: {known})", source.0)]
    UnknownRule {
        /// The parser's error.
        #[source]
        source: UnknownAlgorithm,
        /// The known rules, comma-separated.
        known: String,
    },
    /// A topology spec that cannot be parsed.
    #[error("topology: {0}")]
    TopologySpec(#[source] SpecError),
    /// A topology that cannot be built (or whose file cannot be read).
    #[error("topology: {0}")]
    Topology(#[source] Arc<BuildError>),
    /// A topology whose graph cannot be built.
    #[error("topology: {0}")]
    Graph(#[source] Box<GraphError>),
    /// A cost model with a bad coefficient.
    #[error("{0}")]
    CostModel(#[source] AdviceError),
    /// Records (fixed-size items of a foreign array) that cannot be balanced; `argument`
    /// names the argument that holds them, where a face has one.
    #[error("{}{source}", argument.map_or(String::new(), |a| format!("{a}: ")))]
    Records {
        /// The argument, as the face names it (`arr`).
        argument: Option<&'static str>,
        /// Why.
        #[source]
        source: RecordError,
    },
    /// An option's value refused, or options that do not fit together or with the group
    /// (a trigger without measured speeds, capacities for another rank count …); `name` is
    /// the option as the options table spells it ([`crate::options::OPTIONS`]), so that a
    /// face can print it in its own spelling.
    #[error("{name}: {reason}")]
    Option {
        /// The option (`timeout`, `move_cost`, …; `rule` for the rule).
        name: &'static str,
        /// Why it is refused.
        reason: String,
    },
    /// An option name that is not in the table.
    #[error("unknown option '{name}' (known: {known})")]
    UnknownOption {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// An options string that is not `key=value` pairs separated by `;`.
    #[error("{0}")]
    Syntax(String),
    /// Settings that do not fit the group as a whole (no ranks at all), described.
    #[error("{0}")]
    Invalid(String),
}

impl ConfigError {
    /// An [`ConfigError::Option`] error.
    pub fn option(name: &'static str, reason: impl Into<String>) -> Self {
        ConfigError::Option {
            name,
            reason: reason.into(),
        }
    }

    /// The option the error is about, as the options table spells it (`rule` for the rule,
    /// `topology` for a topology that cannot be parsed, built or read).
    pub fn option_name(&self) -> Option<&'static str> {
        match self {
            ConfigError::Option { name, .. } => Some(name),
            ConfigError::UnknownRule { .. } => Some("rule"),
            ConfigError::TopologySpec(_) | ConfigError::Topology(_) | ConfigError::Graph(_) => {
                Some("topology")
            }
            ConfigError::CostModel(_) => Some("move_cost"),
            _ => None,
        }
    }

    /// What is wrong, without the option's name in front: a face prints it after the
    /// option in its own spelling (`--move-cost: …`).
    pub fn reason(&self) -> String {
        match self {
            ConfigError::Option { reason, .. } => reason.clone(),
            ConfigError::TopologySpec(e) => e.to_string(),
            ConfigError::Topology(e) => e.to_string(),
            ConfigError::Graph(e) => e.to_string(),
            other => other.to_string(),
        }
    }
}

impl PartialEq for ConfigError {
    /// Equal when of the same kind and saying the same (a build error holds an I/O error,
    /// which has no equality of its own).
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
            && self.to_string() == other.to_string()
    }
}

impl From<BuildError> for ConfigError {
    fn from(e: BuildError) -> Self {
        ConfigError::Topology(Arc::new(e))
    }
}

impl From<GraphError> for ConfigError {
    fn from(e: GraphError) -> Self {
        ConfigError::Graph(Box::new(e))
    }
}

/// Why the rule could not decide a call's move from the gathered loads.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PlanError {
    /// The gathered capacities were refused.
    #[error("capacities: {0}")]
    Capacities(#[source] ModelError),
    /// The rule refused the loads (an overflowing total, for instance).
    #[error("{0}")]
    Rule(#[source] BalanceError),
    /// Routing the plan failed (a plan that does not conserve its load: a defect).
    #[error("routing: {0}")]
    Routing(#[source] Box<hetlb_core::routing::RoutingError>),
    /// A rank outside the group was named.
    #[error("rank {rank} is not in a group of {size}")]
    NotInGroup {
        /// The rank named.
        rank: usize,
        /// The group's size.
        size: usize,
    },
    /// The plan has more transfers than a call numbers.
    #[error("the plan has more than 2^32 transfers")]
    TooManyTransfers,
    /// Advice needs every rank's measured speed.
    #[error(
        "advise needs every rank's measured speed: configure Speeds::Measured and record a \
         step on every rank first"
    )]
    SpeedsNotMeasured,
    /// A rank's units (the sum of its items' loads) overflow `u64`.
    #[error("rank {rank}'s units overflow u64")]
    UnitsOverflow {
        /// The rank.
        rank: usize,
    },
    /// This rank's item positions cannot be used (one not finite, or some items without).
    #[error("positions: {0}")]
    Positions(String),
}

/// How a peer failed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PeerFailure {
    /// The peer sent nothing (not even a heartbeat) for longer than the timeout.
    #[error("stopped answering: nothing heard for {seconds:.1} s (timeout {timeout:.1} s)")]
    Silent {
        /// Seconds of silence when it was judged.
        seconds: f64,
        /// The timeout in force.
        timeout: f64,
    },
    /// The peer's balancer was dropped while its thread panicked.
    #[error("panicked: {0}")]
    Panicked(String),
    /// The peer's balancer was dropped (the rank left the group) in the middle of a call.
    #[error("left the group during the call")]
    Left,
    /// The peer did not reach the call within the entry timeout, and did not answer when
    /// asked whether it had (busy elsewhere, stopped, or calling something else).
    #[error("did not reach call {epoch} within {timeout:.1} s")]
    NotArrived {
        /// The call.
        epoch: u64,
        /// The entry timeout in force, seconds.
        timeout: f64,
    },
}

/// What this rank holds after a call that returned an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Holding {
    /// Exactly the items it held before the call (in another order, possibly): the call was
    /// rolled back on every rank, or nothing had moved.
    Before,
    /// The items the move involves — the originals this rank sent and the items it received
    /// — are kept aside by the balancer until the call's outcome is known
    /// ([`Balancer::resolve`](super::Balancer::resolve)); the application's vector holds
    /// the rest of this rank's items.
    InDoubt {
        /// Items kept aside.
        items_aside: u64,
    },
}

/// Why a rebalance (or the construction of a [`Balancer`](super::Balancer)) failed.
///
/// After any error but [`PeerError::InDoubt`], this rank holds exactly the items it held
/// before the call, and so does every rank of the group that is still running: a call that
/// fails is rolled back everywhere ([`PeerError::holding`]).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PeerError {
    /// Bad arguments, found before anything moved.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// A peer failed; this rank noticed it, and the call was rolled back.
    #[error("rank {rank} {failure}")]
    PeerFailed {
        /// The failed rank.
        rank: usize,
        /// How.
        failure: PeerFailure,
    },
    /// A rank refused the call: its own arguments failed a check (a bad load, a size that
    /// overflows …), or it gave up on its own. It joined the call only to stop it, so every
    /// rank returns at once; the call was rolled back, and the group goes on.
    #[error("rank {rank} refused the call: {reason}")]
    Refused {
        /// The rank that refused.
        rank: usize,
        /// Why, as that rank said.
        reason: String,
    },
    /// Another rank gave up the call because of a failure it noticed; the call was rolled
    /// back.
    #[error("rank {by} stopped the call: {reason}")]
    Aborted {
        /// The rank that stopped it.
        by: usize,
        /// The failed rank, when known.
        culprit: Option<usize>,
        /// Its explanation.
        reason: String,
    },
    /// This rank had finished its part of the move when the rank that decides the call's
    /// outcome fell silent: the outcome is not known here yet. The items the move involves
    /// are kept aside until it is ([`Holding::InDoubt`]). Happens only where the ranks share
    /// no memory (MPI).
    #[error(
        "the outcome of call {epoch} is not known on this rank: {reason}; {items_aside} \
         items are kept aside until it is"
    )]
    InDoubt {
        /// The call.
        epoch: u64,
        /// The rank that decides the outcome.
        coordinator: usize,
        /// Why it is not known (the deciding rank fell silent, say).
        reason: String,
        /// Items kept aside by the balancer.
        items_aside: u64,
    },
    /// A call's outcome is still in doubt: [`Balancer::resolve`](super::Balancer::resolve)
    /// must settle it before another call.
    #[error(
        "the outcome of call {epoch} is still in doubt ({items_aside} items kept aside); \
         call resolve first"
    )]
    Unresolved {
        /// The call in doubt.
        epoch: u64,
        /// Items kept aside.
        items_aside: u64,
    },
    /// The ranks do not agree on the call (different rules, topologies or epochs).
    #[error("ranks disagree: {0}")]
    Mismatch(String),
    /// The rule refused the gathered loads (an overflowing total, for instance).
    #[error("the rule refused the loads: {0}")]
    Plan(#[from] PlanError),
    /// A message could not be moved.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// This rank could not make room for the items it would hold after the move (memory ran
    /// out, or a foreign buffer could not grow); it gave the call up, and the call was rolled
    /// back.
    #[error("item storage: {0}")]
    Storage(String),
    /// An injected fault made this rank give up the call (tests and demonstrations).
    #[error("rank {rank} gave up the call (injected fault)")]
    GaveUp {
        /// This rank.
        rank: usize,
    },
    /// An earlier call found rank `rank` failed (silent, gone, or not arriving): the group
    /// has lost it and must end. Every call after it fails at once, without a message.
    #[error(
        "the group lost rank {rank} at call {epoch} ({reason}); it cannot balance any more \
         and must end"
    )]
    GroupLost {
        /// The rank lost.
        rank: usize,
        /// The call that found it.
        epoch: u64,
        /// How it failed, as first reported.
        reason: String,
    },
    /// The other ranks found this rank failed at call `epoch` (it was stopped, or did not
    /// reach the call in time) and went on without it: this rank may not balance with them
    /// any more, and must end.
    #[error(
        "this rank was found failed by the group at call {epoch} ({reason}); it cannot \
         balance any more and must end"
    )]
    Excluded {
        /// The call.
        epoch: u64,
        /// How the others saw it.
        reason: String,
    },
}

impl From<BalanceError> for PeerError {
    fn from(e: BalanceError) -> Self {
        PeerError::Plan(PlanError::Rule(e))
    }
}

impl PeerError {
    /// A [`ConfigError::Invalid`] saying `message`.
    pub fn invalid(message: impl Into<String>) -> Self {
        PeerError::Config(ConfigError::Invalid(message.into()))
    }

    /// The rank that failed, or refused the call, when the error names one.
    pub fn culprit(&self) -> Option<usize> {
        match self {
            PeerError::PeerFailed { rank, .. }
            | PeerError::Refused { rank, .. }
            | PeerError::GaveUp { rank }
            | PeerError::GroupLost { rank, .. } => Some(*rank),
            PeerError::Aborted { culprit, .. } => *culprit,
            PeerError::InDoubt { coordinator, .. } => Some(*coordinator),
            _ => None,
        }
    }

    /// True when the error means the group lost a rank (found failed, by this rank or
    /// another): the calls after it fail ([`PeerError::GroupLost`]). A call refused by a rank,
    /// or rolled back for any other reason, leaves the group whole.
    pub fn loses_a_rank(&self) -> bool {
        matches!(
            self,
            PeerError::PeerFailed { .. }
                | PeerError::Aborted {
                    culprit: Some(_),
                    ..
                }
                | PeerError::GroupLost { .. }
                | PeerError::Excluded { .. }
        )
    }

    /// What this rank holds now.
    pub fn holding(&self) -> Holding {
        match self {
            PeerError::InDoubt { items_aside, .. } | PeerError::Unresolved { items_aside, .. } => {
                Holding::InDoubt {
                    items_aside: *items_aside,
                }
            }
            _ => Holding::Before,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BalancerConfig;
    use std::error::Error as _;

    /// The chain of causes of `e`, outermost first.
    fn chain(e: &dyn std::error::Error) -> Vec<String> {
        let mut out = vec![e.to_string()];
        let mut next = e.source();
        while let Some(s) = next {
            out.push(s.to_string());
            next = s.source();
        }
        out
    }

    #[test]
    fn config_errors_keep_their_source() {
        let e = BalancerConfig::new("nope").unwrap_err();
        assert!(matches!(
            e,
            PeerError::Config(ConfigError::UnknownRule { .. })
        ));
        assert!(e.to_string().starts_with("unknown rule 'nope'"), "{e}");
        assert!(e.to_string().contains("(expected one of: dem,"), "{e}");
        let causes = chain(&e);
        assert!(causes.len() >= 3, "{causes:?}");
        assert_eq!(
            causes.last().unwrap(),
            &UnknownAlgorithm("nope".into()).to_string()
        );

        let e = BalancerConfig::new("dem")
            .unwrap()
            .topology("file:/nonexistent/hetlb-graph")
            .unwrap_err();
        assert!(matches!(e, PeerError::Config(ConfigError::Topology(_))));
        assert!(e.to_string().starts_with("topology: cannot read"), "{e}");
        // Down to the reader's error (which is the operating system's).
        let mut io = false;
        let mut next = e.source();
        while let Some(s) = next {
            io |= s
                .downcast_ref::<hetlb_core::text_file::ReadError>()
                .is_some();
            next = s.source();
        }
        assert!(io, "{:?}", chain(&e));

        let e = BalancerConfig::new("dem")
            .unwrap()
            .topology("ring")
            .unwrap_err();
        assert!(matches!(e, PeerError::Config(ConfigError::TopologySpec(_))));
    }

    #[test]
    fn plan_errors_keep_their_source() {
        let round = hetlb_core::rounds::RoundError::NodeCount { loads: 3, nodes: 4 };
        let e = PeerError::from(BalanceError::from(round.clone()));
        assert!(matches!(e, PeerError::Plan(PlanError::Rule(_))));
        assert_eq!(
            e.to_string(),
            "the rule refused the loads: 3 loads given for a network of 4 nodes"
        );
        let causes = chain(&e);
        assert_eq!(causes.last().unwrap(), &round.to_string());
        let e: PeerError = PlanError::UnitsOverflow { rank: 3 }.into();
        assert_eq!(
            e.to_string(),
            "the rule refused the loads: rank 3's units overflow u64"
        );
    }
}
