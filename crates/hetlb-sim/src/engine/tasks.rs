//! A node's FIFO queue of tasks, the first few kept inside the node record.

use std::collections::VecDeque;

/// How many tasks are kept inline. Under the M/M/1-like loads the simulator models, a node
/// holds at most this many tasks most of the time (at utilisation 0.55, 91% of the time), so
/// most events touch no memory outside the node record.
const INLINE: usize = 3;

/// A FIFO queue of tasks (each the time it entered the system) whose oldest tasks, up to
/// [`INLINE`], live in a ring inside the queue itself, and the newer ones, if any, in a
/// heap-allocated overflow. 40 bytes, so that it shares the node record's first cache line
/// with what every completion reads; its length is read without leaving the record.
///
/// The ring is refilled from the overflow only when it runs empty, [`INLINE`] tasks at a time,
/// so that a long queue reaches its overflow once per [`INLINE`] completions. The overflow,
/// once allocated, is kept for the node's next long queue (as a [`VecDeque`] keeps its
/// buffer). Tasks leave in the order they came ([`TaskQueue::pop_front`]) or the newest first
/// ([`TaskQueue::take_back`], for transfers), exactly as a [`VecDeque`] would give them.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskQueue {
    /// Index in `ring` of the oldest task.
    head: u16,
    /// Tasks in `ring`; the queue's oldest (no task of the overflow is older).
    ring_len: u16,
    /// Tasks in all, in `ring` and `overflow`.
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
    /// The most tasks a queue holds (its length is 32 bits, to keep it in the record).
    pub const MAX: u64 = u32::MAX as u64;

    /// A queue of `count` tasks that entered at `time`.
    ///
    /// # Errors
    /// [`QueueFull`] when `count` is above [`TaskQueue::MAX`].
    pub fn repeat(time: f64, count: u64) -> Result<Self, QueueFull> {
        if count > Self::MAX {
            return Err(QueueFull);
        }
        let mut q = Self::default();
        for _ in 0..count {
            q.extend(&[time])?;
        }
        Ok(q)
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

    /// Appends `tasks` in order: into the ring while it has room and nothing overflows, the
    /// rest to the overflow.
    ///
    /// # Errors
    /// [`QueueFull`], and nothing appended, when the queue would hold more than
    /// [`TaskQueue::MAX`] tasks.
    pub fn extend(&mut self, tasks: &[f64]) -> Result<(), QueueFull> {
        let n = self.len as usize + tasks.len();
        let new_len = u32::try_from(n).map_err(|_| QueueFull)?;
        let mut rest = tasks;
        if self.len == u32::from(self.ring_len) {
            let room = (INLINE - self.ring_len as usize).min(rest.len());
            for &t in &rest[..room] {
                let at = self.slot(self.ring_len as usize);
                self.ring[at] = t;
                self.ring_len += 1;
            }
            rest = &rest[room..];
        }
        if !rest.is_empty() {
            self.overflow.get_or_insert_default().extend(rest);
        }
        self.len = new_len;
        Ok(())
    }

    /// Removes and returns the oldest task.
    pub fn pop_front(&mut self) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        let at = self.head as usize;
        let task = self.ring[at];
        self.head = ((at + 1) % INLINE) as u16;
        self.ring_len -= 1;
        self.len -= 1;
        if self.ring_len == 0 && self.len > 0 {
            self.refill();
        }
        Some(task)
    }

    /// Moves the oldest overflowing tasks, up to [`INLINE`], into the empty ring.
    fn refill(&mut self) {
        self.head = 0;
        if let Some(o) = &mut self.overflow {
            let k = INLINE.min(o.len());
            for (slot, t) in self.ring.iter_mut().zip(o.drain(..k)) {
                *slot = t;
            }
            self.ring_len = k as u16;
        }
    }

    /// Moves the newest `count` tasks (all, if fewer) to the end of `out`, oldest first.
    pub fn take_back(&mut self, count: usize, out: &mut Vec<f64>) {
        let n = self.len as usize;
        let count = count.min(n);
        let in_ring = self.ring_len as usize;
        let over = n - in_ring;
        let from_over = count.min(over);
        let keep = in_ring - (count - from_over);
        out.extend((keep..in_ring).map(|k| self.ring[self.slot(k)]));
        self.ring_len = keep as u16;
        if from_over > 0
            && let Some(o) = &mut self.overflow
        {
            out.extend(o.drain(over - from_over..));
        }
        self.len = (n - count) as u32;
        if self.ring_len == 0 && self.len > 0 {
            self.refill();
        }
    }
}

/// A queue would hold more than [`TaskQueue::MAX`] tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueueFull;

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

    #[test]
    fn refuses_more_than_it_can_count() {
        assert_eq!(
            TaskQueue::repeat(0.0, TaskQueue::MAX + 1).err(),
            Some(QueueFull)
        );
        let mut q = TaskQueue {
            len: u32::MAX - 1,
            ..TaskQueue::default()
        };
        assert_eq!(q.extend(&[1.0, 2.0]), Err(QueueFull));
        assert_eq!(q.len(), (u32::MAX - 1) as usize);
    }

    proptest! {
        /// Every sequence of appends, pops and takes gives what a `VecDeque` gives.
        #[test]
        fn behaves_as_a_vecdeque(start in 0usize..6, ops in prop::collection::vec(op(), 0..60)) {
            let mut q = TaskQueue::repeat(0.5, start as u64).unwrap();
            let mut model: VecDeque<f64> = std::iter::repeat_n(0.5, start).collect();
            let (mut got, mut want) = (Vec::new(), Vec::new());
            for op in ops {
                match op {
                    Op::Push(tasks) => {
                        q.extend(&tasks).unwrap();
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
                prop_assert_eq!(over + usize::from(q.ring_len), model.len());
                prop_assert!(q.ring_len > 0 || model.is_empty());
            }
        }
    }
}
