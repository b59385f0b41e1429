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
//! **Copy-then-release.** An own item that is sent is cloned into the message and the original
//! stays in the application's vector until the call ends: on success the sent originals are
//! removed (a truncation when they were taken from the end) and the received items appended;
//! on failure nothing needs restoring, and the received items are dropped. So each item is
//! copied once by its sender and once by its receiver, as a plain send would.

use super::item::Item;

/// Where the sent own items are.
enum Sent {
    /// `own[kept..]` (taken from the end, unit items).
    Tail { kept: usize },
    /// `mask[i]` for every own item (weighted items).
    Mask(Vec<bool>),
}

pub(crate) struct Holdings<'a, T> {
    own: &'a mut Vec<T>,
    sent: Sent,
    /// Items received in this call and not forwarded, in chunks as they arrived.
    received: Vec<Vec<T>>,
    received_items: usize,
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
        let kept = own.len();
        Self {
            own,
            sent: Sent::Tail { kept },
            received: Vec::new(),
            received_items: 0,
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
        let own = match &self.sent {
            Sent::Tail { kept } => *kept,
            Sent::Mask(mask) => mask.iter().filter(|&&s| !s).count(),
        };
        (own + self.received_items) as u64
    }

    /// True while every item held has one unit.
    pub(crate) fn unit_items(&self) -> bool {
        self.unit_items
    }

    /// Adds items received in this call.
    pub(crate) fn receive(&mut self, items: Vec<T>, units: u64) {
        if self.unit_items && items.iter().any(|i| i.load() != 1) {
            self.unit_items = false;
        }
        self.received_units = self.received_units.saturating_add(units);
        self.received_items += items.len();
        if !items.is_empty() {
            self.received.push(items);
        }
    }

    /// Takes items carrying about `units` units (see the module documentation), in chunks of
    /// at most `chunk` items; returns the chunks and the units they carry.
    pub(crate) fn take(&mut self, units: u64, chunk: usize) -> (Vec<Vec<T>>, u64) {
        if units == 0 {
            return (Vec::new(), 0);
        }
        if self.unit_items {
            self.take_unit(units, chunk.max(1))
        } else {
            let (items, carried) = self.take_weighted(units);
            let mut chunks = Vec::new();
            let mut items = items;
            while items.len() > chunk.max(1) {
                let rest = items.split_off(items.len() - chunk.max(1));
                chunks.push(rest);
            }
            if !items.is_empty() {
                chunks.push(items);
            }
            (chunks, carried)
        }
    }

    fn take_unit(&mut self, units: u64, chunk: usize) -> (Vec<Vec<T>>, u64) {
        let mut want = usize::try_from(units).unwrap_or(usize::MAX);
        let mut out: Vec<Vec<T>> = Vec::new();
        let mut carried = 0u64;
        // Received items first, whole chunks moved without copying.
        while want > 0 {
            let Some(last) = self.received.last_mut() else {
                break;
            };
            let n = want.min(last.len()).min(chunk);
            let piece = if n == last.len() {
                self.received.pop().unwrap_or_default()
            } else {
                last.split_off(last.len() - n)
            };
            want -= n;
            carried += n as u64;
            self.received_items -= n;
            self.received_units -= n as u64;
            out.push(piece);
        }
        // Then own items from the end: cloned; the originals stay until the call ends.
        let Sent::Tail { kept } = &mut self.sent else {
            unreachable!("unit items are always taken from the tail");
        };
        let mut n = want.min(*kept);
        while n > 0 {
            let k = n.min(chunk);
            out.push(self.own[*kept - k..*kept].to_vec());
            *kept -= k;
            n -= k;
            carried += k as u64;
            self.own_units -= k as u64;
        }
        (out, carried)
    }

    fn take_weighted(&mut self, units: u64) -> (Vec<T>, u64) {
        let mask = match &mut self.sent {
            Sent::Mask(m) => m,
            Sent::Tail { kept } => {
                let kept = *kept;
                self.sent = Sent::Mask((0..self.own.len()).map(|i| i >= kept).collect());
                let Sent::Mask(m) = &mut self.sent else {
                    unreachable!("just set");
                };
                m
            }
        };
        let received: Vec<T> = self.received.drain(..).flatten().collect();
        // (load, pool, index): pool 0 = received, 1 = own.
        let mut candidates: Vec<(u64, u8, usize)> = received
            .iter()
            .enumerate()
            .map(|(i, it)| (it.load(), 0u8, i))
            .chain(
                self.own
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !mask[*i])
                    .map(|(i, it)| (it.load(), 1u8, i)),
            )
            .filter(|&(l, _, _)| l > 0)
            .collect();
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
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
        let mut take_received = vec![false; received.len()];
        let mut out = Vec::new();
        let mut carried = 0u64;
        for (k, &(load, pool, i)) in candidates.iter().enumerate() {
            if !chosen[k] {
                continue;
            }
            carried += load;
            if pool == 0 {
                take_received[i] = true;
            } else {
                mask[i] = true;
                self.own_units -= load;
                out.push(self.own[i].clone());
            }
        }
        let mut kept = Vec::with_capacity(received.len());
        let mut moved_units = 0u64;
        let mut forwarded = Vec::new();
        for (it, t) in received.into_iter().zip(&take_received) {
            if *t {
                moved_units += it.load();
                forwarded.push(it);
            } else {
                kept.push(it);
            }
        }
        self.received_units -= moved_units;
        self.received_items = kept.len();
        if !kept.is_empty() {
            self.received.push(kept);
        }
        forwarded.extend(out);
        (forwarded, carried)
    }

    /// The call succeeded: the sent originals leave the application's vector and the received
    /// items join it.
    pub(crate) fn commit(self) {
        match self.sent {
            Sent::Tail { kept } => self.own.truncate(kept),
            Sent::Mask(mask) => {
                let mut i = 0;
                self.own.retain(|_| {
                    let keep = !mask[i];
                    i += 1;
                    keep
                });
            }
        }
        self.own.reserve(self.received_items);
        for chunk in self.received {
            self.own.extend(chunk);
        }
    }

    /// The call failed: the application's vector still holds exactly what it held before; the
    /// items received are dropped.
    pub(crate) fn roll_back(self) {}

    /// The call's outcome is not known: the sent originals leave the application's vector,
    /// and they and the items received are kept aside until it is.
    pub(crate) fn set_aside(self) -> Aside<T> {
        let sent = match self.sent {
            Sent::Tail { kept } => self.own.split_off(kept.min(self.own.len())),
            Sent::Mask(mask) => {
                let mut sent = Vec::new();
                let mut kept = Vec::with_capacity(self.own.len());
                for (it, s) in self.own.drain(..).zip(mask) {
                    if s { sent.push(it) } else { kept.push(it) }
                }
                *self.own = kept;
                sent
            }
        };
        Aside {
            sent,
            received: self.received.into_iter().flatten().collect(),
        }
    }
}

/// The items of a call whose outcome is not known yet: kept out of the application's vector
/// so that no item is held twice, whichever way the call ends.
#[derive(Debug)]
pub(crate) struct Aside<T> {
    /// This rank's originals of the items it sent (its own again if the call aborted).
    pub(crate) sent: Vec<T>,
    /// The items it received and kept (its own if the call committed).
    pub(crate) received: Vec<T>,
}

impl<T> Aside<T> {
    /// Items kept aside.
    pub(crate) fn len(&self) -> usize {
        self.sent.len() + self.received.len()
    }

    /// Puts back into `items` what the outcome gives this rank.
    pub(crate) fn settle(self, items: &mut Vec<T>, committed: bool) {
        items.extend(if committed { self.received } else { self.sent });
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

    fn flat<T>(chunks: Vec<Vec<T>>) -> Vec<T> {
        chunks.into_iter().flatten().collect()
    }

    #[test]
    fn unit_items_forward_received_first_and_roll_back_untouched() {
        let mut own: Vec<u64> = (0..10).collect();
        let mut h = Holdings::new(&mut own);
        h.receive(vec![100, 101], 2);
        let (sent, carried) = h.take(3, 2);
        assert_eq!((flat(sent), carried), (vec![100, 101, 9], 3));
        let (sent, _) = h.take(5, 2);
        assert_eq!(sent, vec![vec![7, 8], vec![5, 6], vec![4]]);
        assert_eq!((h.units(), h.items()), (4, 4));
        h.roll_back();
        assert_eq!(own, (0..10).collect::<Vec<u64>>());
    }

    #[test]
    fn items_set_aside_settle_either_way() {
        for committed in [false, true] {
            let mut own: Vec<u64> = (0..6).collect();
            let mut h = Holdings::new(&mut own);
            h.receive(vec![10, 11], 2);
            let _ = h.take(3, 100); // 10, 11 forwarded, 5 sent
            let _ = h.take(1, 100); // 4 sent
            let aside = h.set_aside();
            assert_eq!(own, vec![0, 1, 2, 3]);
            assert_eq!(aside.len(), 2);
            aside.settle(&mut own, committed);
            let expected: Vec<u64> = if committed {
                vec![0, 1, 2, 3]
            } else {
                (0..6).collect()
            };
            own.sort_unstable();
            assert_eq!(own, expected);
        }
    }

    #[test]
    fn commit_keeps_what_was_received() {
        let mut own: Vec<u64> = (0..4).collect();
        let mut h = Holdings::new(&mut own);
        h.receive(vec![10, 11, 12], 3);
        let _ = h.take(4, 100);
        h.commit();
        assert_eq!(own, vec![0, 1, 2]);
    }

    #[test]
    fn weighted_items_fit_without_overshooting_by_more_than_one() {
        let mut own = vec![W(1, 5), W(2, 3), W(3, 3), W(4, 1), W(5, 8)];
        let mut h = Holdings::new(&mut own);
        let (sent, carried) = h.take(7, 100);
        // largest first: 5 fits (2 left), 3 no, 3 no, 1 fits (1 left); then the lightest
        // heavier item (3) would overshoot by 2 > 1: stop at 6.
        assert_eq!(carried, 6);
        assert_eq!(
            flat(sent).iter().map(|w| w.0).collect::<Vec<_>>(),
            vec![1, 4]
        );
        let (_, carried) = h.take(7, 100);
        // 8 does not fit, 3+3 = 6, 1 left, 8 overshoots by 7: 6.
        assert_eq!(carried, 6);
        let (_, carried) = h.take(5, 100);
        assert_eq!(carried, 8); // only the 8 is left: 3 over, closer than 5 under
        assert_eq!(h.items(), 0);
        h.commit();
        assert!(own.is_empty());
    }

    #[test]
    fn weighted_received_items_are_forwarded_and_committed() {
        let mut own = vec![W(1, 2), W(2, 2)];
        let mut h = Holdings::new(&mut own);
        h.receive(vec![W(10, 4), W(11, 1)], 5);
        let (sent, carried) = h.take(4, 100);
        assert_eq!((flat(sent), carried), (vec![W(10, 4)], 4));
        h.commit();
        assert_eq!(own, vec![W(1, 2), W(2, 2), W(11, 1)]);
    }
}
