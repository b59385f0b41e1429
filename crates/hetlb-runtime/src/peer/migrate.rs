//! Moving: this rank's part of a [`Migration`], under the chosen schedule, then the closing
//! agreement.
//!
//! **Order.** A rank sends its transfers in plan order. When a transfer may start depends on
//! the schedule (Rim et al., 004_… §6):
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
//! acknowledged) sends `Done` to every rank and waits for everyone's. It commits — keeps what
//! it received, drops the originals of what it sent — when every rank is done, or when the
//! ranks it no longer hears from are the only ones missing: then every transfer that involves
//! them was completed by the live side, so the live ranks all commit. If any rank aborts, every
//! rank rolls back to what it held before the call. A rank that fails during the move is
//! announced by whoever waits for it (they abort); a rank that fails during the agreement is
//! not announced (the others commit without it).

use super::comm::{Comm, DoneSummary, Msg};
use super::config::Fault;
use super::decide::{Migration, PlannedTransfer};
use super::error::{PeerError, PeerFailure};
use super::holdings::Holdings;
use super::item::Item;
use super::session::Session;
use hetlb_core::transmission::Schedule;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// Items per message at most: a larger transfer goes in several messages (the last one marked
/// `last`), which bounds the size of one MPI message and lets a receiver start forwarding.
pub(crate) const MAX_ITEMS_PER_MESSAGE: usize = 1 << 16;

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
    /// Every rank's summary (`None` for a rank that failed during the agreement).
    pub(crate) dones: Vec<Option<DoneSummary>>,
    /// This rank leaves the group without a word (fault injection).
    pub(crate) leaving: bool,
    pub(crate) move_seconds: f64,
}

struct Outgoing {
    t: PlannedTransfer,
    carried: u64,
    first_sent: Option<Instant>,
    finished: bool,
    acked: bool,
}

struct Incoming {
    from: usize,
    phase: usize,
    complete: bool,
}

/// Carries out this rank's part of `m`; on success `items` holds the new distribution, on
/// failure exactly what it held before.
pub(crate) fn carry_out<T: Item, C: Comm<T>>(
    session: &mut Session<'_, T, C>,
    items: &mut Vec<T>,
    m: &Migration,
    fault: Fault,
) -> Result<MoveStats, PeerError> {
    let start = Instant::now();
    let mut holdings = Holdings::new(items);
    let mut stats = MoveStats::default();
    match move_items(session, &mut holdings, m, fault, &mut stats, start) {
        Ok(()) => {}
        Err(e) => {
            holdings.roll_back();
            // A failure of this rank's own (a message that cannot be encoded, say) stops the
            // others too; a rank that leaves on purpose (fault injection) tells nobody.
            return Err(if stats.leaving { e } else { session.fail(e) });
        }
    }
    match agree(session, &mut stats) {
        Ok(lost) => {
            holdings.commit();
            stats.move_seconds = start.elapsed().as_secs_f64();
            match lost {
                None => Ok(stats),
                Some((rank, failure)) => Err(PeerError::FailedAfterMove { rank, failure }),
            }
        }
        Err(e) => {
            holdings.roll_back();
            Err(e)
        }
    }
}

/// Link timing gathered while moving: Σ seconds from first send to acknowledgement, Σ units.
#[derive(Default)]
struct LinkTiming {
    seconds: f64,
    units: u64,
}

fn move_items<T: Item, C: Comm<T>>(
    session: &mut Session<'_, T, C>,
    holdings: &mut Holdings<'_, T>,
    m: &Migration,
    fault: Fault,
    stats: &mut MoveStats,
    start: Instant,
) -> Result<(), PeerError> {
    let me = session.rank();
    let size = session.size();
    let epoch = m.epoch;
    stats.dones = vec![None; size];
    let mut outs: Vec<Outgoing> = m
        .sends(me)
        .map(|&t| Outgoing {
            t,
            carried: 0,
            first_sent: None,
            finished: false,
            acked: false,
        })
        .collect();
    let out_index: HashMap<u32, usize> =
        outs.iter().enumerate().map(|(i, o)| (o.t.id, i)).collect();
    let mut ins: HashMap<u32, Incoming> = m
        .receives(me)
        .map(|t| {
            (
                t.id,
                Incoming {
                    from: t.from,
                    phase: t.phase,
                    complete: false,
                },
            )
        })
        .collect();
    let mut incomplete_by_phase: BTreeMap<usize, u32> = BTreeMap::new();
    for i in ins.values() {
        *incomplete_by_phase.entry(i.phase).or_default() += 1;
    }
    let mut waiting_from = vec![0u32; size];
    for i in ins.values() {
        waiting_from[i.from] += 1;
    }
    let mut unacked_to = vec![0u32; size];
    let mut timing = LinkTiming::default();
    let mut next_out = 0usize;
    let mut item_messages = 0u32;
    loop {
        // Send what the schedule allows.
        while let Some(o) = outs.get_mut(next_out) {
            let earlier_done = incomplete_by_phase
                .keys()
                .next()
                .is_none_or(|&p| p >= o.t.phase);
            let remaining = o.t.units.saturating_sub(o.carried);
            let held = holdings.units();
            let (amount, last) = match m.schedule {
                Schedule::Phased if earlier_done => (remaining, true),
                Schedule::Overlap if earlier_done || held >= remaining => (remaining, true),
                Schedule::Pipeline if earlier_done => (remaining, true),
                Schedule::Pipeline if held > 0 => (remaining.min(held), held >= remaining),
                _ => break,
            };
            let (chunks, carried) = holdings.take(amount.min(held), MAX_ITEMS_PER_MESSAGE);
            if chunks.is_empty() && !last {
                break;
            }
            if o.first_sent.is_none() {
                o.first_sent = Some(Instant::now());
            }
            o.carried += carried;
            let count = chunks.len().max(1);
            let unit_items = holdings.unit_items();
            let mut chunks = chunks.into_iter();
            for k in 0..count {
                let items = chunks.next().unwrap_or_default();
                stats.items_sent += items.len() as u64;
                let units = if unit_items {
                    items.len() as u64
                } else {
                    items.iter().map(Item::load).sum()
                };
                stats.units_sent += units;
                session.send(
                    o.t.to,
                    Msg::Items {
                        epoch,
                        transfer: o.t.id,
                        last: last && k + 1 == count,
                        units,
                        items,
                    },
                )?;
            }
            item_messages += 1;
            if let Err(e) = inject(session, fault, item_messages) {
                stats.leaving = true;
                return Err(e);
            }
            if !last {
                break;
            }
            o.finished = true;
            unacked_to[o.t.to] += 1;
            stats.residual += o.t.units as i64 - o.carried as i64;
            next_out += 1;
        }
        let all_sent = next_out == outs.len();
        if all_sent && incomplete_by_phase.is_empty() && unacked_to.iter().all(|&n| n == 0) {
            break;
        }
        let got = session.next(
            |_, msg| matches!(msg, Msg::Items { .. } | Msg::Ack { .. } | Msg::Done { .. }),
            |p| waiting_from[p] > 0 || unacked_to[p] > 0,
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
                let Some(inc) = ins.get_mut(&transfer) else {
                    return Err(session.abort(PeerError::Mismatch(format!(
                        "rank {from} sent items for transfer {transfer}, which is not addressed \
                         to rank {me}"
                    ))));
                };
                if inc.from != from || inc.complete {
                    return Err(session.abort(PeerError::Mismatch(format!(
                        "rank {from} sent items for transfer {transfer} out of turn"
                    ))));
                }
                stats.items_received += items.len() as u64;
                stats.units_received += units;
                holdings.receive(items, units);
                if last {
                    inc.complete = true;
                    waiting_from[from] -= 1;
                    let phase = inc.phase;
                    if let Some(n) = incomplete_by_phase.get_mut(&phase) {
                        *n -= 1;
                        if *n == 0 {
                            incomplete_by_phase.remove(&phase);
                        }
                    }
                    session.send(from, Msg::Ack { epoch, transfer })?;
                }
            }
            Msg::Ack { transfer, .. } => {
                if let Some(&i) = out_index.get(&transfer) {
                    let o = &mut outs[i];
                    if o.finished && !o.acked && o.t.to == from {
                        o.acked = true;
                        unacked_to[from] -= 1;
                        if let Some(t0) = o.first_sent {
                            timing.seconds += t0.elapsed().as_secs_f64();
                            timing.units += o.carried;
                        }
                    }
                }
            }
            Msg::Done { summary, .. } => stats.dones[from] = Some(summary),
            _ => {}
        }
    }
    stats.dones[me] = Some(DoneSummary {
        units: holdings.units(),
        items: holdings.items(),
        move_seconds: start.elapsed().as_secs_f64(),
        link_seconds: timing.seconds,
        link_units: timing.units,
    });
    Ok(())
}

/// Applies an injected fault after this rank's `sent`-th item message.
fn inject<T, C: Comm<T>>(
    session: &mut Session<'_, T, C>,
    fault: Fault,
    sent: u32,
) -> Result<(), PeerError> {
    match fault {
        Fault::PanicAfterSends(k) if k == sent => {
            panic!("injected fault: rank {} panics in a move", session.rank())
        }
        Fault::FreezeAfterSends(k, d) if k == sent => {
            session.comm.freeze(d);
            Ok(())
        }
        Fault::LeaveAfterSends(k) if k == sent => Err(PeerError::Transport(format!(
            "injected fault: rank {} leaves the group",
            session.rank()
        ))),
        _ => Ok(()),
    }
}

/// The closing agreement; `Ok(Some(..))` names a rank that failed during it (the move stands).
fn agree<T, C: Comm<T>>(
    session: &mut Session<'_, T, C>,
    stats: &mut MoveStats,
) -> Result<Option<(usize, PeerFailure)>, PeerError> {
    let me = session.rank();
    let size = session.size();
    let epoch = session.epoch();
    let mine = stats.dones[me].unwrap_or_default();
    for to in (0..size).filter(|&r| r != me) {
        session.send(
            to,
            Msg::Done {
                epoch,
                summary: mine,
            },
        )?;
    }
    session.announce_failures = false;
    let mut lost: Option<(usize, PeerFailure)> = None;
    let mut dead = vec![false; size];
    while (0..size).any(|r| stats.dones[r].is_none() && !dead[r]) {
        let dones = &stats.dones;
        let result = session.next(
            |_, msg| matches!(msg, Msg::Done { .. }),
            |p| dones[p].is_none() && !dead[p],
        );
        match result {
            Ok(got) => {
                if let Msg::Done { summary, .. } = got.msg {
                    stats.dones[got.from] = Some(summary);
                }
            }
            Err(PeerError::PeerFailed { rank, failure }) => {
                dead[rank] = true;
                lost.get_or_insert((rank, failure));
            }
            Err(e) => {
                session.announce_failures = true;
                return Err(e);
            }
        }
    }
    session.announce_failures = true;
    Ok(lost)
}
