//! Faults injected into a rank's call, to show and test what the other ranks do (the fault
//! harness `tests/peer/faults.rs`, demonstrations). Compiled only with the feature
//! `fault-injection`, which this crate's own tests enable; in any other build a [`Fault`] is
//! an empty value and every hook below does nothing, so no production path can panic or stall
//! on purpose.

#[cfg(feature = "fault-injection")]
mod injected {
    use std::time::Duration;

    /// A fault to inject into one rank's rebalance. The `…AfterSends` faults strike after this
    /// rank has sent `k` item messages in the call (never, when it sends fewer); the
    /// `…AfterVote` faults strike right after this rank has voted in the closing agreement
    /// (when the call moves anything).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    #[non_exhaustive]
    pub enum Fault {
        /// No fault.
        #[default]
        None,
        /// Panic after sending `k` item messages (a crash in the middle of a move: the rank's
        /// items die with it).
        PanicAfterSends(u32),
        /// Stop answering after sending `k` item messages, for the given time, then carry on
        /// (as a process stopped with SIGSTOP and continued).
        FreezeAfterSends(u32, Duration),
        /// Give the call up after sending `k` item messages, as a rank that hits an error of
        /// its own would: the call aborts on every rank.
        LeaveAfterSends(u32),
        /// Panic right after voting (a crash in the uncertain part of the call).
        PanicAfterVote,
        /// Stop answering right after voting, for the given time, then carry on.
        FreezeAfterVote(Duration),
        /// Stop waiting for the outcome right after voting. The rank does not roll back on its
        /// own: see [`PeerError::InDoubt`](crate::PeerError::InDoubt).
        LeaveAfterVote,
    }

    impl Fault {
        /// True for the faults that strike right after the vote.
        pub(crate) fn after_vote(self) -> bool {
            matches!(
                self,
                Fault::PanicAfterVote | Fault::FreezeAfterVote(_) | Fault::LeaveAfterVote
            )
        }
    }
}

#[cfg(feature = "fault-injection")]
pub use injected::Fault;

/// No fault: without the feature `fault-injection` there is nothing to inject.
#[cfg(not(feature = "fault-injection"))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Fault {
    /// No fault.
    #[default]
    None,
}

#[cfg(not(feature = "fault-injection"))]
impl Fault {
    /// Never: there are no faults to strike.
    pub(crate) fn after_vote(self) -> bool {
        false
    }
}
