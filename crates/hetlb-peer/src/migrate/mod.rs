//! Moving: this rank's part of a [`Migration`], under the chosen schedule, then the closing
//! agreement.
//!
//! **Order.** A rank sends its transfers in plan order. When a transfer may start depends on
//! the schedule (Rim, Jang & Kim 2003, §6):
//! * `phased` — once everything addressed to this rank in earlier phases has arrived (a
//!   dimension, or a round, at a time; no global barrier);
//! * `overlap` — as soon as the rank holds enough units for the whole transfer, or the phased
//!   condition holds;
//! * `pipeline` — as soon as the rank holds any unit: what it holds goes at once and the rest
//!   follows as more arrives (items are forwarded as soon as they are held).
//!
//! The plan is feasible phase by phase, so the phased condition always comes true: no schedule
//! can deadlock, and with weighted items a rank that holds fewer units than planned sends what
//! it has once the phased condition holds (the shortfall is reported as residual).
//!
//! **Acknowledgements.** A receiver acknowledges a transfer when its last message arrived; the
//! sender times the transfer from its first message to the acknowledgement, which gives the
//! measured time per unit of the report.
//!
//! **Agreement.** A rank that has sent and received all its transfers (and had its sends
//! acknowledged) votes, and keeps or drops what it received only when the call's outcome is
//! decided (`agreement.rs`): every rank commits, or every rank rolls back. A failure found
//! before this rank votes makes it give the call up, which aborts it everywhere.

use super::agreement::{Verdict, agree, pass_abort_down};
mod machine;

use super::decide::Migration;
use super::error::PeerError;
use super::faults::Fault;
use super::holdings::{Aside, Holdings, Piece};
use super::session::Session;
use super::store::Store;
use super::wire::{DoneSummary, Msg};
use hetlb_transport::Transport;
use machine::{Move, Send};
use std::time::Instant;

/// What this rank's move did.
#[derive(Debug, Clone, Default)]
pub(crate) struct MoveStats {
    pub(crate) items_sent: u64,
    pub(crate) items_received: u64,
    pub(crate) units_sent: u64,
    pub(crate) units_received: u64,
    /// Σ over this rank's transfers of (planned − carried) units.
    pub(crate) residual: i64,
    pub(crate) messages: u64,
    /// Every rank's summary, once the call committed.
    pub(crate) dones: Vec<DoneSummary>,
    /// This rank's summary, when its part of the move is done.
    pub(crate) mine: DoneSummary,
    pub(crate) move_seconds: f64,
    /// Seconds of the agreement (the vote and its outcome), part of `move_seconds`.
    pub(crate) agree_seconds: f64,
}

/// How a move ended for this rank, when it did not commit.
pub(crate) struct Failed<C> {
    pub(crate) error: PeerError,
    /// The items in doubt, when the outcome is not known here.
    pub(crate) aside: Option<Aside<C>>,
}

/// Carries out this rank's part of `m`; on success `items` holds the new distribution, on
/// failure exactly what it held before (or, when the outcome is not known here, what the
/// move did not touch, the rest being returned aside).
pub(crate) fn carry_out<S: Store, E: Transport<Msg<S::Chunk>>>(
    session: &mut Session<'_, S::Chunk, E>,
    items: &mut S,
    m: &Migration,
    fault: Fault,
) -> Result<MoveStats, Failed<S::Chunk>> {
    let start = session.ep.now();
    let mut holdings = Holdings::new(items);
    let mut stats = MoveStats::default();
    let moved = move_items(session, &mut holdings, m, fault, &mut stats, start).and_then(|()| {
        // Room for what this rank holds if the call commits, before it votes: committing
        // then cannot fail.
        holdings
            .prepare_commit()
            .map_err(|e| PeerError::Storage(e.to_string()))
    });
    if let Err(e) = moved {
        holdings.roll_back();
        let error = session.give_up(e);
        pass_abort_down(session, &error);
        return Err(Failed { error, aside: None });
    }
    let agreeing = session.ep.now();
    let verdict = if fault.after_vote() {
        agree_with_fault(session, stats.mine, fault)
    } else {
        agree(session, stats.mine)
    };
    match verdict {
        Verdict::Commit(dones) => {
            holdings.commit();
            stats.dones = dones;
            stats.move_seconds = since(session, start);
            stats.agree_seconds = since(session, agreeing);
            Ok(stats)
        }
        Verdict::Abort(error) => {
            holdings.roll_back();
            pass_abort_down(session, &error);
            Err(Failed { error, aside: None })
        }
        Verdict::InDoubt {
            coordinator,
            reason,
        } => {
            let aside = holdings.set_aside();
            Err(Failed {
                error: PeerError::InDoubt {
                    epoch: session.epoch(),
                    coordinator,
                    reason,
                    items_aside: aside.len() as u64,
                },
                aside: Some(aside),
            })
        }
    }
}

/// The agreement with a fault injected right after this rank's vote: a panic (the rank dies
/// with what it holds), a freeze, or giving up — which, after a vote, is never a decision of
/// its own: where the group shares a ledger the ledger settles it, elsewhere the rank only
/// stops waiting and keeps the items in doubt aside.
#[cfg(feature = "fault-injection")]
fn agree_with_fault<C: serde::Serialize, E: Transport<Msg<C>>>(
    session: &mut Session<'_, C, E>,
    mine: DoneSummary,
    fault: Fault,
) -> Verdict {
    use super::agreement::{stop_waiting, vote, wait};
    let me = session.rank();
    let voted = match vote(session, mine) {
        Ok(voted) => voted,
        Err(settled) => return settled,
    };
    match fault {
        Fault::PanicAfterVote => panic!("injected fault: rank {me} panics after its vote"),
        Fault::FreezeAfterVote(d) => session.ep.pause(Some(d)),
        Fault::LeaveAfterVote => return stop_waiting(session, voted),
        _ => {}
    }
    wait(session, voted)
}

/// Without fault injection there is no fault to strike after the vote.
#[cfg(not(feature = "fault-injection"))]
fn agree_with_fault<C: serde::Serialize, E: Transport<Msg<C>>>(
    session: &mut Session<'_, C, E>,
    mine: DoneSummary,
    _: Fault,
) -> Verdict {
    agree(session, mine)
}

/// Carries out this rank's part of `m` with the state machine of [`machine`]: sends what
/// the schedule allows, then waits for the next item message or acknowledgement, until its
/// part is done.
fn move_items<S: Store, E: Transport<Msg<S::Chunk>>>(
    session: &mut Session<'_, S::Chunk, E>,
    holdings: &mut Holdings<'_, S>,
    m: &Migration,
    fault: Fault,
    stats: &mut MoveStats,
    start: Instant,
) -> Result<(), PeerError> {
    let me = session.rank();
    let mut state = Move::new(m, me, session.size());
    let mut item_messages = 0u32;
    loop {
        while let Some(send) = state.next_send(holdings.units()) {
            let toward = m.centroids.as_ref().and_then(|c| c[me].zip(c[send.to]));
            let (chunks, carried) =
                holdings.take(send.units, holdings.store().max_chunk_items(), toward);
            if chunks.is_empty() && !send.last {
                break;
            }
            state.sent(send, carried, session.ep.now());
            send_items(session, holdings, m.epoch, send, chunks, stats)?;
            item_messages += 1;
            inject(session, fault, item_messages)?;
            if !send.last {
                break;
            }
        }
        if state.done() {
            break;
        }
        let got = session.next(
            |_, msg| matches!(msg, Msg::Items { .. } | Msg::Ack { .. }),
            |p| state.waits_for(p),
        )?;
        stats.messages += 1;
        let from = got.from;
        match got.msg {
            Msg::Items {
                transfer,
                last,
                units,
                items,
                ..
            } => {
                if let Err(why) = holdings.store().check_chunk(&items) {
                    return Err(PeerError::Mismatch(format!("rank {from}: {why}")));
                }
                let ack = state.on_items(from, transfer, last)?;
                stats.items_received += holdings.store().chunk_len(&items) as u64;
                stats.units_received += units;
                holdings.receive(items, units);
                if let Some(ack) = ack {
                    session.send(
                        ack.to,
                        Msg::Ack {
                            epoch: m.epoch,
                            transfer: ack.transfer,
                        },
                    )?;
                }
            }
            Msg::Ack { transfer, .. } => state.on_ack(from, transfer, session.ep.now()),
            _ => {}
        }
    }
    stats.residual = state.residual();
    let (link_seconds, link_units) = state.link_timing();
    stats.mine = DoneSummary {
        units: holdings.units(),
        items: holdings.items(),
        move_seconds: since(session, start),
        link_seconds,
        link_units,
        moments: holdings.moments(),
    };
    Ok(())
}

/// Sends `chunks` (what one [`Send`] carries) as item messages of at most the store's chunk
/// size; an empty send that ends a transfer still sends one (empty) message.
fn send_items<S: Store, E: Transport<Msg<S::Chunk>>>(
    session: &mut Session<'_, S::Chunk, E>,
    holdings: &Holdings<'_, S>,
    epoch: u64,
    send: Send,
    pieces: Vec<Piece<S::Chunk>>,
    stats: &mut MoveStats,
) -> Result<(), PeerError> {
    let count = pieces.len().max(1);
    let unit_items = holdings.unit_items();
    let store = holdings.store();
    let mut pieces = pieces.into_iter();
    for k in 0..count {
        let piece = pieces
            .next()
            .unwrap_or_else(|| Piece::Chunk(store.new_chunk()));
        let last = send.last && k + 1 == count;
        let (n, units) = match &piece {
            Piece::Chunk(items) => {
                let n = store.chunk_len(items);
                let units = if unit_items {
                    n as u64
                } else {
                    (0..n).fold(0u64, |a, i| a.saturating_add(store.chunk_load(items, i)))
                };
                (n, units)
            }
            Piece::Own(range) => {
                let units = if unit_items {
                    range.len() as u64
                } else {
                    range
                        .clone()
                        .fold(0u64, |a, i| a.saturating_add(store.load(i)))
                };
                (range.len(), units)
            }
        };
        stats.items_sent += n as u64;
        stats.units_sent += units;
        let message = |items| Msg::Items {
            epoch,
            transfer: send.transfer,
            last,
            units,
            items,
        };
        match piece {
            Piece::Chunk(items) => session.send(send.to, message(items))?,
            // Encoded from the application's vector where the backend serialises.
            Piece::Own(range) => session.send_view(
                send.to,
                &Msg::Items {
                    epoch,
                    transfer: send.transfer,
                    last,
                    units,
                    items: OwnRange {
                        store,
                        range: range.clone(),
                    },
                },
                || message(holdings.chunk_of(Piece::Own(range))),
            )?,
        }
    }
    Ok(())
}

/// Own items `range` of a store, serialised as the chunk [`Store::copy_range`] would make.
struct OwnRange<'a, S> {
    store: &'a S,
    range: std::ops::Range<usize>,
}

impl<S: Store> serde::Serialize for OwnRange<'_, S> {
    fn serialize<Z: serde::Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
        self.store.serialize_range(self.range.clone(), s)
    }
}

/// Seconds from `start` to now on the transport's clock.
fn since<C, E: Transport<Msg<C>>>(session: &Session<'_, C, E>, start: Instant) -> f64 {
    session
        .ep
        .now()
        .saturating_duration_since(start)
        .as_secs_f64()
}

/// Applies an injected fault after this rank's `sent`-th item message.
#[cfg(feature = "fault-injection")]
fn inject<C: serde::Serialize, E: Transport<Msg<C>>>(
    session: &mut Session<'_, C, E>,
    fault: Fault,
    sent: u32,
) -> Result<(), PeerError> {
    match fault {
        Fault::PanicAfterSends(k) if k == sent => {
            panic!("injected fault: rank {} panics in a move", session.rank())
        }
        Fault::FreezeAfterSends(k, d) if k == sent => {
            session.ep.pause(Some(d));
            Ok(())
        }
        Fault::LeaveAfterSends(k) if k == sent => Err(PeerError::GaveUp {
            rank: session.rank(),
        }),
        _ => Ok(()),
    }
}

/// Without fault injection there is no fault to strike.
#[cfg(not(feature = "fault-injection"))]
fn inject<C: serde::Serialize, E: Transport<Msg<C>>>(
    _: &mut Session<'_, C, E>,
    _: Fault,
    _: u32,
) -> Result<(), PeerError> {
    Ok(())
}
