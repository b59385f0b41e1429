//! A timed barrier for an application's own synchronisation between calls.

use super::error::{PeerError, PeerFailure};
use super::gather::barrier;
use super::session::{Mailbox, Session, SessionSettings};
use super::wire::Msg;
use hetlb_transport::{Group, Liveness, Transport};
use std::time::Duration;

/// A barrier that reports a rank that stopped instead of waiting for it forever: where an
/// application would call `MPI_Barrier` between two steps, every rank calls
/// [`SyncPoint::wait`]; if a rank has stopped (a process stopped with `SIGSTOP`, a thread that
/// died), every other rank returns an error naming it within about the timeout. A rank that is
/// only busy is never reported where the transport proves liveness outside calls (threads,
/// MPI with a progress thread).
///
/// # Example
/// ```
/// use hetlb_peer::SyncPoint;
/// use hetlb_transport::threads;
/// use std::time::Duration;
/// let handles: Vec<_> = threads::group(3)
///     .into_iter()
///     .map(|m| std::thread::spawn(move || {
///         let mut sync = SyncPoint::new(&m, Duration::from_secs(10)).unwrap();
///         (0..5).try_for_each(|_| sync.wait())
///     }))
///     .collect();
/// assert!(handles.into_iter().all(|h| h.join().unwrap().is_ok()));
/// ```
pub struct SyncPoint<G: Group> {
    ep: G::Endpoint<Msg<()>>,
    mailbox: Mailbox<()>,
    epoch: u64,
    timeout: Duration,
}

impl<G: Group> std::fmt::Debug for SyncPoint<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncPoint")
            .field("rank", &self.ep.rank())
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl<G: Group> SyncPoint<G> {
    /// A barrier of `group`'s ranks judging silence by `timeout`; opens its own endpoint
    /// (open it at the same point on every rank).
    ///
    /// # Errors
    /// [`PeerError::Config`] for a zero timeout; [`PeerError::Transport`] when the endpoint
    /// cannot be opened.
    pub fn new(group: &G, timeout: Duration) -> Result<Self, PeerError> {
        if timeout.is_zero() {
            return Err(PeerError::invalid("timeout: must be positive"));
        }
        Ok(Self {
            ep: group.open()?,
            mailbox: Mailbox::new(group.size()),
            epoch: 0,
            timeout,
        })
    }

    /// Waits until every rank has called it.
    ///
    /// # Errors
    /// [`PeerError::PeerFailed`] (this rank found the failure) or [`PeerError::Aborted`]
    /// (another rank did, and names it as the culprit).
    ///
    /// # Complexity
    /// `⌈log₂ P⌉` rounds of one message each way.
    pub fn wait(&mut self) -> Result<(), PeerError> {
        self.epoch += 1;
        if let Some(ledger) = self.ep.ledger() {
            ledger.release(self.ep.rank(), self.epoch);
        }
        let mut session = Session::new(
            &self.ep,
            &mut self.mailbox,
            SessionSettings {
                epoch: self.epoch,
                timeout: self.timeout,
                entry_timeout: None,
                started: self.ep.now(),
                count_bytes: false,
            },
        );
        let result = barrier(&mut session).map_err(|e| session.give_up(e));
        session.finish();
        result
    }

    /// Checks every peer's liveness now without waiting: an error names the first peer that
    /// is gone, or silent for longer than the timeout where the transport proves liveness
    /// outside calls.
    ///
    /// # Errors
    /// [`PeerError::PeerFailed`] naming the peer.
    pub fn check(&mut self) -> Result<(), PeerError> {
        // What is waiting is read first (kept for the barriers it belongs to).
        while let Some(r) = self.ep.try_recv()? {
            if r.msg.epoch() > self.epoch {
                self.mailbox.later.push_back(r);
            }
        }
        check_peers(&self.ep, self.timeout)
    }
}

/// See [`SyncPoint::check`].
pub(crate) fn check_peers<M, E: Transport<M>>(ep: &E, timeout: Duration) -> Result<(), PeerError> {
    let proves = ep.proves_liveness_outside_calls();
    for peer in (0..ep.size()).filter(|&p| p != ep.rank()) {
        let failure = match ep.liveness(peer) {
            Liveness::Alive => continue,
            Liveness::Closed { panicked: Some(m) } => PeerFailure::Panicked(m),
            Liveness::Closed { panicked: None } => PeerFailure::Left,
            Liveness::Silent(d) if proves && d > timeout => PeerFailure::Silent {
                seconds: d.as_secs_f64(),
                timeout: timeout.as_secs_f64(),
            },
            Liveness::Silent(_) => continue,
        };
        return Err(PeerError::PeerFailed {
            rank: peer,
            failure,
        });
    }
    Ok(())
}
