//! The closing agreement of a move: atomic commitment across every fault in the call.
//!
//! A rank that has finished its part of the move *votes*. The call commits when every rank
//! has voted, and aborts (rolls back everywhere) otherwise. The decision is taken in exactly
//! one place, so that no two ranks can decide differently:
//!
//! * **Shared memory (threads):** the group's [`Ledger`](hetlb_transport::Ledger). A vote
//!   and an abort are single operations under one lock: the last vote commits, an abort
//!   before it aborts; whoever decides wakes the others. Any rank may abort while undecided —
//!   it is never a decision of its own, since the ledger settles it for everyone — so no
//!   failure can leave a rank waiting or in doubt.
//! * **Messages (MPI):** rank 0 coordinates a two-phase commit over a binomial tree rooted at
//!   it, whose subtrees are runs of consecutive ranks (rank `r > 0` has the subtree
//!   `r .. r + lowbit(r)`, its parent is `r` without its lowest bit, its children are
//!   `r + 2^k` for `2^k < lowbit(r)`), so that no rank sends or receives more than
//!   `⌈log₂ P⌉ + 1` messages of the agreement when nothing fails:
//!
//!   1. *Votes go up.* A rank that has finished its move waits for the votes of its
//!      children, then sends one `Vote` to its parent with its whole subtree's summaries —
//!      from then on it **has voted**. A rank that judges a child failed before that gives
//!      the call up (a `GiveUp` to every rank: its subtree's votes will never reach rank 0, so
//!      the call cannot commit); rank 0 in that case decides the abort.
//!   2. *Rank 0 decides alone*: commit once its children's votes cover every rank; abort
//!      when a child is judged failed, or any rank gives up. It keeps its latest decisions.
//!   3. *The decision goes down.* A commit travels down the tree, each rank forwarding it to
//!      its children before it returns; an abort (a failure path) goes from rank 0 to every
//!      rank directly — also to those it judged failed, so that a rank that was only stopped
//!      finds it when it resumes.
//!
//!   A rank that ends the call aborted, however it learned of it, passes the abort to its
//!   children before it returns, so that a child never sees its parent leave before it has
//!   read the outcome; rank 0, unless it announced the abort already, announces it to every
//!   rank.
//!
//!   A rank that has voted waits for the decision from any rank, watching its parent only.
//!   If its parent is judged failed, the rank asks rank 0 (`Ask`) and from then on watches
//!   rank 0 only; rank 0 answers an ask wherever it reads its endpoint — in the call, in
//!   later calls, in `Balancer::check`, when its balancer is dropped — and keeps an ask for a
//!   call it has not decided until it has. A give-up from any rank also settles the call (a
//!   rank gives up only before voting, so the call cannot commit). A rank that leaves the
//!   call without the decision — rank 0 was judged failed, so it cannot know the outcome and
//!   keeps the items in doubt aside ([`Verdict::InDoubt`]); or it stopped waiting after its
//!   vote (an injected fault) — asks rank 0 for the decision on behalf of itself and its
//!   children, and tells its children (`Redirect`) to watch rank 0 from then on: once rank 0
//!   resumes it sends them the decision directly. So a rank is in doubt only when rank 0 falls
//!   silent after that rank voted, or when its parent failed after its vote and rank 0 had
//!   dropped its balancer before the ask arrived (see the design note).

use super::error::PeerError;
use super::session::{COORDINATOR, Session};
use super::wire::{DoneSummary, Msg, WireOutcome};
use hetlb_transport::{LedgerOutcome, Transport};
use serde::Serialize;

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

/// A vote cast and not yet settled.
#[derive(Debug)]
pub(crate) struct Voted {
    /// On the coordinator, where the ranks share no memory: every rank's summary, in rank
    /// order (its children's votes cover every rank).
    all: Option<Vec<DoneSummary>>,
}

/// The number of ranks in `r`'s subtree of the agreement's tree.
fn span(r: usize, size: usize) -> usize {
    if r == 0 {
        size
    } else {
        (r & r.wrapping_neg()).min(size - r)
    }
}

/// `r`'s parent in the agreement's tree (`r > 0`).
fn parent(r: usize) -> usize {
    r & (r - 1)
}

/// `r`'s children in the agreement's tree, in rank order.
fn children(r: usize, size: usize) -> impl Iterator<Item = usize> {
    let span = span(r, size);
    std::iter::successors(Some(1usize), |s| s.checked_mul(2))
        .take_while(move |&s| s < span)
        .map(move |s| r + s)
}

/// Votes with `mine` and waits for the call's outcome.
pub(crate) fn agree<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Verdict {
    match vote(session, mine) {
        Ok(voted) => wait(session, voted),
        Err(v) => v,
    }
}

/// Casts this rank's vote: into the ledger where the ranks share memory; elsewhere, once the
/// votes of its children in the agreement's tree are in, up to its parent. `Err` with the
/// verdict when the call was settled meanwhile (the vote decided it, or it was aborted).
pub(crate) fn vote<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: DoneSummary,
) -> Result<Voted, Verdict> {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let ep = session.ep;
    if let Some(ledger) = ep.ledger() {
        let payload = postcard::to_allocvec(&mine).unwrap_or_default();
        let Some(outcome) = ledger.vote(epoch, me, payload) else {
            return Ok(Voted { all: None });
        };
        if matches!(outcome, LedgerOutcome::Commit(_)) {
            session.wake_all(); // this vote decided the call
        }
        return Err(from_ledger(outcome, size));
    }
    let mut votes: Vec<Option<DoneSummary>> = vec![None; span(me, size)];
    votes[0] = Some(mine);
    let mut missing: Vec<usize> = children(me, size).collect();
    while !missing.is_empty() {
        let got = session.next(
            |from, m| matches!(m, Msg::Vote { .. }) && missing.contains(&from),
            |p| missing.contains(&p),
        );
        let (child, summaries) = match got {
            Ok(r) => match r.msg {
                Msg::Vote { summaries, .. } => (r.from, summaries),
                _ => continue,
            },
            Err(e) => return Err(settle_before_voting(session, e)),
        };
        let expected = span(child, size);
        if summaries.len() != expected {
            let e = PeerError::Mismatch(format!(
                "rank {child} voted for {} ranks, but its subtree has {expected}",
                summaries.len()
            ));
            return Err(settle_before_voting(session, e));
        }
        for (k, s) in summaries.into_iter().enumerate() {
            votes[child - me + k] = Some(s);
        }
        missing.retain(|&c| c != child);
    }
    let summaries: Vec<DoneSummary> = votes.into_iter().map(Option::unwrap_or_default).collect();
    if me == COORDINATOR {
        return Ok(Voted {
            all: Some(summaries),
        });
    }
    // If the vote cannot leave, the parent judges this rank failed (the call aborts).
    let _ = session.send(parent(me), Msg::Vote { epoch, summaries });
    Ok(Voted { all: None })
}

/// A failure found while collecting the subtree's votes: the coordinator decides the abort;
/// any other rank gives the call up (it has not voted: its subtree's votes never leave it).
fn settle_before_voting<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    error: PeerError,
) -> Verdict {
    if session.rank() == COORDINATOR {
        announce_abort(session, &error);
        Verdict::Abort(error)
    } else {
        Verdict::Abort(session.give_up(error))
    }
}

/// Waits for the outcome of a call this rank has voted in.
pub(crate) fn wait<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    voted: Voted,
) -> Verdict {
    if session.ep.ledger().is_some() {
        return wait_in_ledger(session);
    }
    match voted.all {
        Some(all) => commit(session, all),
        None => follow(session),
    }
}

/// This rank stops waiting for the outcome of a call it has voted in (an injected fault). It
/// does not roll back on its own: where the group shares a ledger, the ledger settles the
/// call (an abort, unless the last vote is already in); the coordinator decides the call
/// (an abort); any other rank keeps the items in doubt aside, and asks the coordinator to
/// send the decision to it and to its children (which will not get it from this rank).
#[cfg(feature = "fault-injection")]
pub(crate) fn stop_waiting<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    voted: Voted,
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
        let _ = voted;
        let e = PeerError::GaveUp { rank: me };
        announce_abort(session, &e);
        return Verdict::Abort(e);
    }
    leave_undecided(session);
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

/// `error` as an abort on the wire, decided by this rank unless another rank did.
fn abort_outcome(me: usize, error: &PeerError) -> WireOutcome {
    let (by, reason) = match error {
        PeerError::Aborted { by, reason, .. } => (*by, reason.clone()),
        PeerError::PeerFailed { rank, failure } => (me, format!("rank {rank} {failure}")),
        other => (me, other.to_string()),
    };
    WireOutcome::Abort {
        by: by as u32,
        culprit: error.culprit().map(|c| c as u32),
        reason,
    }
}

/// Where the ranks share no memory, a rank whose call ended in an abort passes it to its
/// children in the tree before it returns: a child that voted waits for the decision
/// watching this rank, and must read the outcome before it can see this rank leave (the
/// give-up or abort that told this rank went to the child too, but may still be on its way).
/// The coordinator, unless it has announced its decision already, announces it to every
/// rank (ranks that asked it watch it alone).
pub(crate) fn pass_abort_down<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    error: &PeerError,
) {
    if session.ep.ledger().is_some() {
        return;
    }
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    if me == COORDINATOR {
        if !session.has_decided() {
            announce_abort(session, error);
        }
        return;
    }
    let outcome = abort_outcome(me, error);
    for child in children(me, size) {
        let msg = Msg::Decision {
            epoch,
            outcome: outcome.clone(),
        };
        let _ = session.send(child, msg);
    }
}

/// The coordinator's abort: to every other rank (a failure path: also to ranks it judged
/// failed, which find it when they resume), and kept for ranks that ask.
fn announce_abort<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    error: &PeerError,
) {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let outcome = abort_outcome(me, error);
    session.record_decision(outcome.clone());
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

/// The coordinator, with every rank's vote: commits, and sends the decision down the tree
/// (and to the ranks that asked for it); answers the asks already waiting.
fn commit<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    all: Vec<DoneSummary>,
) -> Verdict {
    session.record_decision(WireOutcome::Commit(all.clone()));
    forward(session, &all);
    // Asks that came in meanwhile are answered now; any later one when read.
    let _ = session.drain();
    Verdict::Commit(all)
}

/// Sends a commit to this rank's children in the tree.
fn forward<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    all: &[DoneSummary],
) {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    for child in children(me, size) {
        let _ = session.send(
            child,
            Msg::Decision {
                epoch,
                outcome: WireOutcome::Commit(all.to_vec()),
            },
        );
    }
}

/// Asks the coordinator to send the decision to this rank.
fn ask<T: Serialize, E: Transport<Msg<T>>>(session: &mut Session<'_, T, E>) {
    let (me, epoch) = (session.rank(), session.epoch());
    let ranks = vec![me as u32];
    let _ = session.send(COORDINATOR, Msg::Ask { epoch, ranks });
}

/// This rank leaves the call without knowing its outcome: it asks the coordinator to send
/// the decision to it (for `Balancer::resolve`) and to its children, and tells its children
/// to expect it from the coordinator.
fn leave_undecided<T: Serialize, E: Transport<Msg<T>>>(session: &mut Session<'_, T, E>) {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let kids: Vec<usize> = children(me, size).collect();
    let mut ranks = vec![me as u32];
    ranks.extend(kids.iter().map(|&c| c as u32));
    let _ = session.send(COORDINATOR, Msg::Ask { epoch, ranks });
    for child in kids {
        let _ = session.send(child, Msg::Redirect { epoch });
    }
}

/// A rank that is not the coordinator, after its vote: waits for the decision from any rank,
/// watching its parent in the tree (which passes the decision on; when the coordinator
/// falls silent, the parent notices first, or its own parent does). Once its parent is
/// judged failed — or says it will not pass the decision on — the rank has asked the
/// coordinator, and watches the coordinator only.
fn follow<T: Serialize, E: Transport<Msg<T>>>(session: &mut Session<'_, T, E>) -> Verdict {
    let up = parent(session.rank());
    let mut asked = false;
    loop {
        let got = session.next(
            |from, m| {
                matches!(m, Msg::Decision { .. } | Msg::GiveUp { .. })
                    || (from == up && matches!(m, Msg::Redirect { .. }))
            },
            |p| if asked { p == COORDINATOR } else { p == up },
        );
        match got {
            Ok(r) => match r.msg {
                Msg::Decision {
                    outcome: WireOutcome::Commit(s),
                    ..
                } => {
                    forward(session, &s);
                    return Verdict::Commit(s);
                }
                // An abort went to every rank from the coordinator (and is passed down).
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
                // The parent asked the coordinator on this rank's behalf.
                Msg::Redirect { .. } => asked = true,
                _ => {}
            },
            Err(e @ PeerError::Aborted { .. }) => return Verdict::Abort(e),
            Err(PeerError::PeerFailed { rank, .. }) if rank != COORDINATOR => {
                // The parent failed: the coordinator sends the decision directly.
                ask(session);
                asked = true;
            }
            Err(PeerError::PeerFailed { rank, failure }) => {
                // Once it resumes, the coordinator sends the decision to this rank and to its
                // children (which will not get it from this rank).
                leave_undecided(session);
                return Verdict::InDoubt {
                    coordinator: rank,
                    reason: format!("rank {rank} (which decides the outcome) {failure}"),
                };
            }
            Err(e) => {
                leave_undecided(session);
                return Verdict::InDoubt {
                    coordinator: COORDINATOR,
                    reason: e.to_string(),
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_covers_every_rank_once_with_logarithmic_fan_out() {
        for size in 1..=70usize {
            let mut seen = vec![0u32; size];
            seen[0] += 1;
            let mut stack = vec![0usize];
            while let Some(r) = stack.pop() {
                let kids: Vec<usize> = children(r, size).collect();
                assert!(kids.len() <= size.next_power_of_two().trailing_zeros() as usize);
                // A subtree is its root and its children's subtrees, consecutive.
                let mut next = r + 1;
                for &c in &kids {
                    assert_eq!(parent(c), r);
                    assert_eq!(c, next, "size {size}: rank {r}'s subtrees are consecutive");
                    next += span(c, size);
                    seen[c] += 1;
                    stack.push(c);
                }
                assert_eq!(next, r + span(r, size), "size {size}, rank {r}");
            }
            assert!(seen.iter().all(|&n| n == 1), "size {size}: {seen:?}");
        }
    }
}
