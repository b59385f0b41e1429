//! A call whose outcome this rank does not know yet (MPI: the coordinator fell silent after
//! this rank voted): the items it involves wait aside until the decision arrives
//! ([`Balancer::resolve`]) or a test settles them with an outcome it knows.

use super::Balancer;
use crate::error::{PeerError, PeerFailure};
use crate::holdings::Aside;
use crate::session::{TICK, take_ask};
use crate::store::{ItemKind, Storage};
use crate::wire::{Msg, WireOutcome};
use hetlb_transport::{Envelope, Group, Liveness, Transport};

/// A call whose outcome this rank does not know yet, and the items it keeps aside meanwhile.
pub(super) struct Doubt<C> {
    pub(super) epoch: u64,
    pub(super) coordinator: usize,
    pub(super) aside: Aside<C>,
}

impl<K: ItemKind, G: Group> Balancer<K, G> {
    /// Waits (up to the timeout) for the decision of the call in doubt, then puts back what
    /// it gives this rank; does nothing when no call is in doubt.
    pub(super) fn resolve_in<S: Storage<K>>(&mut self, items: &mut S) -> Result<(), PeerError> {
        let Some(doubt) = self.doubt.take() else {
            return Ok(());
        };
        let deadline = self.ep.now() + self.config.options.timeout;
        loop {
            if let Some((e, Some(env))) = &self.mailbox.doubt {
                debug_assert_eq!(*e, doubt.epoch);
                let committed = matches!(
                    env.msg,
                    Msg::Decision {
                        outcome: WireOutcome::Commit(_),
                        ..
                    }
                );
                return self.settle_with(doubt, items, committed).map_err(|e| {
                    // The decision stays in the mailbox: a later resolve settles it.
                    let (epoch, coordinator) = (self.doubt_epoch(), self.doubt_coordinator());
                    PeerError::InDoubt {
                        epoch,
                        coordinator,
                        reason: format!(
                            "the outcome is known but the items cannot be put back: {e}"
                        ),
                        items_aside: self.items_aside(),
                    }
                });
            }
            // What is waiting is read before the coordinator is judged: the decision may be
            // among it (from the coordinator, or from this rank's parent in the tree).
            let mut read = false;
            while let Some(r) = self.ep.try_recv()? {
                self.file_while_in_doubt(r, doubt.epoch);
                read = true;
            }
            if read {
                continue;
            }
            let now = self.ep.now();
            let liveness = self.ep.liveness(doubt.coordinator);
            if now >= deadline || matches!(liveness, Liveness::Closed { .. }) {
                let err = self.still_in_doubt(&doubt, &liveness);
                self.doubt = Some(doubt);
                return Err(err);
            }
            self.ep.keep_alive();
            if let Some(r) = self.ep.recv(Some((now + TICK).min(deadline)))? {
                self.file_while_in_doubt(r, doubt.epoch);
            }
        }
    }

    fn doubt_epoch(&self) -> u64 {
        self.doubt.as_ref().map_or(0, |d| d.epoch)
    }

    fn doubt_coordinator(&self) -> usize {
        self.doubt.as_ref().map_or(0, |d| d.coordinator)
    }

    /// The error of a call still in doubt after the wait: why the coordinator did not decide.
    fn still_in_doubt(&self, doubt: &Doubt<K::Chunk>, liveness: &Liveness) -> PeerError {
        let who = format!("rank {} (which decides the outcome)", doubt.coordinator);
        let reason = match liveness {
            Liveness::Closed { .. } => format!("{who} left"),
            other => format!(
                "{who} {}",
                PeerFailure::Silent {
                    seconds: other.silence().as_secs_f64().min(1e9),
                    timeout: self.config.options.timeout.as_secs_f64(),
                }
            ),
        };
        PeerError::InDoubt {
            epoch: doubt.epoch,
            coordinator: doubt.coordinator,
            reason,
            items_aside: doubt.aside.len() as u64,
        }
    }

    /// Files a message read while call `doubtful` is in doubt: its decision is kept for
    /// [`Balancer::resolve`], a later call's message for that call.
    pub(super) fn file_while_in_doubt(&mut self, r: Envelope<Msg<K::Chunk>>, doubtful: u64) {
        if take_ask(&self.ep, &mut self.mailbox, &r).is_some() {
            return;
        }
        let e = r.msg.epoch();
        let settles = matches!(r.msg, Msg::Decision { .. } | Msg::GiveUp { .. });
        if e == doubtful && settles {
            if let Some((_, slot @ None)) = &mut self.mailbox.doubt {
                *slot = Some(r);
            }
        } else if e > self.epoch {
            self.mailbox.later.push_back(r);
        }
    }

    /// Settles the call in doubt with an outcome learned by other means (`committed`: the
    /// move stands); does nothing when no call is in doubt.
    #[cfg(feature = "fault-injection")]
    pub(super) fn settle_in<S: Storage<K>>(
        &mut self,
        items: &mut S,
        committed: bool,
    ) -> Result<(), PeerError> {
        let Some(doubt) = self.doubt.take() else {
            return Ok(());
        };
        self.settle_with(doubt, items, committed)
            .map_err(PeerError::Storage)
    }

    /// Puts back what `committed` gives this rank; on failure the call stays in doubt (its
    /// items aside) and the error says why.
    fn settle_with<S: Storage<K>>(
        &mut self,
        doubt: Doubt<K::Chunk>,
        items: &mut S,
        committed: bool,
    ) -> Result<(), String> {
        match doubt.aside.settle(items, committed) {
            Ok(()) => {
                self.mailbox.doubt = None;
                Ok(())
            }
            Err((aside, e)) => {
                self.doubt = Some(Doubt { aside, ..doubt });
                Err(e.to_string())
            }
        }
    }
}
