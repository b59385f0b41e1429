//! The future-event list, ordered by time, then by insertion.
//!
//! Times are `f64` seconds compared with [`f64::total_cmp`], so the order is total even for
//! values a caller should never produce (NaN sorts last). Events at the same time come out in
//! the order they were pushed, which makes every run with the same inputs replay exactly.
//!
//! **A radix heap of radix 256, with a sorted front.** A simulation never schedules an event
//! before the one it is handling, so the keys popped never decrease — the case a radix heap is
//! made for. Each key (time, then insertion number, as one 128-bit integer) is filed in the
//! bucket named by the highest byte in which it differs from a base key and by its value
//! there; every key of a lower bucket is below every key of a higher one. The next pops are
//! kept apart, sorted: when that *front* is empty it takes whole buckets, lowest first, until
//! it holds 16 keys (never more than 64; with more than 65,536 events pending, one key per
//! 4,096 of them, up to 128, never more than 512), and a lowest bucket too large to take is
//! first split around its smallest key into lower buckets. A push is an append to a bucket
//! (or, rarely, an insertion into the front when it falls among the next pops), and a key
//! moves down at most 16 levels over its life, in vectors written in order; its cost does not
//! grow with the number of pending events the way a binary heap's does, and memory is touched
//! sequentially instead of along a heap's random paths.
//!
//! The front also tells the engine which events come next, several ahead
//! ([`EventQueue::ahead`]), so that it can start loading their memory early. A key below the
//! last one popped, which the engine never makes, still comes out in order, from a small
//! binary heap kept beside.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A scheduled event.
#[derive(Debug, Clone)]
pub struct Scheduled<E> {
    /// `(time, seq)` as one integer whose unsigned order is `total_cmp`'s, then `seq`'s:
    /// computed once at push, so a heap comparison is a single integer comparison.
    key: u128,
    /// The event.
    pub event: E,
}

impl<E> Scheduled<E> {
    /// When it fires, in seconds.
    pub fn time(&self) -> f64 {
        let bits = (self.key >> 64) as u64;
        f64::from_bits(if bits >> 63 == 1 {
            bits & !(1 << 63)
        } else {
            !bits
        })
    }

    /// Insertion number: ties in time fire in increasing `seq`.
    pub fn seq(&self) -> u64 {
        self.key as u64
    }
}

/// The bits of `t` mapped so that unsigned integer order is [`f64::total_cmp`] order.
fn ordered_bits(t: f64) -> u64 {
    let bits = t.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Scheduled<E> {}

impl<E> PartialOrd for Scheduled<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Scheduled<E> {
    /// Reversed, so that [`BinaryHeap`] (a max-heap) pops the earliest event.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A min-queue of events by `(time, insertion order)` (see the module documentation).
///
/// # Complexity
/// `O(1)` per push (`O(f)` when it lands in the front of `f` keys, 64 to 512), amortised `O(1)`
/// per pop: at most 16 moves of a key over its life, and a sort of at most `f` keys per `f/4`
/// pops or more.
///
/// # Example
/// ```
/// use hetlb_sim::queue::EventQueue;
/// let mut q = EventQueue::new();
/// q.push(2.0, "late");
/// q.push(1.0, "first");
/// q.push(1.0, "second");
/// assert_eq!(q.peek_time(), Some(1.0));
/// assert_eq!(q.pop().map(|s| s.event), Some("first"));
/// assert_eq!(q.pop().map(|s| s.event), Some("second"));
/// assert_eq!(q.pop().map(|s| s.event), Some("late"));
/// assert!(q.pop().is_none());
/// ```
#[derive(Debug, Clone)]
pub struct EventQueue<E> {
    /// The smallest pending keys, below every key in the buckets, sorted in decreasing order:
    /// the next pops are its last elements, in order.
    front: Vec<Scheduled<E>>,
    /// `buckets[0]`: keys equal to `base`; `buckets[256·p + d]`, `d ≥ 1`: keys whose highest
    /// byte differing from `base` is byte `p` (counted from the lowest), where they hold `d`.
    buckets: Vec<Vec<Scheduled<E>>>,
    /// Which buckets other than `buckets[0]` hold a key: the lowest non-empty one is found
    /// with a few instructions instead of a scan.
    occupied: Occupied,
    /// The key the buckets are filed around: at most every key in them.
    base: u128,
    /// The last key popped (0 before any pop): every key in `front` and the buckets is at
    /// least this.
    last: u128,
    len: usize,
    /// Keys below `last` (never pushed by the engine; kept so that any use stays in order).
    early: BinaryHeap<Scheduled<E>>,
    /// Scratch of [`sort_descending`], kept between refills.
    places: Vec<u16>,
    next_seq: u64,
}

/// Bits of a key per level of buckets.
const DIGIT_BITS: u32 = 8;

/// Buckets per level: one per value of a digit.
const RADIX: usize = 1 << DIGIT_BITS;

/// Levels: digits in a 128-bit key.
const LEVELS: usize = 128 / DIGIT_BITS as usize;

/// Buckets: a level of [`RADIX`] per digit (the first of each, digit 0, is never used but by
/// level 0's, which holds the keys equal to the base).
const BUCKETS: usize = LEVELS * RADIX;

/// The non-empty buckets, as bit sets: levels, then digits within a level.
#[derive(Debug, Clone, Default)]
struct Occupied {
    levels: u16,
    digits: [[u64; RADIX / 64]; LEVELS],
}

impl Occupied {
    #[inline]
    fn mark(&mut self, bucket: usize) {
        let (level, digit) = (bucket / RADIX, bucket % RADIX);
        self.levels |= 1 << level;
        self.digits[level][digit / 64] |= 1 << (digit % 64);
    }

    #[inline]
    fn clear(&mut self, bucket: usize) {
        let (level, digit) = (bucket / RADIX, bucket % RADIX);
        let words = &mut self.digits[level];
        words[digit / 64] &= !(1 << (digit % 64));
        if words.iter().all(|&w| w == 0) {
            self.levels &= !(1 << level);
        }
    }

    /// The lowest marked bucket.
    #[inline]
    fn lowest(&self) -> Option<usize> {
        if self.levels == 0 {
            return None;
        }
        let level = self.levels.trailing_zeros() as usize;
        let words = &self.digits[level];
        let (word, bits) = words.iter().enumerate().find(|&(_, &w)| w != 0)?;
        Some(level * RADIX + word * 64 + bits.trailing_zeros() as usize)
    }
}

/// The most keys [`EventQueue::next_hint`] compares to find the next event.
const AHEAD_SCAN: usize = 8;

/// The front gathers whole buckets, lowest first, until it holds at least this many keys…
const FRONT_MIN: usize = 16;

/// …and never more than four times as many: a larger lowest bucket is split around its
/// smallest key.
const FRONT_SPAN: usize = 4;

/// With many events pending the front gathers more: one key per this many pending, up to…
const PENDING_PER_FRONT_KEY: usize = 1 << 12;

/// …this many (so at most `4 ×` this in the front).
const FRONT_MIN_MOST: usize = 128;

/// How many keys a refill gathers at least, and at most, with `pending` events pending.
///
/// A front of 16 to 64 keys suits a thousand pending events; with a million, the lowest
/// buckets hold hundreds of keys each, and a small front splits them into lower buckets (one
/// more move of every key) where a larger one takes them whole and sorts them. A larger front
/// costs where few events are pending: a new event then often falls among the next pops, and
/// is inserted into the sorted front (measured: 16 to 64 keys throughout made a million
/// pending events 8–12% slower per event; 128 to 512 throughout made a thousand 3–10% slower).
/// The pops come out in the same order whatever the sizes.
#[inline]
fn front_bounds(pending: usize) -> (usize, usize) {
    let least = (pending / PENDING_PER_FRONT_KEY).clamp(FRONT_MIN, FRONT_MIN_MOST);
    (least, FRONT_SPAN * least)
}

/// Fronts of at least this many keys are sorted by the eight bits from their highest
/// differing one first ([`sort_descending`]).
const DISTRIBUTED_SORT_MIN: usize = 96;

/// At most this many keys of a front may share those bits; more, and the front is sorted by
/// comparisons instead.
const DISTRIBUTED_SORT_CROWD: u16 = 24;

/// Sorts `front` by key, largest first (the next pops at the end).
///
/// A large front (with a million events pending it holds 128 to 512 keys, nearly always of
/// one bucket) is nearly uniform in the eight bits from the highest in which its keys differ,
/// so it is first distributed by them — a count, then each key swapped to its place — and
/// what is left out of order, keys sharing those bits, is put right by insertion. That costs
/// a few passes without the mispredicted branches of a comparison sort on random keys, which
/// were a sixth of the event loop's time at 2^20 nodes. A small or crowded front is sorted by
/// comparisons. Both give the one order of the keys, which are distinct (each has its push
/// number). True when the front was distributed.
///
/// # Complexity
/// `O(n + 256)` for a distributed front of `n` keys (the insertion moves a key past at most
/// [`DISTRIBUTED_SORT_CROWD`] others), `O(n log n)` otherwise.
fn sort_descending<E>(front: &mut [Scheduled<E>], places: &mut Vec<u16>) -> bool {
    let n = front.len();
    if n < DISTRIBUTED_SORT_MIN || n > usize::from(u16::MAX) {
        front.sort_unstable_by_key(|s| std::cmp::Reverse(s.key));
        return false;
    }
    let first = front[0].key;
    let differ = front.iter().fold(0u128, |d, s| d | (s.key ^ first));
    if differ == 0 {
        return false;
    }
    // The eight bits from the highest in which keys differ: every key shares those above.
    let shift = (127 - differ.leading_zeros()).saturating_sub(DIGIT_BITS - 1);
    // The digit counted from the largest, so that the count's order is descending.
    let digit = |key: u128| RADIX - 1 - (key >> shift) as usize % RADIX;
    let mut starts = [0u16; RADIX];
    for s in front.iter() {
        starts[digit(s.key)] += 1;
    }
    if starts.iter().any(|&c| c > DISTRIBUTED_SORT_CROWD) {
        front.sort_unstable_by_key(|s| std::cmp::Reverse(s.key));
        return false;
    }
    let mut next = 0u16;
    for c in &mut starts {
        let count = *c;
        *c = next;
        next += count;
    }
    // Where each key goes, then every key swapped along its cycle to its place.
    places.clear();
    places.extend(front.iter().map(|s| {
        let d = digit(s.key);
        let place = starts[d];
        starts[d] += 1;
        place
    }));
    for i in 0..n {
        loop {
            let j = usize::from(places[i]);
            if j == i {
                break;
            }
            front.swap(i, j);
            places.swap(i, j);
        }
    }
    // Keys of one digit are next to each other, in any order: insertion puts them right.
    for i in 1..n {
        let mut j = i;
        while j > 0 && front[j - 1].key < front[j].key {
            front.swap(j - 1, j);
            j -= 1;
        }
    }
    true
}

/// The bucket of `key` relative to `base` (`key ≥ base`): its highest byte differing from
/// `base`'s, and its value there.
#[inline]
fn bucket_of(key: u128, base: u128) -> usize {
    let differ = key ^ base;
    if differ == 0 {
        return 0;
    }
    let level = (127 - differ.leading_zeros()) / DIGIT_BITS;
    let digit = (key >> (level * DIGIT_BITS)) as usize % RADIX;
    level as usize * RADIX + digit
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self {
            front: Vec::with_capacity(FRONT_SPAN * FRONT_MIN),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: Occupied::default(),
            base: 0,
            last: 0,
            len: 0,
            early: BinaryHeap::new(),
            places: Vec::new(),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time`.
    ///
    /// # Complexity
    /// `O(1)`.
    pub fn push(&mut self, time: f64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = (u128::from(ordered_bits(time)) << 64) | u128::from(seq);
        let item = Scheduled { key, event };
        self.len += 1;
        if key < self.last {
            self.early.push(item);
        } else if self.front.first().is_some_and(|max| key < max.key) {
            // among the next pops: in its place in the sorted front
            let at = self.front.partition_point(|s| s.key > key);
            self.front.insert(at, item);
        } else {
            self.file(item, self.base);
        }
    }

    /// Appends `item` to its bucket relative to `base`.
    #[inline]
    fn file(&mut self, item: Scheduled<E>, base: u128) {
        let b = bucket_of(item.key, base);
        if b > 0 {
            self.occupied.mark(b);
        }
        self.buckets[b].push(item);
    }

    /// Fills the empty front with the smallest pending keys, when any are pending: whole
    /// buckets, lowest first (each one's keys are below every key of the buckets above), until
    /// it holds the least of [`front_bounds`]; a lowest bucket too large to take whole (past
    /// the most) is first split around its smallest key, which moves its keys to lower
    /// buckets.
    fn refill(&mut self) {
        debug_assert!(self.front.is_empty());
        let (least, most) = front_bounds(self.len);
        loop {
            if !self.buckets[0].is_empty() {
                self.front.append(&mut self.buckets[0]);
            }
            if self.front.len() >= least {
                break;
            }
            let Some(b) = self.occupied.lowest() else {
                break;
            };
            if self.front.len() + self.buckets[b].len() <= most {
                self.occupied.clear(b);
                self.front.append(&mut self.buckets[b]);
            } else if self.front.is_empty() {
                self.split(b);
            } else {
                break;
            }
        }
        sort_descending(&mut self.front, &mut self.places);
    }

    /// Refiles bucket `b`, the lowest non-empty one, around its smallest key, which becomes
    /// the base (it lands in `buckets[0]`).
    fn split(&mut self, b: usize) {
        self.occupied.clear(b);
        let mut items = std::mem::take(&mut self.buckets[b]);
        let min = items.iter().map(|s| s.key).min().unwrap_or(self.base);
        self.base = min;
        for item in items.drain(..) {
            // Every key of bucket `b` shares the bytes above its level with `min`, and the
            // byte at its level too: each lands in a lower bucket.
            self.file(item, min);
        }
        // Keep the allocation for the next keys of this bucket.
        self.buckets[b] = items;
    }

    /// Removes and returns the earliest event.
    ///
    /// # Complexity
    /// Amortised `O(1)` per event over its life (each key moves down at most 16 levels).
    // Inlined into the engine's event loop, whose first step it is: left to itself the
    // compiler stopped inlining it when the loop grew.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        if let Some(item) = self.early.pop() {
            self.len -= 1;
            return Some(item);
        }
        if self.front.is_empty() {
            self.refill();
        }
        let item = self.front.pop()?;
        self.last = item.key;
        self.len -= 1;
        Some(item)
    }

    /// The event most likely to be popped next, found without moving any: the front's first,
    /// or when the front is empty the lowest bucket's earliest if that bucket holds at most 8
    /// keys, none otherwise. An event
    /// pushed before the next pop may still come first; the engine uses the answer only to
    /// start loading the memory the event will touch.
    #[inline]
    pub fn next_hint(&self) -> Option<&E> {
        if let Some(s) = self.early.peek() {
            return Some(&s.event);
        }
        if let Some(s) = self.front.last() {
            return Some(&s.event);
        }
        if let Some(s) = self.buckets[0].last() {
            return Some(&s.event);
        }
        let bucket = &self.buckets[self.occupied.lowest()?];
        if bucket.len() > AHEAD_SCAN {
            return None;
        }
        bucket.iter().min_by_key(|s| s.key).map(|s| &s.event)
    }

    /// The event `d + 1` pops from now, as far as the keys pending now tell (`ahead(0)` is
    /// the next pop): known for `d` below the sorted front's length, none otherwise. As with
    /// [`next_hint`](Self::next_hint), an event pushed in between may come first; the engine
    /// uses the answer to load memory early.
    ///
    /// # Example
    /// ```
    /// use hetlb_sim::queue::EventQueue;
    /// let mut q = EventQueue::new();
    /// for (t, name) in [(3.0, "c"), (1.0, "a"), (2.0, "b")] {
    ///     q.push(t, name);
    /// }
    /// assert_eq!(q.pop().map(|s| s.event), Some("a"));
    /// assert_eq!(q.ahead(0), Some(&"b"));
    /// assert_eq!(q.ahead(1), Some(&"c"));
    /// assert_eq!(q.ahead(2), None);
    /// ```
    #[inline]
    pub fn ahead(&self, d: usize) -> Option<&E> {
        if !self.early.is_empty() {
            return None;
        }
        let i = self.front.len().checked_sub(d + 1)?;
        Some(&self.front[i].event)
    }

    /// The time of the earliest event.
    pub fn peek_time(&mut self) -> Option<f64> {
        if let Some(s) = self.early.peek() {
            return Some(s.time());
        }
        if self.front.is_empty() {
            self.refill();
        }
        self.front.last().map(Scheduled::time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Scheduled<E>> {
        self.front
            .iter()
            .chain(self.buckets.iter().flatten())
            .chain(self.early.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Pops come out sorted by time, ties in push order.
        #[test]
        fn pops_in_time_then_push_order(times in proptest::collection::vec(0u8..10, 0..200)) {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(f64::from(t), i);
            }
            let mut expected: Vec<(u8, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let got: Vec<(u8, usize)> = std::iter::from_fn(|| q.pop())
                .map(|s| (s.time() as u8, s.event))
                .collect();
            prop_assert_eq!(got, expected);
        }

        /// Pushes interleaved with pops, as an engine makes them (never before the last pop,
        /// and sometimes before it, which still comes out in order), against a sorted list.
        #[test]
        fn interleaved_pushes_and_pops_match_a_sorted_list(
            steps in proptest::collection::vec((0u16..1000, 0u8..4, any::<bool>()), 0..400)
        ) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u128, usize)> = Vec::new();
            let mut now = 0.0f64;
            for (i, &(dt, pushes, behind)) in steps.iter().enumerate() {
                for k in 0..pushes {
                    let t = if behind && k == 0 { now - 1.0 } else { now + f64::from(dt) / 10.0 };
                    q.push(t, i * 4 + k as usize);
                    reference.push((u128::from(ordered_bits(t)) << 64 | u128::from(q.next_seq - 1), i * 4 + k as usize));
                }
                reference.sort();
                if !reference.is_empty() {
                    let (_, expected) = reference.remove(0);
                    prop_assert_eq!(q.peek_time().is_some(), true);
                    let got = q.pop().unwrap();
                    prop_assert_eq!(got.event, expected);
                    now = now.max(got.time());
                }
                prop_assert_eq!(q.len(), reference.len());
            }
        }

        /// A hint, when given and nothing is pushed before the next pop, names the event that
        /// pop returns.
        #[test]
        fn the_hint_names_the_next_pop(
            times in proptest::collection::vec(0u32..100_000, 1..300),
            behind in proptest::collection::vec(0u32..1000, 0..4)
        ) {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(f64::from(t) / 7.0, i);
            }
            // a first pop, then keys below it (the binary heap beside)
            let _ = q.pop();
            for (i, &t) in behind.iter().enumerate() {
                q.push(-f64::from(t), times.len() + i);
            }
            let mut hinted = 0;
            loop {
                let hint = q.next_hint().copied();
                let Some(popped) = q.pop() else {
                    prop_assert_eq!(hint, None);
                    break;
                };
                if let Some(h) = hint {
                    prop_assert_eq!(h, popped.event);
                    hinted += 1;
                }
            }
            // the last pops come from buckets of a few keys: they are always hinted
            prop_assert!(hinted >= times.len().min(AHEAD_SCAN) - 1);
        }

        /// Looking further ahead: when nothing is pushed in between, `ahead(d)` names the
        /// event popped `d + 1` pops later, for every `d` it answers.
        #[test]
        fn ahead_names_the_pops_to_come(
            times in proptest::collection::vec(0u32..50_000, 1..400),
            pops_between in proptest::collection::vec(1usize..5, 1..100)
        ) {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(f64::from(t) / 3.0, i);
            }
            // the first pop fills the front
            prop_assert_eq!(q.ahead(0), None);
            let _ = q.pop();
            let mut answered = 0;
            for &pops in pops_between.iter().cycle().take(times.len()) {
                let known: Vec<Option<usize>> = (0..FRONT_SPAN * FRONT_MIN_MOST).map(|d| q.ahead(d).copied()).collect();
                for (d, expected) in known.iter().enumerate() {
                    if d >= pops {
                        break;
                    }
                    let popped = q.pop().map(|s| s.event);
                    if let Some(e) = expected {
                        prop_assert_eq!(Some(*e), popped);
                        answered += 1;
                    }
                }
                // a push among the next pops goes into its place in the front
                if let Some(s) = q.pop() {
                    q.push(s.time(), usize::MAX - s.event);
                    let known: Vec<Option<usize>> = (0..3).map(|d| q.ahead(d).copied()).collect();
                    for expected in known {
                        let popped = q.pop().map(|s| s.event);
                        if let Some(e) = expected {
                            prop_assert_eq!(Some(e), popped);
                        }
                    }
                }
            }
            prop_assert!(answered > 0 || times.len() < 2);
        }

        /// Times spread over many binades and many equal times, pushed while popping, against
        /// a sorted list: keys that differ in high bits and in low ones.
        #[test]
        fn wide_keys_match_a_sorted_list(
            steps in proptest::collection::vec((any::<u64>(), 0u8..3, 0u8..4), 1..300)
        ) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(f64, usize)> = Vec::new();
            let mut now = 0.0f64;
            let mut pushed = 0usize;
            for &(bits, pushes, equal) in &steps {
                for k in 0..pushes {
                    // a gap of any size, or none (an equal time)
                    let gap = if equal == 0 { 0.0 } else { f64::from_bits(bits >> (2 + k)) .abs() };
                    let t = now + if gap.is_finite() { gap } else { 1.0 };
                    q.push(t, pushed);
                    reference.push((t, pushed));
                    pushed += 1;
                }
                reference.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
                if !reference.is_empty() {
                    let (t, expected) = reference.remove(0);
                    let got = q.pop().unwrap();
                    prop_assert_eq!(got.event, expected);
                    prop_assert_eq!(got.time().to_bits(), t.to_bits());
                    now = t;
                }
            }
            while let Some(got) = q.pop() {
                let (_, expected) = reference.remove(0);
                prop_assert_eq!(got.event, expected);
            }
            prop_assert!(reference.is_empty());
        }

        /// Against a `BinaryHeap` of `(time in total_cmp order, push number)`: the same pops,
        /// ties included, for times spread over many scales and pushes interleaved with pops.
        #[test]
        fn pops_like_a_binary_heap(
            steps in proptest::collection::vec((0u8..6, 0u32..1 << 20, 0u8..40, 0u8..3), 1..500)
        ) {
            use std::cmp::Reverse;
            let mut q = EventQueue::new();
            let mut heap = BinaryHeap::new();
            let mut now = 0.0f64;
            let mut pushed = 0u64;
            for &(pushes, mantissa, scale, pops) in &steps {
                for k in 0..pushes {
                    // gaps of 0 (equal times) and from 2^-30 to 2^9 s
                    let gap = f64::from(mantissa >> (k * 4)) * (f64::from(scale) - 30.0).exp2();
                    let t = now + gap;
                    q.push(t, pushed);
                    heap.push(Reverse((ordered_bits(t), pushed)));
                    pushed += 1;
                }
                for _ in 0..pops {
                    let expected = heap.pop().map(|Reverse((_, e))| e);
                    let got = q.pop();
                    prop_assert_eq!(got.as_ref().map(|s| s.event), expected);
                    if let Some(s) = got {
                        now = s.time();
                    }
                }
                prop_assert_eq!(q.len(), heap.len());
            }
            while let Some(Reverse((_, e))) = heap.pop() {
                prop_assert_eq!(q.pop().map(|s| s.event), Some(e));
            }
            prop_assert!(q.pop().is_none());
        }

        /// The integer key orders like `total_cmp`, negative values and NaN included.
        #[test]
        fn key_order_is_total_cmp(a in any::<f64>(), b in any::<f64>()) {
            prop_assert_eq!(ordered_bits(a).cmp(&ordered_bits(b)), a.total_cmp(&b));
            let mut q = EventQueue::new();
            q.push(a, ());
            let s = q.pop().unwrap();
            prop_assert_eq!(s.time().to_bits(), a.to_bits());
            prop_assert_eq!(s.seq(), 0);
        }
    }

    proptest! {
        /// The distributed sort gives what a comparison sort gives: keys spread over any
        /// bits, crowded on a few values, equal times with distinct push numbers.
        #[test]
        fn the_front_sorts_as_a_comparison_sort_does(
            times in proptest::collection::vec((0u64..4, any::<u64>()), 0..600),
            spread in 0u32..64,
            coarse in any::<bool>(),
        ) {
            let mut front: Vec<Scheduled<usize>> = times
                .iter()
                .enumerate()
                .map(|(i, &(high, fine))| Scheduled {
                    // a high part shared or of four values, times spread over the bits
                    // below `64 - spread`, a push number
                    key: (u128::from(((u64::from(coarse) * high) << 62) | (fine >> spread)) << 64)
                        | i as u128,
                    event: i,
                })
                .collect();
            let expected: Vec<usize> = {
                let mut keys: Vec<(u128, usize)> = front.iter().map(|s| (s.key, s.event)).collect();
                keys.sort_unstable_by_key(|k| std::cmp::Reverse(k.0));
                keys.into_iter().map(|(_, e)| e).collect()
            };
            let mut places = Vec::new();
            sort_descending(&mut front, &mut places);
            let got: Vec<usize> = front.iter().map(|s| s.event).collect();
            prop_assert_eq!(&got, &expected);
            // again on what is already sorted
            sort_descending(&mut front, &mut places);
            let again: Vec<usize> = front.iter().map(|s| s.event).collect();
            prop_assert_eq!(again, expected);
        }
    }

    /// A front of 512 keys spread below their highest differing bit is distributed, and comes
    /// out as a comparison sort orders it; one crowded there is sorted by comparisons.
    #[test]
    fn a_spread_front_is_distributed_and_a_crowded_one_compared() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(5);
        for (crowded, distributed) in [(false, true), (true, false)] {
            let mut front: Vec<Scheduled<usize>> = (0..512)
                .map(|i| {
                    // crowded: one key far from the others, which are close together
                    let time = match (crowded, i) {
                        (true, 0) => 3.5,
                        (true, _) => 3.0 + rng.random::<f64>() * 1e-9,
                        (false, _) => 3.0 + rng.random::<f64>(),
                    };
                    Scheduled {
                        key: (u128::from(ordered_bits(time)) << 64) | i as u128,
                        event: i,
                    }
                })
                .collect();
            let mut expected: Vec<u128> = front.iter().map(|s| s.key).collect();
            expected.sort_unstable_by_key(|&k| std::cmp::Reverse(k));
            let mut places = Vec::new();
            assert_eq!(sort_descending(&mut front, &mut places), distributed);
            let got: Vec<u128> = front.iter().map(|s| s.key).collect();
            assert_eq!(got, expected, "crowded: {crowded}");
        }
    }

    /// With hundreds of thousands pending, the front gathers more keys (up to 512 after a
    /// refill), and the pops still come in order, pushes landing among them included.
    #[test]
    fn a_large_front_keeps_the_order() {
        use rand::{RngExt, SeedableRng};
        use std::cmp::Reverse;
        for seed in 0..3u64 {
            let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
            let mut q = EventQueue::new();
            let mut heap = BinaryHeap::new();
            let mut now = 0.0f64;
            let mut pushed = 0usize;
            let mut widest = 0usize;
            for _ in 0..200_000 {
                for _ in 0..rng.random_range(2..=3) {
                    // mostly far ahead, sometimes among the next pops, sometimes at `now`
                    let t = match rng.random_range(0..8) {
                        0 => now,
                        1 => now + rng.random::<f64>() * 1e-3,
                        _ => now + rng.random::<f64>() * 100.0,
                    };
                    q.push(t, pushed);
                    heap.push(Reverse((ordered_bits(t), pushed)));
                    pushed += 1;
                }
                let expected = heap.pop().map(|Reverse((_, e))| e);
                let got = q.pop();
                assert_eq!(got.as_ref().map(|s| s.event), expected, "seed {seed}");
                if let Some(s) = got {
                    now = s.time();
                }
                widest = widest.max(q.front.len());
            }
            assert!(widest > 64, "the front never grew: {widest}");
            while let Some(Reverse((_, e))) = heap.pop() {
                assert_eq!(q.pop().map(|s| s.event), Some(e));
            }
            assert!(q.pop().is_none());
        }
    }
}
