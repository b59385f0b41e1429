//! What can go wrong in a collective rebalance, and what a rank holds afterwards.

use crate::transport::TransportError;
use thiserror::Error;

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
    Config(String),
    /// A peer failed; this rank noticed it, and the call was rolled back.
    #[error("rank {rank} {failure}")]
    PeerFailed {
        /// The failed rank.
        rank: usize,
        /// How.
        failure: PeerFailure,
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
    Plan(String),
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
}

impl PeerError {
    /// The rank that failed, when the error names one.
    pub fn culprit(&self) -> Option<usize> {
        match self {
            PeerError::PeerFailed { rank, .. } => Some(*rank),
            PeerError::Aborted { culprit, .. } => *culprit,
            PeerError::InDoubt { coordinator, .. } => Some(*coordinator),
            PeerError::GaveUp { rank } => Some(*rank),
            _ => None,
        }
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
