//! The future-event list: a binary heap ordered by time, then by insertion.
//!
//! Times are `f64` seconds compared with [`f64::total_cmp`], so the order is total even for
//! values a caller should never produce (NaN sorts last). Events at the same time come out in
//! the order they were pushed, which makes every run with the same inputs replay exactly.

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

/// A min-queue of events by `(time, insertion order)`.
///
/// # Complexity
/// `O(log n)` per push and pop.
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
    heap: BinaryHeap<Scheduled<E>>,
    next_seq: u64,
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
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time`.
    pub fn push(&mut self, time: f64, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = (u128::from(ordered_bits(time)) << 64) | u128::from(seq);
        self.heap.push(Scheduled { key, event });
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        self.heap.pop()
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(Scheduled::time)
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The pending events, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Scheduled<E>> {
        self.heap.iter()
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
}
