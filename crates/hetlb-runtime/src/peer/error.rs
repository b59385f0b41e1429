//! What can go wrong in a collective rebalance.

use thiserror::Error;

/// How a peer failed.
#[derive(Debug, Clone, PartialEq, Error)]
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
    /// The peer's balancer was dropped (the rank left the group) in the middle of a rebalance.
    #[error("left the group during the rebalance")]
    Left,
}

/// Why a rebalance (or the construction of a [`Balancer`](super::Balancer)) failed.
///
/// After any error but [`PeerError::FailedAfterMove`], this rank holds exactly the items it
/// held before the call (possibly in another order).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum PeerError {
    /// Bad arguments, found before anything moved.
    #[error("{0}")]
    Config(String),
    /// A peer failed; this rank noticed it and told the others.
    #[error("rank {rank} {failure}")]
    PeerFailed {
        /// The failed rank.
        rank: usize,
        /// How.
        failure: PeerFailure,
    },
    /// Another rank stopped the rebalance because of a failure it noticed.
    #[error("rank {by} stopped the rebalance: {reason}")]
    Aborted {
        /// The rank that stopped it.
        by: usize,
        /// The failed rank, when known.
        culprit: Option<usize>,
        /// Its explanation.
        reason: String,
    },
    /// A peer failed after every transfer was complete, while the ranks agreed on the outcome:
    /// the move stands (this rank holds the new distribution) but the group has lost a rank.
    #[error("rank {rank} {failure} after the move was complete (the move stands)")]
    FailedAfterMove {
        /// The failed rank.
        rank: usize,
        /// How.
        failure: PeerFailure,
    },
    /// The ranks do not agree on the call (different rules, topologies or epochs).
    #[error("ranks disagree: {0}")]
    Mismatch(String),
    /// The rule refused the gathered loads (an overflowing total, for instance).
    #[error("the rule refused the loads: {0}")]
    Plan(String),
    /// A message could not be moved.
    #[error("transport: {0}")]
    Transport(String),
}

impl PeerError {
    /// The rank that failed, when the error names one.
    pub fn culprit(&self) -> Option<usize> {
        match self {
            PeerError::PeerFailed { rank, .. } | PeerError::FailedAfterMove { rank, .. } => {
                Some(*rank)
            }
            PeerError::Aborted { culprit, .. } => *culprit,
            _ => None,
        }
    }
}
