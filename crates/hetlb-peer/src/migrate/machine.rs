//! One rank's part of a move as explicit state: which of its transfers may go now, what the
//! messages that arrive change, and when its part is done. No I/O and no clock of its own:
//! the driver (`super::move_items`) takes the items, sends and receives, and feeds the events
//! in; the tests below drive several ranks' machines by hand, without threads.
//!
//! ```text
//!            next_send ──► the driver takes the units and sends ──► sent
//!   Items ──► on_items ──► Some(ack) when the transfer is complete ──► the driver sends Ack
//!     Ack ──► on_ack
//!                                   done: every send acknowledged, every receive complete
//! ```

use crate::decide::{Migration, PlannedTransfer};
use crate::error::PeerError;
use hetlb_core::transmission::Schedule;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// One transfer this rank sends.
#[derive(Debug)]
struct Outgoing {
    t: PlannedTransfer,
    carried: u64,
    first_sent: Option<Instant>,
    finished: bool,
    acked: bool,
}

/// One transfer this rank receives.
#[derive(Debug)]
struct Incoming {
    from: usize,
    phase: usize,
    complete: bool,
}

/// What may be sent now: `units` of transfer `transfer` to rank `to`; `last` when they end
/// the transfer (the rest of it goes in this send).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Send {
    /// The transfer's number in the plan.
    pub(crate) transfer: u32,
    /// The receiving rank.
    pub(crate) to: usize,
    /// Units to carry now (at most what the rank holds).
    pub(crate) units: u64,
    /// True when this send ends the transfer.
    pub(crate) last: bool,
}

/// The acknowledgement to send for a transfer received whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ack {
    /// The sender of the transfer, to acknowledge to.
    pub(crate) to: usize,
    /// The transfer's number in the plan.
    pub(crate) transfer: u32,
}

/// One rank's part of a move (see the module's documentation).
#[derive(Debug)]
pub(crate) struct Move {
    me: usize,
    schedule: Schedule,
    outs: Vec<Outgoing>,
    out_index: HashMap<u32, usize>,
    ins: HashMap<u32, Incoming>,
    /// Receives not complete yet, per phase: the phased condition is "none below mine".
    incomplete_by_phase: BTreeMap<usize, u32>,
    /// Receives not complete yet, per sender.
    waiting_from: Vec<u32>,
    /// Sends finished but not acknowledged, per receiver.
    unacked_to: Vec<u32>,
    next_out: usize,
    /// Σ over this rank's finished transfers of (planned − carried) units.
    residual: i64,
    /// Σ seconds from a transfer's first send to its acknowledgement, and Σ its units.
    link_seconds: f64,
    link_units: u64,
}

impl Move {
    /// Rank `me`'s part of `m`, in a group of `size` ranks.
    pub(crate) fn new(m: &Migration, me: usize, size: usize) -> Self {
        let outs: Vec<Outgoing> = m
            .sends(me)
            .map(|&t| Outgoing {
                t,
                carried: 0,
                first_sent: None,
                finished: false,
                acked: false,
            })
            .collect();
        let out_index = outs.iter().enumerate().map(|(i, o)| (o.t.id, i)).collect();
        let ins: HashMap<u32, Incoming> = m
            .receives(me)
            .map(|t| {
                let incoming = Incoming {
                    from: t.from,
                    phase: t.phase,
                    complete: false,
                };
                (t.id, incoming)
            })
            .collect();
        let mut incomplete_by_phase: BTreeMap<usize, u32> = BTreeMap::new();
        let mut waiting_from = vec![0u32; size];
        for i in ins.values() {
            *incomplete_by_phase.entry(i.phase).or_default() += 1;
            waiting_from[i.from] += 1;
        }
        Self {
            me,
            schedule: m.schedule,
            outs,
            out_index,
            ins,
            incomplete_by_phase,
            waiting_from,
            unacked_to: vec![0; size],
            next_out: 0,
            residual: 0,
            link_seconds: 0.0,
            link_units: 0,
        }
    }

    /// What the schedule lets this rank send now, holding `held` units: the next transfer in
    /// plan order, or `None` until something arrives.
    ///
    /// * phased — once everything addressed to this rank in earlier phases has arrived;
    /// * overlap — also as soon as the rank holds the whole transfer;
    /// * pipeline — also as soon as it holds any unit: what it holds goes now, the rest later.
    pub(crate) fn next_send(&self, held: u64) -> Option<Send> {
        let o = self.outs.get(self.next_out)?;
        let earlier_done = self
            .incomplete_by_phase
            .keys()
            .next()
            .is_none_or(|&p| p >= o.t.phase);
        let remaining = o.t.units.saturating_sub(o.carried);
        let (units, last) = match self.schedule {
            Schedule::Phased if earlier_done => (remaining, true),
            Schedule::Overlap if earlier_done || held >= remaining => (remaining, true),
            Schedule::Pipeline if earlier_done => (remaining, true),
            Schedule::Pipeline if held > 0 => (remaining.min(held), held >= remaining),
            _ => return None,
        };
        Some(Send {
            transfer: o.t.id,
            to: o.t.to,
            units: units.min(held),
            last,
        })
    }

    /// `send` went out carrying `carried` units, at `now`. A last send finishes its transfer
    /// (it now waits for its acknowledgement) and the next transfer becomes the candidate.
    pub(crate) fn sent(&mut self, send: Send, carried: u64, now: Instant) {
        let o = &mut self.outs[self.next_out];
        debug_assert_eq!(o.t.id, send.transfer);
        o.first_sent.get_or_insert(now);
        o.carried += carried;
        if send.last {
            o.finished = true;
            self.unacked_to[o.t.to] += 1;
            self.residual += o.t.units as i64 - o.carried as i64;
            self.next_out += 1;
        }
    }

    /// Items of `transfer` arrived from `from`; `last` when they end it. Returns the
    /// acknowledgement to send when the transfer is now complete.
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] for a transfer not addressed to this rank, from another
    /// sender, or after it was complete.
    pub(crate) fn on_items(
        &mut self,
        from: usize,
        transfer: u32,
        last: bool,
    ) -> Result<Option<Ack>, PeerError> {
        let me = self.me;
        let Some(inc) = self.ins.get_mut(&transfer) else {
            return Err(PeerError::Mismatch(format!(
                "rank {from} sent items for transfer {transfer}, which is not addressed to \
                 rank {me}"
            )));
        };
        if inc.from != from || inc.complete {
            return Err(PeerError::Mismatch(format!(
                "rank {from} sent items for transfer {transfer} out of turn"
            )));
        }
        if !last {
            return Ok(None);
        }
        inc.complete = true;
        self.waiting_from[from] -= 1;
        if let Some(n) = self.incomplete_by_phase.get_mut(&inc.phase) {
            *n -= 1;
            if *n == 0 {
                self.incomplete_by_phase.remove(&inc.phase);
            }
        }
        Ok(Some(Ack { to: from, transfer }))
    }

    /// `from` acknowledged `transfer` at `now`. An acknowledgement of anything else (a
    /// duplicate, another call's) is ignored.
    pub(crate) fn on_ack(&mut self, from: usize, transfer: u32, now: Instant) {
        let Some(&i) = self.out_index.get(&transfer) else {
            return;
        };
        let o = &mut self.outs[i];
        if o.finished && !o.acked && o.t.to == from {
            o.acked = true;
            self.unacked_to[from] -= 1;
            if let Some(t0) = o.first_sent {
                self.link_seconds += now.saturating_duration_since(t0).as_secs_f64();
                self.link_units += o.carried;
            }
        }
    }

    /// True when this rank's part is done: every transfer sent and acknowledged, every
    /// transfer addressed to it complete.
    pub(crate) fn done(&self) -> bool {
        self.next_out == self.outs.len()
            && self.incomplete_by_phase.is_empty()
            && self.unacked_to.iter().all(|&n| n == 0)
    }

    /// True while this rank waits for `peer`: items still to come from it, or an
    /// acknowledgement. Only those peers are judged when they fall silent.
    pub(crate) fn waits_for(&self, peer: usize) -> bool {
        self.waiting_from[peer] > 0 || self.unacked_to[peer] > 0
    }

    /// Σ over this rank's finished transfers of (planned − carried) units.
    pub(crate) fn residual(&self) -> i64 {
        self.residual
    }

    /// Σ seconds from each acknowledged transfer's first send to its acknowledgement, and Σ
    /// the units those transfers carried.
    pub(crate) fn link_timing(&self) -> (f64, u64) {
        (self.link_seconds, self.link_units)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::algorithm::Algorithm;
    use hetlb_core::routing::Routing;

    fn plan(transfers: &[(usize, usize, usize, u64)], schedule: Schedule) -> Migration {
        let transfers: Vec<PlannedTransfer> = transfers
            .iter()
            .enumerate()
            .map(|(id, &(phase, from, to, units))| PlannedTransfer {
                id: id as u32,
                phase,
                from,
                to,
                units,
            })
            .collect();
        Migration {
            epoch: 1,
            algorithm: Algorithm::Dem,
            topology: "hypercube:2".into(),
            capacities: None,
            measured_speeds: None,
            loads_before: vec![],
            items_before: vec![],
            planned_after: vec![],
            phases: 2,
            converged: true,
            schedule,
            predicted_steps: None,
            decide_seconds: 0.0,
            prediction: None,
            held_back: false,
            alternatives: vec![],
            routing: Routing::Paper,
            cost_model: hetlb_core::advice::CostModel::FREE,
            busiest: None,
            step_seconds: None,
            centroids: None,
            spread_before: None,
            unit_items: true,
            transfers,
        }
    }

    /// A message between machines: items (transfer, units, last) or an acknowledgement.
    #[derive(Debug, Clone, Copy)]
    enum Wire {
        Items(u32, u64, bool),
        Ack(u32),
    }

    /// Runs every rank's machine to the end, delivering messages in `order` (a rotation of the
    /// pending queue per step), each rank holding `held[r]` units; returns the units each
    /// holds at the end and the number of steps.
    fn run(m: &Migration, mut held: Vec<u64>, order: usize) -> Vec<u64> {
        let size = held.len();
        let now = Instant::now();
        let mut machines: Vec<Move> = (0..size).map(|r| Move::new(m, r, size)).collect();
        let mut wire: Vec<(usize, usize, Wire)> = Vec::new();
        for _step in 0..10_000 {
            for r in 0..size {
                while let Some(s) = machines[r].next_send(held[r]) {
                    let carried = s.units;
                    held[r] -= carried;
                    machines[r].sent(s, carried, now);
                    wire.push((r, s.to, Wire::Items(s.transfer, carried, s.last)));
                    if !s.last {
                        break;
                    }
                }
            }
            if machines.iter().all(Move::done) {
                assert!(wire.is_empty());
                return held;
            }
            assert!(!wire.is_empty(), "no machine can go on: a deadlock");
            let (from, to, msg) = wire.remove(order % wire.len());
            match msg {
                Wire::Items(t, units, last) => {
                    held[to] += units;
                    if let Some(a) = machines[to].on_items(from, t, last).unwrap() {
                        assert_eq!(a.to, from);
                        wire.push((to, from, Wire::Ack(a.transfer)));
                    }
                }
                Wire::Ack(t) => machines[to].on_ack(from, t, now),
            }
        }
        panic!("the move did not end");
    }

    #[test]
    fn every_schedule_ends_with_the_planned_loads_whatever_the_delivery_order() {
        // DEM on 4 ranks from [12, 0, 0, 0]: phase 0 sends 6 to rank 1, phase 1 sends 3 from
        // rank 0 to 2 and from rank 1 to 3 (rank 1 forwards what it received).
        let t = [(0, 0, 1, 6), (1, 0, 2, 3), (1, 1, 3, 3)];
        for schedule in Schedule::ALL {
            for order in 0..4 {
                let m = plan(&t, schedule);
                assert_eq!(run(&m, vec![12, 0, 0, 0], order), vec![3, 3, 3, 3]);
            }
        }
    }

    #[test]
    fn the_schedules_differ_in_what_may_start() {
        let t = [(0, 0, 1, 6), (1, 1, 2, 4)];
        // Rank 1 holds 4 of its own before anything arrives.
        let phased = Move::new(&plan(&t, Schedule::Phased), 1, 3);
        assert_eq!(phased.next_send(4), None, "phased waits for phase 0");
        let overlap = Move::new(&plan(&t, Schedule::Overlap), 1, 3);
        let s = overlap.next_send(4).unwrap();
        assert_eq!(
            (s.to, s.units, s.last),
            (2, 4, true),
            "overlap holds enough"
        );
        assert_eq!(overlap.next_send(3), None, "overlap: not enough held");
        let pipe = Move::new(&plan(&t, Schedule::Pipeline), 1, 3);
        let s = pipe.next_send(3).unwrap();
        assert_eq!(
            (s.units, s.last),
            (3, false),
            "pipeline sends what it holds"
        );
    }

    #[test]
    fn stray_items_are_refused_and_stray_acks_ignored() {
        let m = plan(&[(0, 0, 1, 6)], Schedule::Phased);
        let mut r1 = Move::new(&m, 1, 3);
        assert!(matches!(
            r1.on_items(2, 0, true),
            Err(PeerError::Mismatch(_))
        ));
        assert!(matches!(
            r1.on_items(0, 7, true),
            Err(PeerError::Mismatch(_))
        ));
        assert!(r1.waits_for(0) && !r1.waits_for(2));
        assert_eq!(r1.on_items(0, 0, false).unwrap(), None);
        assert_eq!(
            r1.on_items(0, 0, true).unwrap(),
            Some(Ack { to: 0, transfer: 0 })
        );
        assert!(matches!(
            r1.on_items(0, 0, true),
            Err(PeerError::Mismatch(_))
        ));
        assert!(r1.done());
        let mut r0 = Move::new(&m, 0, 3);
        let now = Instant::now();
        r0.on_ack(1, 0, now); // before it was sent: ignored
        let s = r0.next_send(6).unwrap();
        r0.sent(s, 5, now);
        assert!(!r0.done() && r0.waits_for(1));
        r0.on_ack(2, 0, now); // from the wrong rank: ignored
        assert!(!r0.done());
        r0.on_ack(1, 0, now);
        assert!(r0.done());
        assert_eq!(r0.residual(), 1, "one unit planned but not carried");
        assert_eq!(r0.link_timing().1, 5);
    }
}
