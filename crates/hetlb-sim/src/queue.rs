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
    /// When it fires, in seconds.
    pub time: f64,
    /// Insertion number: ties in `time` fire in increasing `seq`.
    pub seq: u64,
    /// The event.
    pub event: E,
}

impl<E> PartialEq for Scheduled<E> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
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
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
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
        self.heap.push(Scheduled { time, seq, event });
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<Scheduled<E>> {
        self.heap.pop()
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(|s| s.time)
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
                .map(|s| (s.time as u8, s.event))
                .collect();
            prop_assert_eq!(got, expected);
        }
    }
}
