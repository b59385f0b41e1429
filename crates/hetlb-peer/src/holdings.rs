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
//! **Towards a neighbour.** When items give positions, a transfer to rank `q` takes, after
//! the received items, the own items that lie furthest towards `q`'s centroid (the largest
//! projection on the direction from this rank's centroid to `q`'s): the boundary of this
//! rank's region facing `q` moves, so both regions stay compact. Weighted items are then
//! taken in that order, greedily while they fit, with the same overshoot rule.
//!
//! **Copy-then-release.** An own item that is sent is cloned into the message and the original
//! stays in the application's vector until the call ends: on success the sent originals are
//! removed (a truncation when they were taken from the end) and the received items appended;
//! on failure nothing needs restoring, and the received items are dropped. So each item is
//! copied once by its sender and once by its receiver, as a plain send would. Own unit items
//! taken from the end (when items give no positions) are handed out as a range of the
//! application's vector ([`Piece::Own`]) rather than a copy: a backend that serialises
//! messages encodes them from there, so the sender's one copy is the encoding itself.

use super::locality::{Moments, Position, moments_of, towards};
use super::store::{Store, StoreError};

/// The direction of a transfer: from this rank's centroid to the receiver's.
pub(crate) type Toward = Option<(Position, Position)>;

/// What one item message carries: a chunk, or own items `range` left where they are (see
/// the module documentation).
pub(crate) enum Piece<C> {
    /// Items copied or received.
    Chunk(C),
    /// Own items, not copied.
    Own(std::ops::Range<usize>),
}

/// Where the sent own items are.
enum Sent {
    /// `own[kept..]` (taken from the end, unit items).
    Tail { kept: usize },
    /// `mask[i]` for every own item (weighted items).
    Mask(Vec<bool>),
}

pub(crate) struct Holdings<'a, S: Store> {
    own: &'a mut S,
    sent: Sent,
    /// Items received in this call and not forwarded, in chunks as they arrived.
    received: Vec<S::Chunk>,
    received_items: usize,
    own_units: u64,
    received_units: u64,
    unit_items: bool,
    /// The positions of what is held now, summed (when items give positions).
    moments: Option<Moments>,
}

impl<'a, S: Store> Holdings<'a, S> {
    pub(crate) fn new(own: &'a mut S) -> Self {
        let kept = own.len();
        let (own_units, unit_items) = if own.unit_loads() {
            (kept as u64, true)
        } else {
            let mut units = 0u64;
            let mut unit = true;
            for i in 0..kept {
                let l = own.load(i);
                unit &= l == 1;
                units = units.saturating_add(l);
            }
            (units, unit)
        };
        // Checked before the call: positions are finite, or none is given.
        let moments = moments_of(kept, |i| own.position(i)).ok().flatten();
        Self {
            own,
            sent: Sent::Tail { kept },
            received: Vec::new(),
            received_items: 0,
            own_units,
            received_units: 0,
            unit_items,
            moments,
        }
    }

    /// The positions of what is held now, summed (when items give positions).
    pub(crate) fn moments(&self) -> Option<Moments> {
        self.moments
    }

    /// Counts the positions of the `n` first items of chunk `c` in (`sign` 1) or out (−1).
    fn count_positions(&mut self, c: &S::Chunk, sign: f64) {
        // A rank that held nothing learns that items give positions from the first it gets.
        if self.moments.is_none()
            && sign > 0.0
            && self.own.chunk_len(c) > 0
            && self.own.chunk_position(c, 0).is_some()
        {
            self.moments = Some(Moments::default());
        }
        let Some(m) = &mut self.moments else { return };
        for i in 0..self.own.chunk_len(c) {
            if let Some(p) = self.own.chunk_position(c, i) {
                m.add(&p, sign);
            }
        }
    }

    /// Units held now.
    pub(crate) fn units(&self) -> u64 {
        self.own_units.saturating_add(self.received_units)
    }

    /// Items held now.
    pub(crate) fn items(&self) -> u64 {
        (self.own_items() + self.received_items) as u64
    }

    fn own_items(&self) -> usize {
        match &self.sent {
            Sent::Tail { kept } => *kept,
            Sent::Mask(mask) => mask.iter().filter(|&&s| !s).count(),
        }
    }

    /// True while every item held has one unit.
    pub(crate) fn unit_items(&self) -> bool {
        self.unit_items
    }

    /// The store's view of chunks (lengths, loads).
    pub(crate) fn store(&self) -> &S {
        self.own
    }

    /// Adds items received in this call.
    pub(crate) fn receive(&mut self, items: S::Chunk, units: u64) {
        let n = self.own.chunk_len(&items);
        if self.unit_items
            && !self.own.unit_loads()
            && (0..n).any(|i| self.own.chunk_load(&items, i) != 1)
        {
            self.unit_items = false;
        }
        self.received_units = self.received_units.saturating_add(units);
        self.received_items += n;
        if n > 0 {
            self.count_positions(&items, 1.0);
            self.received.push(items);
        }
    }

    /// Takes items carrying about `units` units (see the module documentation), in pieces of
    /// at most `chunk` items; returns the pieces and the units they carry.
    pub(crate) fn take(
        &mut self,
        units: u64,
        chunk: usize,
        toward: Toward,
    ) -> (Vec<Piece<S::Chunk>>, u64) {
        if units == 0 {
            return (Vec::new(), 0);
        }
        let chunk = chunk.max(1);
        let toward = toward.filter(|_| self.moments.is_some());
        let (pieces, carried) = self.take_any(units, chunk, toward);
        // Own ranges are handed out only when items give no positions: nothing to count.
        for piece in &pieces {
            if let Piece::Chunk(c) = piece {
                self.count_positions(c, -1.0);
            }
        }
        (pieces, carried)
    }

    /// The items of `piece` as a chunk (a copy of own items).
    pub(crate) fn chunk_of(&self, piece: Piece<S::Chunk>) -> S::Chunk {
        match piece {
            Piece::Chunk(c) => c,
            Piece::Own(range) => self.own.copy_range(range),
        }
    }

    fn take_any(
        &mut self,
        units: u64,
        chunk: usize,
        toward: Toward,
    ) -> (Vec<Piece<S::Chunk>>, u64) {
        // Unit items go from the tail while no item was chosen by position; once one was, the
        // sent items are marked one by one.
        if self.unit_items && toward.is_none() && matches!(self.sent, Sent::Tail { .. }) {
            self.take_unit(units, chunk)
        } else {
            let (mut items, carried) = self.take_weighted(units, toward);
            let mut chunks = Vec::new();
            let mut len = self.own.chunk_len(&items);
            while len > chunk {
                let rest = self.own.split_chunk(&mut items, len - chunk);
                chunks.push(rest);
                len -= chunk;
            }
            if len > 0 {
                chunks.push(items);
            }
            (chunks.into_iter().map(Piece::Chunk).collect(), carried)
        }
    }

    fn take_unit(&mut self, units: u64, chunk: usize) -> (Vec<Piece<S::Chunk>>, u64) {
        let mut want = usize::try_from(units).unwrap_or(usize::MAX);
        let mut out: Vec<Piece<S::Chunk>> = Vec::new();
        let mut carried = 0u64;
        // Received items first, whole chunks moved without copying.
        while want > 0 {
            let Some(last) = self.received.last_mut() else {
                break;
            };
            let len = self.own.chunk_len(last);
            let n = want.min(len).min(chunk);
            let piece = if n == len {
                match self.received.pop() {
                    Some(p) => p,
                    None => break,
                }
            } else {
                self.own.split_chunk(last, len - n)
            };
            want -= n;
            carried += n as u64;
            self.received_items -= n;
            self.received_units = self.received_units.saturating_sub(n as u64);
            out.push(Piece::Chunk(piece));
        }
        // Then own items from the end: the originals stay until the call ends, handed out in
        // place where items give no positions, else copied (their positions are counted).
        let Sent::Tail { kept } = &mut self.sent else {
            unreachable!("unit items are always taken from the tail");
        };
        let mut n = want.min(*kept);
        while n > 0 {
            let k = n.min(chunk);
            let range = *kept - k..*kept;
            out.push(if self.moments.is_none() {
                Piece::Own(range)
            } else {
                Piece::Chunk(self.own.copy_range(range))
            });
            *kept -= k;
            n -= k;
            carried += k as u64;
            self.own_units = self.own_units.saturating_sub(k as u64);
        }
        (out, carried)
    }

    /// Takes items carrying about `units` units: received ones first, then own ones (the
    /// heaviest first, or with `toward` the furthest towards the receiver first), greedily
    /// while they fit, with the overshoot rule of the module documentation.
    fn take_weighted(&mut self, units: u64, toward: Toward) -> (S::Chunk, u64) {
        let own_len = self.own.len();
        let mask = match &mut self.sent {
            Sent::Mask(m) => m,
            Sent::Tail { kept } => {
                let kept = *kept;
                self.sent = Sent::Mask((0..own_len).map(|i| i >= kept).collect());
                let Sent::Mask(m) = &mut self.sent else {
                    unreachable!("just set");
                };
                m
            }
        };
        let received = std::mem::take(&mut self.received);
        let store = &*self.own;
        // Received items, numbered across their chunks: (chunk, index in it).
        let positions: Vec<(usize, usize)> = received
            .iter()
            .enumerate()
            .flat_map(|(k, c)| (0..store.chunk_len(c)).map(move |i| (k, i)))
            .collect();
        // (load, pool, index, rank): pool 0 = received (index into `positions`), 1 = own;
        // candidates are tried by pool, then by rank (largest first), then by index.
        let rank = |load: u64, i: usize| match &toward {
            Some((from, to)) => store
                .position(i)
                .map_or(f64::MIN, |p| towards(&p, from, to)),
            None => load as f64,
        };
        let mut candidates: Vec<(u64, u8, usize, f64)> = positions
            .iter()
            .enumerate()
            .map(|(p, &(k, i))| {
                let load = store.chunk_load(&received[k], i);
                (load, 0u8, p, load as f64)
            })
            .chain((0..own_len).filter(|&i| !mask[i]).map(|i| {
                let load = store.load(i);
                (load, 1u8, i, rank(load, i))
            }))
            .filter(|&(l, _, _, _)| l > 0)
            .collect();
        candidates.sort_by(|a, b| {
            if toward.is_some() {
                a.1.cmp(&b.1).then(b.3.total_cmp(&a.3)).then(a.2.cmp(&b.2))
            } else {
                b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2))
            }
        });
        let mut remaining = units;
        let mut chosen = vec![false; candidates.len()];
        for (k, &(load, _, _, _)) in candidates.iter().enumerate() {
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
            let heavier = |k: &usize| !chosen[*k] && candidates[*k].0 > remaining;
            let lightest = if toward.is_some() {
                (0..candidates.len())
                    .filter(heavier)
                    .min_by_key(|&k| (candidates[k].0, k))
            } else {
                (0..candidates.len()).rev().find(heavier)
            };
            if let Some(k) = lightest
                && candidates[k].0 - remaining < remaining
            {
                chosen[k] = true;
            }
        }
        let mut take_received = vec![false; positions.len()];
        let mut own_out = store.new_chunk();
        let mut carried = 0u64;
        let mut own_taken = 0u64;
        for (k, &(load, pool, i, _)) in candidates.iter().enumerate() {
            if !chosen[k] {
                continue;
            }
            carried = carried.saturating_add(load);
            if pool == 0 {
                take_received[i] = true;
            } else {
                mask[i] = true;
                own_taken = own_taken.saturating_add(load);
                store.push_own(&mut own_out, i);
            }
        }
        let mut forwarded = store.new_chunk();
        let mut kept = store.new_chunk();
        let mut moved_units = 0u64;
        let mut kept_items = 0usize;
        for (p, &(k, i)) in positions.iter().enumerate() {
            if take_received[p] {
                moved_units = moved_units.saturating_add(store.chunk_load(&received[k], i));
                store.push_from(&mut forwarded, &received[k], i);
            } else {
                store.push_from(&mut kept, &received[k], i);
                kept_items += 1;
            }
        }
        let own_n = store.chunk_len(&own_out);
        for i in 0..own_n {
            store.push_from(&mut forwarded, &own_out, i);
        }
        self.own_units = self.own_units.saturating_sub(own_taken);
        self.received_units = self.received_units.saturating_sub(moved_units);
        self.received_items = kept_items;
        if kept_items > 0 {
            self.received.push(kept);
        }
        (forwarded, carried)
    }

    /// Makes room in the store for what it will hold if the call commits, so that committing
    /// cannot fail. Called before this rank votes: a rank that cannot make room gives the call
    /// up.
    pub(crate) fn prepare_commit(&mut self) -> Result<(), StoreError> {
        let total = self.own_items() + self.received_items;
        self.own.reserve_total(total.max(self.own.len()))
    }

    /// The call succeeded: the sent originals leave the application's items and the received
    /// items join them (after [`Holdings::prepare_commit`]).
    pub(crate) fn commit(self) {
        match self.sent {
            Sent::Tail { kept } => self.own.truncate(kept),
            Sent::Mask(mask) => self.own.remove_marked(&mask),
        }
        for chunk in self.received {
            self.own.append(chunk);
        }
    }

    /// The call failed: the application's items are exactly what they were before; the items
    /// received are dropped.
    pub(crate) fn roll_back(self) {}

    /// The call's outcome is not known: the sent originals leave the application's items, and
    /// they and the items received are kept aside until it is.
    pub(crate) fn set_aside(self) -> Aside<S::Chunk> {
        let sent = match self.sent {
            Sent::Tail { kept } => {
                let len = self.own.len();
                let kept = kept.min(len);
                let sent = self.own.copy_range(kept..len);
                self.own.truncate(kept);
                sent
            }
            Sent::Mask(mask) => self.own.take_marked(&mask),
        };
        let sent_items = self.own.chunk_len(&sent);
        Aside {
            sent: vec![sent],
            received: self.received,
            sent_items,
            received_items: self.received_items,
        }
    }
}

/// The items of a call whose outcome is not known yet: kept out of the application's items
/// so that no item is held twice, whichever way the call ends.
#[derive(Debug)]
pub(crate) struct Aside<C> {
    /// This rank's originals of the items it sent (its own again if the call aborted).
    sent: Vec<C>,
    /// The items it received and kept (its own if the call committed).
    received: Vec<C>,
    sent_items: usize,
    received_items: usize,
}

impl<C> Aside<C> {
    /// Items kept aside.
    pub(crate) fn len(&self) -> usize {
        self.sent_items + self.received_items
    }

    /// Puts back into `items` what the outcome gives this rank; when the items cannot join
    /// the store (records of another size) or it cannot make room, nothing changes and the
    /// items stay aside.
    pub(crate) fn settle<S: Store<Chunk = C>>(
        self,
        items: &mut S,
        committed: bool,
    ) -> Result<(), (Self, StoreError)> {
        let (n, chunks) = if committed {
            (self.received_items, &self.received)
        } else {
            (self.sent_items, &self.sent)
        };
        if let Some(why) = chunks.iter().find_map(|c| items.check_chunk(c).err()) {
            return Err((self, StoreError::Mismatch(why)));
        }
        if let Err(e) = items.reserve_total(items.len() + n) {
            return Err((self, e));
        }
        for c in if committed { self.received } else { self.sent } {
            items.append(c);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::item::Item;
    use super::super::store::Records;
    use super::*;

    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    struct Dot(u64, f64);

    /// [`Holdings::take`], every piece made a chunk.
    fn take<S: Store>(
        h: &mut Holdings<'_, S>,
        units: u64,
        chunk: usize,
        toward: Toward,
    ) -> (Vec<S::Chunk>, u64) {
        let (pieces, carried) = h.take(units, chunk, toward);
        (pieces.into_iter().map(|p| h.chunk_of(p)).collect(), carried)
    }

    #[test]
    fn own_unit_items_without_positions_are_handed_out_in_place() {
        let mut own: Vec<u64> = (0..10).collect();
        let mut h = Holdings::new(&mut own);
        h.receive(vec![100], 1);
        let (pieces, carried) = h.take(6, 3, None);
        assert_eq!(carried, 6);
        let shapes: Vec<String> = pieces
            .iter()
            .map(|p| match p {
                Piece::Chunk(c) => format!("chunk {c:?}"),
                Piece::Own(r) => format!("own {r:?}"),
            })
            .collect();
        assert_eq!(shapes, ["chunk [100]", "own 7..10", "own 5..7"]);
        // with positions, own items are copied (their positions are counted out)
        let mut dots: Vec<Dot> = (0..4).map(|i| Dot(i, i as f64)).collect();
        let mut h = Holdings::new(&mut dots);
        let (pieces, _) = h.take(2, 100, None);
        assert!(matches!(pieces.as_slice(), [Piece::Chunk(c)] if c.len() == 2));
    }

    /// A range serialised in place is the same bytes as its copy, for items and records.
    #[test]
    fn own_ranges_serialise_as_their_copies() {
        let items: Vec<Dot> = (0..5).map(|i| Dot(i * 1000, i as f64 / 3.0)).collect();
        for r in [0..0, 1..4, 0..5] {
            let copy = postcard::to_allocvec(&items.copy_range(r.clone())).unwrap();
            let view = postcard::to_allocvec(&ViewOf(&items, r.clone())).unwrap();
            assert_eq!(view, copy, "{r:?}");
        }
        let mut bytes: Vec<u8> = (0..24 * 4).map(|b| b as u8).collect();
        let records = Records::new(&mut bytes, 24, 0).unwrap();
        for r in [0..0, 1..3, 0..4] {
            let copy = postcard::to_allocvec(&records.copy_range(r.clone())).unwrap();
            let view = postcard::to_allocvec(&ViewOf(&records, r.clone())).unwrap();
            assert_eq!(view, copy, "{r:?}");
        }
    }

    struct ViewOf<'a, S>(&'a S, std::ops::Range<usize>);

    impl<S: Store> serde::Serialize for ViewOf<'_, S> {
        fn serialize<Z: serde::Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            self.0.serialize_range(self.1.clone(), s)
        }
    }

    impl crate::Item for Dot {
        fn id(&self) -> u64 {
            self.0
        }
        fn position(&self) -> Option<[f64; 3]> {
            Some([self.1, 0.0, 0.0])
        }
    }

    #[test]
    fn positioned_items_go_towards_the_receiver_and_mix_with_untargeted_takes() {
        let mut own: Vec<Dot> = (0..10).map(|i| Dot(i, i as f64)).collect();
        let mut h = Holdings::new(&mut own);
        // Towards x = 20: the items of largest x.
        let (sent, carried) = take(&mut h, 3, 100, Some(([4.5, 0.0, 0.0], [20.0, 0.0, 0.0])));
        assert_eq!(carried, 3);
        let mut xs: Vec<u64> = sent.iter().flatten().map(|d| d.0).collect();
        xs.sort_unstable();
        assert_eq!(xs, vec![7, 8, 9]);
        // Towards x = −10: the smallest.
        let (sent, _) = take(&mut h, 2, 100, Some(([4.5, 0.0, 0.0], [-10.0, 0.0, 0.0])));
        assert_eq!(
            sent.iter().flatten().map(|d| d.0).collect::<Vec<_>>(),
            vec![0, 1]
        );
        // Then a transfer without a direction (a receiver without items): still exact.
        let (_, carried) = take(&mut h, 2, 100, None);
        assert_eq!(carried, 2);
        assert_eq!(h.items(), 3);
        let m = h.moments().unwrap();
        assert_eq!(m.n, 3);
        h.commit();
        assert_eq!(own.len(), 3);
    }
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
        let (sent, carried) = take(&mut h, 3, 2, None);
        assert_eq!((flat(sent), carried), (vec![100, 101, 9], 3));
        let (sent, _) = take(&mut h, 5, 2, None);
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
            let _ = take(&mut h, 3, 100, None); // 10, 11 forwarded, 5 sent
            let _ = take(&mut h, 1, 100, None); // 4 sent
            let aside = h.set_aside();
            assert_eq!(own, vec![0, 1, 2, 3]);
            assert_eq!(aside.len(), 2);
            aside.settle(&mut own, committed).unwrap();
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
        let _ = take(&mut h, 4, 100, None);
        h.commit();
        assert_eq!(own, vec![0, 1, 2]);
    }

    #[test]
    fn weighted_items_fit_without_overshooting_by_more_than_one() {
        let mut own = vec![W(1, 5), W(2, 3), W(3, 3), W(4, 1), W(5, 8)];
        let mut h = Holdings::new(&mut own);
        let (sent, carried) = take(&mut h, 7, 100, None);
        // largest first: 5 fits (2 left), 3 no, 3 no, 1 fits (1 left); then the lightest
        // heavier item (3) would overshoot by 2 > 1: stop at 6.
        assert_eq!(carried, 6);
        assert_eq!(
            flat(sent).iter().map(|w| w.0).collect::<Vec<_>>(),
            vec![1, 4]
        );
        let (_, carried) = take(&mut h, 7, 100, None);
        // 8 does not fit, 3+3 = 6, 1 left, 8 overshoots by 7: 6.
        assert_eq!(carried, 6);
        let (_, carried) = take(&mut h, 5, 100, None);
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
        let (sent, carried) = take(&mut h, 4, 100, None);
        assert_eq!((flat(sent), carried), (vec![W(10, 4)], 4));
        h.commit();
        assert_eq!(own, vec![W(1, 2), W(2, 2), W(11, 1)]);
    }

    fn ids(r: &Records<'_>) -> Vec<u64> {
        (0..r.len()).map(|i| r.id(i)).collect()
    }

    #[test]
    fn records_move_like_items() {
        let record = |id: u64, cost: u64| [id, cost, 7].map(u64::to_ne_bytes).concat();
        // Unit records: the last ones leave, received ones are forwarded first.
        let mut buf: Vec<u8> = (0..6).flat_map(|i| record(i, 1)).collect();
        let mut r = Records::new(&mut buf, 24, 0).unwrap();
        let mut h = Holdings::new(&mut r);
        let mut other: Vec<u8> = (10..12).flat_map(|i| record(i, 1)).collect();
        let incoming = Records::new(&mut other, 24, 0).unwrap().copy_range(0..2);
        h.receive(incoming, 2);
        let (sent, carried) = take(&mut h, 3, 2, None);
        assert_eq!((sent.len(), carried), (2, 3));
        h.prepare_commit().unwrap();
        h.commit();
        assert_eq!(ids(&r), [0, 1, 2, 3, 4]);
        // Weighted records: the load function reads the second word.
        let weigh = |b: &[u8]| u64::from_ne_bytes(b[8..16].try_into().unwrap());
        let mut buf: Vec<u8> = [(1, 5), (2, 3), (3, 3), (4, 1), (5, 8)]
            .iter()
            .flat_map(|&(i, c)| record(i, c))
            .collect();
        let mut r = Records::new(&mut buf, 24, 0).unwrap().with_loads(&weigh);
        let mut h = Holdings::new(&mut r);
        let (_, carried) = take(&mut h, 7, 100, None);
        assert_eq!(carried, 6); // as with items: 5 + 1
        let aside = h.set_aside();
        assert_eq!(aside.len(), 2);
        assert_eq!(ids(&r), [2, 3, 5]);
        // Records of another size cannot be settled into this store: they stay aside and the
        // store is untouched.
        let mut other_size: Vec<u8> = (0..2)
            .flat_map(|i| [i, 0].map(u64::to_ne_bytes).concat())
            .collect();
        let mut wrong = Records::new(&mut other_size, 16, 0).unwrap();
        let (aside, e) = aside.settle(&mut wrong, false).unwrap_err();
        assert!(matches!(e, StoreError::Mismatch(_)), "{e}");
        assert_eq!(ids(&wrong), [0, 1]);
        assert_eq!(aside.len(), 2);
        aside.settle(&mut r, false).unwrap();
        let mut back = ids(&r);
        back.sort_unstable();
        assert_eq!(back, [1, 2, 3, 4, 5]);
    }

    /// A buffer that cannot grow past a fixed capacity (as a foreign buffer whose `realloc`
    /// fails).
    struct Capped(Vec<u8>, usize);

    impl super::super::store::RecordBuffer for Capped {
        fn bytes(&self) -> &[u8] {
            &self.0
        }
        fn bytes_mut(&mut self) -> &mut [u8] {
            &mut self.0
        }
        fn reserve_total(&mut self, total: usize) -> Result<(), StoreError> {
            if total > self.1 {
                return Err(StoreError::NoRoom {
                    items: total,
                    bytes_each: 1,
                    reason: "capped".into(),
                });
            }
            self.0.reserve(total.saturating_sub(self.0.len()));
            Ok(())
        }
        fn truncate(&mut self, len: usize) {
            self.0.truncate(len);
        }
        fn extend_from_slice(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
    }

    #[test]
    fn weighted_records_received_are_forwarded_then_committed_and_a_full_buffer_refuses() {
        let record = |id: u64, cost: u64| [id, cost, !id].map(u64::to_ne_bytes).concat();
        let weigh = |b: &[u8]| u64::from_ne_bytes(b[8..16].try_into().unwrap());
        let mut buf: Vec<u8> = [(1, 2), (2, 2)]
            .iter()
            .flat_map(|&(i, c)| record(i, c))
            .collect();
        let mut other: Vec<u8> = [(10, 4), (11, 1)]
            .iter()
            .flat_map(|&(i, c)| record(i, c))
            .collect();
        let incoming = Records::new(&mut other, 24, 0)
            .unwrap()
            .with_loads(&weigh)
            .copy_range(0..2);
        let mut r = Records::new(&mut buf, 24, 0).unwrap().with_loads(&weigh);
        let mut h = Holdings::new(&mut r);
        h.receive(incoming.clone(), 5);
        let (sent, carried) = take(&mut h, 4, 100, None);
        assert_eq!(carried, 4);
        assert_eq!(sent.len(), 1);
        assert_eq!(h.store().chunk_len(&sent[0]), 1);
        h.prepare_commit().unwrap();
        h.commit();
        assert_eq!(ids(&r), [1, 2, 11]);
        for i in 0..r.len() {
            let rec = r.record(i);
            assert_eq!(rec[16..24], (!r.id(i)).to_ne_bytes());
        }

        // A buffer that cannot hold what it would receive: preparing the commit fails and the
        // records stay exactly as they were.
        let mut capped = Capped((0..2).flat_map(|i| record(i, 1)).collect(), 2 * 24);
        let before = capped.0.clone();
        let mut r = Records::new(&mut capped, 24, 0).unwrap();
        let mut h = Holdings::new(&mut r);
        h.receive(incoming, 2);
        assert!(matches!(h.prepare_commit(), Err(StoreError::NoRoom { .. })));
        h.roll_back();
        assert_eq!(capped.0, before);
    }
}
