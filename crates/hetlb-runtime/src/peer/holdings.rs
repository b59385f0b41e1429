//! A rank's items during a move, and how items are chosen to carry a transfer.
//!
//! **Which items carry `u` units.** Items received earlier in the same call are forwarded
//! first (they were not this rank's), then the rank's own items are taken from the end of its
//! vector. With unit items that is simply the last `u` of them. With weighted items the
//! candidates are ordered by load, largest first (ties: received before own, then by position),
//! and taken greedily while they fit in what remains; then, if units remain, the lightest
//! candidate heavier than the remainder is added when that brings the total closer to `u`. So
//! the items carry at most `u` units, or overshoot by part of one item, and the choice is a
//! function of the items alone. The difference from `u` is reported as the residual.
//!
//! **Copy-then-release.** An own item that is sent is cloned into the message and its original
//! kept until the call ends: kept for good if the call fails (the rank then holds exactly what
//! it held before), dropped when every rank has finished. Items received are appended to the
//! application's vector only when the call succeeds.

use super::item::Item;

pub(crate) struct Holdings<'a, T> {
    own: &'a mut Vec<T>,
    /// Originals of own items sent, one chunk per message, in sending order.
    own_sent: Vec<Vec<T>>,
    received: Vec<T>,
    own_units: u64,
    received_units: u64,
    unit_items: bool,
}

impl<'a, T: Item> Holdings<'a, T> {
    pub(crate) fn new(own: &'a mut Vec<T>) -> Self {
        let mut own_units = 0u64;
        let mut unit_items = true;
        for it in own.iter() {
            let l = it.load();
            unit_items &= l == 1;
            own_units = own_units.saturating_add(l);
        }
        Self {
            own,
            own_sent: Vec::new(),
            received: Vec::new(),
            own_units,
            received_units: 0,
            unit_items,
        }
    }

    /// Units held now.
    pub(crate) fn units(&self) -> u64 {
        self.own_units.saturating_add(self.received_units)
    }

    /// Items held now.
    pub(crate) fn items(&self) -> u64 {
        (self.own.len() + self.received.len()) as u64
    }

    /// Adds items received in this call.
    pub(crate) fn receive(&mut self, items: Vec<T>, units: u64) {
        if self.unit_items && items.iter().any(|i| i.load() != 1) {
            self.unit_items = false;
        }
        self.received_units = self.received_units.saturating_add(units);
        self.received.extend(items);
    }

    /// Takes items carrying about `units` units (see the module documentation); returns the
    /// items to send and the units they carry.
    pub(crate) fn take(&mut self, units: u64) -> (Vec<T>, u64) {
        if units == 0 {
            return (Vec::new(), 0);
        }
        if self.unit_items {
            self.take_unit(units)
        } else {
            self.take_weighted(units)
        }
    }

    fn take_unit(&mut self, units: u64) -> (Vec<T>, u64) {
        let want = usize::try_from(units).unwrap_or(usize::MAX);
        let from_received = want.min(self.received.len());
        let mut out = self.received.split_off(self.received.len() - from_received);
        let from_own = (want - from_received).min(self.own.len());
        if from_own > 0 {
            let originals = self.own.split_off(self.own.len() - from_own);
            out.extend(originals.iter().cloned());
            self.own_sent.push(originals);
        }
        let carried = out.len() as u64;
        self.received_units -= from_received as u64;
        self.own_units -= from_own as u64;
        (out, carried)
    }

    fn take_weighted(&mut self, units: u64) -> (Vec<T>, u64) {
        // (load, pool, index): pool 0 = received, 1 = own.
        let mut candidates: Vec<(u64, u8, usize)> = self
            .received
            .iter()
            .enumerate()
            .map(|(i, it)| (it.load(), 0u8, i))
            .chain(
                self.own
                    .iter()
                    .enumerate()
                    .map(|(i, it)| (it.load(), 1u8, i)),
            )
            .filter(|&(l, _, _)| l > 0)
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut take_received = vec![false; self.received.len()];
        let mut take_own = vec![false; self.own.len()];
        let mut remaining = units;
        let mut chosen = vec![false; candidates.len()];
        for (k, &(load, _, _)) in candidates.iter().enumerate() {
            if remaining == 0 {
                break;
            }
            if load <= remaining {
                remaining -= load;
                chosen[k] = true;
            }
        }
        if remaining > 0 {
            // The lightest candidate heavier than what remains, if it gets closer to `units`.
            if let Some(k) = (0..candidates.len())
                .rev()
                .find(|&k| !chosen[k] && candidates[k].0 > remaining)
            {
                if candidates[k].0 - remaining < remaining {
                    chosen[k] = true;
                }
            }
        }
        let mut carried = 0u64;
        for (k, &(load, pool, i)) in candidates.iter().enumerate() {
            if chosen[k] {
                carried += load;
                if pool == 0 {
                    take_received[i] = true;
                } else {
                    take_own[i] = true;
                }
            }
        }
        let mut out = Vec::new();
        let mut kept = Vec::with_capacity(self.received.len());
        let mut moved_units = 0u64;
        for (it, t) in self.received.drain(..).zip(&take_received) {
            if *t {
                moved_units += it.load();
                out.push(it);
            } else {
                kept.push(it);
            }
        }
        self.received = kept;
        self.received_units -= moved_units;
        let mut originals = Vec::new();
        let mut kept = Vec::with_capacity(self.own.len());
        for (it, t) in self.own.drain(..).zip(&take_own) {
            if *t {
                originals.push(it);
            } else {
                kept.push(it);
            }
        }
        *self.own = kept;
        if !originals.is_empty() {
            let own_units: u64 = originals.iter().map(Item::load).sum();
            self.own_units -= own_units;
            out.extend(originals.iter().cloned());
            self.own_sent.push(originals);
        }
        (out, carried)
    }

    /// The call succeeded: received items join the application's, sent originals are dropped.
    pub(crate) fn commit(self) {
        self.own.extend(self.received);
    }

    /// The call failed: the application's vector gets back every item it held before the call
    /// (own items sent are restored; received items are dropped).
    pub(crate) fn roll_back(self) {
        for chunk in self.own_sent.into_iter().rev() {
            self.own.extend(chunk);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct W(u64, u64);
    impl Item for W {
        fn id(&self) -> u64 {
            self.0
        }
        fn load(&self) -> u64 {
            self.1
        }
    }

    #[test]
    fn unit_items_forward_received_first_and_roll_back_in_order() {
        let mut own: Vec<u64> = (0..10).collect();
        let mut h = Holdings::new(&mut own);
        h.receive(vec![100, 101], 2);
        let (sent, carried) = h.take(3);
        assert_eq!((sent.clone(), carried), (vec![100, 101, 9], 3));
        let (sent, _) = h.take(2);
        assert_eq!(sent, vec![7, 8]);
        assert_eq!((h.units(), h.items()), (7, 7));
        h.roll_back();
        assert_eq!(own, (0..10).collect::<Vec<u64>>());
    }

    #[test]
    fn commit_keeps_what_was_received() {
        let mut own: Vec<u64> = (0..4).collect();
        let mut h = Holdings::new(&mut own);
        h.receive(vec![10, 11, 12], 3);
        let _ = h.take(4);
        h.commit();
        assert_eq!(own, vec![0, 1, 2]);
    }

    #[test]
    fn weighted_items_fit_without_overshooting_by_more_than_one() {
        let mut own = vec![W(1, 5), W(2, 3), W(3, 3), W(4, 1), W(5, 8)];
        let mut h = Holdings::new(&mut own);
        let (sent, carried) = h.take(7);
        // largest first: 5 fits (2 left), 3 no, 3 no, 1 fits (1 left); then the lightest
        // heavier item (3) would overshoot by 2 > 1: stop at 6.
        assert_eq!(carried, 6);
        assert_eq!(sent.iter().map(|w| w.0).collect::<Vec<_>>(), vec![1, 4]);
        let (_, carried) = h.take(7);
        // 8 does not fit, 3+3 = 6, 1 left, 8 overshoots by 7: 6.
        assert_eq!(carried, 6);
        let (_, carried) = h.take(5);
        assert_eq!(carried, 8); // only the 8 is left: 3 over, closer than 5 under
        h.roll_back();
        let mut ids: Vec<u64> = own.iter().map(|w| w.0).collect();
        ids.sort_unstable();
        assert_eq!(ids, vec![1, 2, 3, 4, 5]);
    }
}
