//! The closing agreement of a move: atomic commitment across every fault in the call.
//!
//! A rank that has finished its part of the move *votes*. The call commits when every rank
//! has voted, and aborts (rolls back everywhere) otherwise. The decision is taken in exactly
//! one place, so that no two ranks can decide differently:
//!
//! * **Shared memory (threads):** the group's [`Ledger`](crate::transport::Ledger). A vote
//!   and an abort are single operations under one lock: the last vote commits, an abort
//!   before it aborts; whoever decides wakes the others. Any rank may abort while undecided —
//!   it is never a decision of its own, since the ledger settles it for everyone — so no
//!   failure can leave a rank waiting or in doubt.
//! * **Messages (MPI):** rank 0 coordinates (two-phase commit). Ranks send their vote to it;
//!   it commits on the last vote, or aborts when a rank that has not voted is judged failed
//!   or gives up, and sends its decision to every rank — also to those it judged failed, so
//!   that a rank that was only stopped finds it when it resumes. A rank that has voted waits
//!   for the decision and watches the coordinator only; a give-up from any rank also settles
//!   the call (a rank gives up only before voting, so the call cannot commit). If the
//!   coordinator falls silent before deciding, a rank that has voted cannot know the outcome:
//!   it keeps the items in doubt aside and says so ([`Verdict::InDoubt`]).

use super::error::PeerError;
use super::session::Session;
use super::wire::{DoneSummary, Msg, WireOutcome};
use crate::transport::{LedgerOutcome, Transport};
use serde::Serialize;

/// The rank that decides calls where the ranks share no memory.
pub(crate) const COORDINATOR: usize = 0;

/// How a call ended for this rank.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Every rank voted: the move stands. Every rank's summary, in rank order.
    Commit(Vec<DoneSummary>),
    /// The call is rolled back everywhere, for this reason.
    Abort(PeerError),
    /// The outcome is not known on this rank (the coordinator fell silent after this rank
    /// voted).
    InDoubt { coordinator: usize, reason: String },
}

/// Votes with `mine` and waits for the call's outcome.
pub(crate) fn agree<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Verdict {
    match vote(session, mine) {
        Some(v) => v,
        None => wait(session, mine),
    }
}

/// Casts this rank's vote; the verdict when the vote itself settled the call.
pub(crate) fn vote<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Option<Verdict> {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let ep = session.ep;
    if let Some(ledger) = ep.ledger() {
        let payload = postcard::to_allocvec(&mine).unwrap_or_default();
        let outcome = ledger.vote(epoch, me, payload)?;
        if matches!(outcome, LedgerOutcome::Commit(_)) {
            session.wake_all(); // this vote decided the call
        }
        return Some(from_ledger(outcome, size));
    }
    if me != COORDINATOR {
        // If the vote cannot leave, the coordinator decides without it (it aborts).
        let _ = session.send(
            COORDINATOR,
            Msg::Vote {
                epoch,
                summary: mine,
            },
        );
    }
    None
}

/// Waits for the outcome of a call this rank has voted in.
pub(crate) fn wait<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Verdict {
    if session.ep.ledger().is_some() {
        wait_in_ledger(session)
    } else if session.rank() == COORDINATOR {
        coordinate(session, mine)
    } else {
        follow(session)
    }
}

/// This rank stops waiting for the outcome of a call it has voted in (an injected fault). It
/// does not roll back on its own: where the group shares a ledger, the ledger settles the
/// call (an abort, unless the last vote is already in); the coordinator decides the call
/// (an abort); any other rank keeps the items in doubt aside.
pub(crate) fn stop_waiting<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Verdict {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let reason = format!("rank {me} stopped waiting for the outcome (injected fault)");
    let ep = session.ep;
    if let Some(ledger) = ep.ledger() {
        let outcome = ledger.abort(epoch, me, Some(me), &reason);
        session.wake_all();
        return from_ledger(outcome, size);
    }
    if me == COORDINATOR {
        let _ = mine;
        let e = PeerError::GaveUp { rank: me };
        announce(session, &Err(e.clone()));
        return Verdict::Abort(e);
    }
    Verdict::InDoubt {
        coordinator: COORDINATOR,
        reason,
    }
}

fn from_ledger(outcome: LedgerOutcome, size: usize) -> Verdict {
    match outcome {
        LedgerOutcome::Commit(payloads) => {
            let summaries: Vec<DoneSummary> = payloads
                .iter()
                .map(|p| postcard::from_bytes(p).unwrap_or_default())
                .collect();
            debug_assert_eq!(summaries.len(), size);
            Verdict::Commit(summaries)
        }
        LedgerOutcome::Abort {
            by,
            culprit,
            reason,
        } => Verdict::Abort(PeerError::Aborted {
            by,
            culprit,
            reason,
        }),
    }
}

fn wait_in_ledger<T: Serialize, E: Transport<Msg<T>>>(session: &mut Session<'_, T, E>) -> Verdict {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let ep = session.ep;
    let Some(ledger) = ep.ledger() else {
        return Verdict::Abort(PeerError::Mismatch("no ledger".into()));
    };
    loop {
        let waited = session.next(
            |_, m| matches!(m, Msg::Decided { .. }),
            |p| !ledger.has_voted(epoch, p),
        );
        if let Some(outcome) = ledger.outcome(epoch) {
            return from_ledger(outcome, size);
        }
        if let Err(e) = waited {
            // A rank that has not voted failed (or the network did): abort, unless the last
            // vote came in meanwhile — the ledger decides which.
            let (culprit, reason) = match &e {
                PeerError::PeerFailed { rank, failure } => {
                    (Some(*rank), format!("rank {rank} {failure}"))
                }
                other => (other.culprit(), other.to_string()),
            };
            let outcome = ledger.abort(epoch, me, culprit, &reason);
            session.wake_all();
            return match outcome {
                LedgerOutcome::Abort { by, .. } if by == me => Verdict::Abort(e),
                outcome => from_ledger(outcome, size),
            };
        }
    }
}

/// Sends the coordinator's decision to every other rank.
fn announce<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    decided: &Result<Vec<DoneSummary>, PeerError>,
) {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let outcome = match decided {
        Ok(s) => WireOutcome::Commit(s.clone()),
        Err(e) => {
            let (by, reason) = match e {
                PeerError::Aborted { by, reason, .. } => (*by, reason.clone()),
                PeerError::PeerFailed { rank, failure } => (me, format!("rank {rank} {failure}")),
                other => (me, other.to_string()),
            };
            WireOutcome::Abort {
                by: by as u32,
                culprit: e.culprit().map(|c| c as u32),
                reason,
            }
        }
    };
    for to in (0..size).filter(|&r| r != me) {
        let _ = session.send(
            to,
            Msg::Decision {
                epoch,
                outcome: outcome.clone(),
            },
        );
    }
}

/// The coordinator: collects the votes, decides, tells every rank.
fn coordinate<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Verdict {
    let (me, size) = (session.rank(), session.size());
    let mut votes: Vec<Option<DoneSummary>> = vec![None; size];
    votes[me] = Some(mine);
    let decided: Result<Vec<DoneSummary>, PeerError> = loop {
        if votes.iter().all(Option::is_some) {
            break Ok(votes.iter().map(|v| v.unwrap_or_default()).collect());
        }
        let got = session.next(
            |_, m| matches!(m, Msg::Vote { .. } | Msg::GiveUp { .. }),
            |p| votes[p].is_none(),
        );
        match got {
            Ok(r) => match r.msg {
                Msg::Vote { summary, .. } => votes[r.from] = Some(summary),
                Msg::GiveUp {
                    culprit, reason, ..
                } => {
                    break Err(PeerError::Aborted {
                        by: r.from,
                        culprit: culprit.map(|c| c as usize),
                        reason,
                    });
                }
                _ => {}
            },
            Err(e) => break Err(e),
        }
    };
    announce(session, &decided);
    match decided {
        Ok(s) => Verdict::Commit(s),
        Err(e) => Verdict::Abort(e),
    }
}

/// A rank that is not the coordinator, after its vote: waits for the decision, watching the
/// coordinator only.
fn follow<T: Serialize, E: Transport<Msg<T>>>(session: &mut Session<'_, T, E>) -> Verdict {
    loop {
        let got = session.next(
            |from, m| {
                matches!(m, Msg::GiveUp { .. })
                    || (from == COORDINATOR && matches!(m, Msg::Decision { .. }))
            },
            |p| p == COORDINATOR,
        );
        match got {
            Ok(r) => match r.msg {
                Msg::Decision {
                    outcome: WireOutcome::Commit(s),
                    ..
                } => return Verdict::Commit(s),
                Msg::Decision {
                    outcome:
                        WireOutcome::Abort {
                            by,
                            culprit,
                            reason,
                        },
                    ..
                } => {
                    return Verdict::Abort(PeerError::Aborted {
                        by: by as usize,
                        culprit: culprit.map(|c| c as usize),
                        reason,
                    });
                }
                // A rank gives up only before it votes: the call cannot commit.
                Msg::GiveUp {
                    culprit, reason, ..
                } => {
                    return Verdict::Abort(PeerError::Aborted {
                        by: r.from,
                        culprit: culprit.map(|c| c as usize),
                        reason,
                    });
                }
                _ => {}
            },
            Err(e @ PeerError::Aborted { .. }) => return Verdict::Abort(e),
            Err(PeerError::PeerFailed { rank, failure }) => {
                return Verdict::InDoubt {
                    coordinator: rank,
                    reason: format!("rank {rank} (which decides the outcome) {failure}"),
                };
            }
            Err(e) => {
                return Verdict::InDoubt {
                    coordinator: COORDINATOR,
                    reason: e.to_string(),
                };
            }
        }
    }
}
