//! A node's FIFO queue of tasks, the first few kept inside the node record.

use std::collections::VecDeque;

/// How many tasks are kept inline. Under the M/M/1-like loads the simulator models, a node
/// holds at most this many tasks most of the time (at utilisation 0.55, 91% of the time), so
/// most events touch no memory outside the node record.
const INLINE: usize = 3;

/// A FIFO queue of tasks (each the time it entered the system) whose oldest [`INLINE`] tasks
/// live in a ring inside the queue itself, and the newer ones, if any, in a heap-allocated
/// overflow. 40 bytes, so that it shares the node record's first cache line with what every
/// completion reads; its length is read without leaving the record.
///
/// The overflow, once allocated, is kept for the node's next long queue (as a [`VecDeque`]
/// keeps its buffer). Tasks leave in the order they came ([`TaskQueue::pop_front`]) or the
/// newest first ([`TaskQueue::take_back`], for transfers), exactly as a [`VecDeque`] would
/// give them.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskQueue {
    /// Index in `ring` of the oldest task.
    head: u32,
    /// Tasks in all: the first `min(len, INLINE)` in `ring`, the rest in `overflow`.
    len: u32,
    ring: [f64; INLINE],
    /// The tasks after the ring's, oldest first.
    #[expect(
        clippy::box_collection,
        reason = "a pointer of 8 bytes keeps the queue in the record's first line; a VecDeque takes 32"
    )]
    overflow: Option<Box<VecDeque<f64>>>,
}

impl TaskQueue {
    /// A queue of `count` tasks that entered at `time`.
    pub fn repeat(time: f64, count: usize) -> Self {
        let mut q = Self::default();
        q.extend(std::iter::repeat_n(time, count));
        q
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the queue holds no task.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The place in `ring` of the `k`-th oldest task (`k < INLINE`).
    fn slot(&self, k: usize) -> usize {
        (self.head as usize + k) % INLINE
    }

    /// Appends a task.
    ///
    /// # Panics
    /// Never below 2^32 tasks on one node, which the engine's memory bound keeps far off.
    pub fn push_back(&mut self, task: f64) {
        let n = self.len as usize;
        if n < INLINE {
            let at = self.slot(n);
            self.ring[at] = task;
        } else {
            self.overflow.get_or_insert_default().push_back(task);
        }
        self.len = u32::try_from(n + 1).expect("fewer than 2^32 tasks on a node");
    }

    /// Appends `tasks` in order.
    pub fn extend(&mut self, tasks: impl IntoIterator<Item = f64>) {
        for t in tasks {
            self.push_back(t);
        }
    }

    /// Removes and returns the oldest task.
    pub fn pop_front(&mut self) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        let at = self.head as usize;
        let task = self.ring[at];
        self.head = ((at + 1) % INLINE) as u32;
        self.len -= 1;
        if self.len as usize >= INLINE {
            // the oldest overflowing task takes the freed place, so the ring stays the front
            let back = self.slot(INLINE - 1);
            if let Some(next) = self.overflow.as_mut().and_then(|o| o.pop_front()) {
                self.ring[back] = next;
            }
        }
        Some(task)
    }

    /// Moves the newest `count` tasks (all, if fewer) to the end of `out`, oldest first.
    pub fn take_back(&mut self, count: usize, out: &mut Vec<f64>) {
        let n = self.len as usize;
        let count = count.min(n);
        let over = n.saturating_sub(INLINE);
        let from_over = count.min(over);
        let in_ring = n.min(INLINE);
        let keep = in_ring - (count - from_over);
        out.extend((keep..in_ring).map(|k| self.ring[self.slot(k)]));
        if from_over > 0
            && let Some(o) = &mut self.overflow
        {
            out.extend(o.drain(over - from_over..));
        }
        self.len = (n - count) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Push(Vec<f64>),
        Pop,
        Take(usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            prop::collection::vec(0.0..1e6f64, 0..7).prop_map(Op::Push),
            Just(Op::Pop),
            (0usize..9).prop_map(Op::Take),
        ]
    }

    #[test]
    fn fits_beside_the_completion_fields() {
        assert_eq!(std::mem::size_of::<TaskQueue>(), 40);
    }

    proptest! {
        /// Every sequence of appends, pops and takes gives what a `VecDeque` gives.
        #[test]
        fn behaves_as_a_vecdeque(start in 0usize..6, ops in prop::collection::vec(op(), 0..60)) {
            let mut q = TaskQueue::repeat(0.5, start);
            let mut model: VecDeque<f64> = std::iter::repeat_n(0.5, start).collect();
            let (mut got, mut want) = (Vec::new(), Vec::new());
            for op in ops {
                match op {
                    Op::Push(tasks) => {
                        q.extend(tasks.iter().copied());
                        model.extend(tasks);
                    }
                    Op::Pop => prop_assert_eq!(q.pop_front(), model.pop_front()),
                    Op::Take(n) => {
                        got.clear();
                        want.clear();
                        q.take_back(n, &mut got);
                        let keep = model.len() - n.min(model.len());
                        want.extend(model.drain(keep..));
                        prop_assert_eq!(&got, &want);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.is_empty(), model.is_empty());
                let over = q.overflow.as_ref().map_or(0, |o| o.len());
                prop_assert_eq!(over, model.len().saturating_sub(INLINE));
            }
        }
    }
}
