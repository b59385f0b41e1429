//! A node's FIFO queue of tasks, kept as runs of tasks that entered at the same time, the
//! first few runs inside the node record.

use std::collections::VecDeque;

/// How many runs are kept inline. Under the M/M/1-like loads the simulator models, a node
/// holds at most this many tasks most of the time (at utilisation 0.55, 91% of the time), so
/// most events touch no memory outside the node record; tasks that entered together (a node's
/// initial load, an injection, most batches) take one run whatever their number.
const INLINE: usize = 3;

/// Bits of one inline run's count in [`TaskQueue::counts`].
const COUNT_BITS: u32 = 10;

/// The most tasks one inline run holds; a longer run takes several slots (or goes on in the
/// overflow).
const INLINE_MAX: u32 = (1 << COUNT_BITS) - 1;

/// Consecutive tasks that entered the system at the same time: what a queue holds and a batch
/// carries, one entry per run instead of one per task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    /// When the tasks entered the system.
    pub time: f64,
    /// How many tasks (at least one in a queue or a batch).
    pub count: u32,
}

impl Run {
    /// True when `time` is this run's time, bit for bit (so that merging two runs never
    /// changes a time).
    fn same_time(&self, time: f64) -> bool {
        self.time.to_bits() == time.to_bits()
    }
}

/// The tasks of `runs`.
pub(crate) fn tasks_in(runs: &[Run]) -> u64 {
    runs.iter().map(|r| u64::from(r.count)).sum()
}

/// A FIFO queue of tasks (each the time it entered the system) kept as runs of equal times.
/// The oldest runs, up to [`INLINE`], live inside the queue itself — their times in an array,
/// oldest first, their counts packed in one word — and the newer ones, if any, in a
/// heap-allocated overflow. 40 bytes, so that it shares the node record's first cache line
/// with what every completion reads; its length is read without leaving the record.
///
/// A completion decrements the oldest run's count; when a run is used up the inline runs shift
/// down (one shift of the packed counts). The inline runs are refilled from the overflow only
/// when none is left, up to [`INLINE`] runs at a time. The overflow, once allocated, is kept
/// for the node's next long queue (as a [`VecDeque`] keeps its buffer). Tasks leave in the
/// order they came ([`TaskQueue::pop_front`]) or the newest first ([`TaskQueue::take_back`],
/// for transfers), with the times a [`VecDeque`] of one time per task would give.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskQueue {
    /// The inline runs' times, oldest first (slot `k` is valid while its count is non-zero).
    times: [f64; INLINE],
    /// The inline runs' counts, [`COUNT_BITS`] bits each, the oldest in the lowest bits; the
    /// first zero count ends the inline runs. No task of the overflow is older than these.
    counts: u32,
    /// Tasks in all, inline and in the overflow.
    len: u32,
    /// The runs after the inline ones, oldest first.
    #[expect(
        clippy::box_collection,
        reason = "a pointer of 8 bytes keeps the queue in the record's first line; a VecDeque takes 32"
    )]
    overflow: Option<Box<VecDeque<Run>>>,
}

impl TaskQueue {
    /// The most tasks a queue holds (its length is 32 bits, to keep it in the record).
    pub const MAX: u64 = u32::MAX as u64;

    /// A queue of `count` tasks that entered at `time`.
    ///
    /// # Errors
    /// [`QueueFull`] when `count` is above [`TaskQueue::MAX`].
    pub fn repeat(time: f64, count: u64) -> Result<Self, QueueFull> {
        let count = u32::try_from(count).map_err(|_| QueueFull)?;
        let mut q = Self::default();
        if count > 0 {
            q.extend(&[Run { time, count }])?;
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

    /// The count of inline run `k`.
    fn count(&self, k: usize) -> u32 {
        (self.counts >> (k as u32 * COUNT_BITS)) & INLINE_MAX
    }

    /// The number of inline runs.
    fn inline_runs(&self) -> usize {
        (32 - self.counts.leading_zeros()).div_ceil(COUNT_BITS) as usize
    }

    /// The tasks of the inline runs.
    fn inline_tasks(&self) -> u32 {
        self.count(0) + self.count(1) + self.count(2)
    }

    /// Appends the tasks of `runs` in order: a run whose time is the newest task's joins its
    /// run; otherwise inline while there is room and nothing overflows, the rest to the
    /// overflow.
    ///
    /// # Errors
    /// [`QueueFull`], and nothing appended, when the queue would hold more than
    /// [`TaskQueue::MAX`] tasks.
    pub fn extend(&mut self, runs: &[Run]) -> Result<(), QueueFull> {
        let total = u64::from(self.len) + tasks_in(runs);
        let new_len = u32::try_from(total).map_err(|_| QueueFull)?;
        let mut spilled = self.len > self.inline_tasks();
        for &run in runs {
            let mut left = run.count;
            if !spilled {
                left = self.append_inline(run.time, left);
                spilled = left > 0;
            }
            if left > 0 {
                let o = self.overflow.get_or_insert_default();
                match o.back_mut() {
                    Some(back) if back.same_time(run.time) => back.count += left,
                    _ => o.push_back(Run {
                        time: run.time,
                        count: left,
                    }),
                }
            }
        }
        self.len = new_len;
        Ok(())
    }

    /// Puts up to `count` tasks entered at `time` in the inline runs (nothing overflows):
    /// into the newest run if it has that time, then into free slots. Returns the tasks left.
    fn append_inline(&mut self, time: f64, mut count: u32) -> u32 {
        let mut k = self.inline_runs();
        if k > 0 && self.times[k - 1].to_bits() == time.to_bits() {
            let add = count.min(INLINE_MAX - self.count(k - 1));
            self.counts += add << ((k - 1) as u32 * COUNT_BITS);
            count -= add;
        }
        while count > 0 && k < INLINE {
            let add = count.min(INLINE_MAX);
            self.times[k] = time;
            self.counts |= add << (k as u32 * COUNT_BITS);
            count -= add;
            k += 1;
        }
        count
    }

    /// Removes and returns the oldest task.
    pub fn pop_front(&mut self) -> Option<f64> {
        if self.len == 0 {
            return None;
        }
        let task = self.times[0];
        self.len -= 1;
        // the oldest run's count is not zero: no borrow from the next
        self.counts -= 1;
        if self.counts & INLINE_MAX == 0 {
            self.counts >>= COUNT_BITS;
            self.times.copy_within(1.., 0);
            if self.counts == 0 && self.len > 0 {
                self.refill();
            }
        }
        Some(task)
    }

    /// Moves the oldest overflowing runs, up to [`INLINE`], into the empty inline runs (a run
    /// longer than [`INLINE_MAX`] in pieces, the rest left at the overflow's front).
    fn refill(&mut self) {
        debug_assert_eq!(self.counts, 0);
        let Some(o) = &mut self.overflow else {
            return;
        };
        for k in 0..INLINE {
            let Some(front) = o.front_mut() else {
                break;
            };
            let take = front.count.min(INLINE_MAX);
            self.times[k] = front.time;
            self.counts |= take << (k as u32 * COUNT_BITS);
            front.count -= take;
            if front.count == 0 {
                o.pop_front();
            }
        }
    }

    /// Moves the newest `count` tasks (all, if fewer) to the end of `out` as runs, oldest
    /// first.
    pub fn take_back(&mut self, count: usize, out: &mut Vec<Run>) {
        let count = count.min(self.len as usize) as u32;
        let start = out.len();
        let mut left = count;
        if self.len > self.inline_tasks()
            && let Some(o) = &mut self.overflow
        {
            while left > 0
                && let Some(back) = o.back_mut()
            {
                let take = back.count.min(left);
                out.push(Run {
                    time: back.time,
                    count: take,
                });
                back.count -= take;
                left -= take;
                if back.count == 0 {
                    o.pop_back();
                }
            }
        }
        while left > 0 {
            let k = self.inline_runs() - 1;
            let take = self.count(k).min(left);
            out.push(Run {
                time: self.times[k],
                count: take,
            });
            self.counts -= take << (k as u32 * COUNT_BITS);
            left -= take;
        }
        out[start..].reverse();
        self.len -= count;
        // the inline runs are taken last: when they are gone, so is the overflow
        debug_assert!(self.len == 0 || self.counts != 0);
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
        Push(Vec<Run>),
        Pop,
        Take(usize),
    }

    /// Runs of a few distinct times, so that runs meet runs of their own time; mostly short,
    /// some longer than an inline slot holds.
    fn run() -> impl Strategy<Value = Run> {
        (0u8..4, prop_oneof![4 => 1u32..4, 1 => 1u32..2_500]).prop_map(|(t, count)| Run {
            time: f64::from(t) * 0.5,
            count,
        })
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            1 => prop::collection::vec(run(), 0..5).prop_map(Op::Push),
            3 => Just(Op::Pop),
            1 => prop_oneof![3 => 0usize..8, 1 => 0usize..3_000].prop_map(Op::Take),
        ]
    }

    /// Every task of `runs`, in order.
    fn expand(runs: &[Run]) -> Vec<f64> {
        runs.iter()
            .flat_map(|r| std::iter::repeat_n(r.time, r.count as usize))
            .collect()
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
        let mut q = TaskQueue::repeat(1.0, TaskQueue::MAX - 1).unwrap();
        let two = Run {
            time: 2.0,
            count: 2,
        };
        assert_eq!(q.extend(&[two]), Err(QueueFull));
        assert_eq!(q.len(), (u32::MAX - 1) as usize);
        assert_eq!(q.extend(&[Run { count: 1, ..two }]), Ok(()));
        assert_eq!(q.len(), u32::MAX as usize);
    }

    #[test]
    fn one_run_of_equal_times_stays_inline() {
        let q = TaskQueue::repeat(0.0, 5).unwrap();
        assert!(q.overflow.is_none());
        assert_eq!(q.inline_runs(), 1);
        let q = TaskQueue::repeat(0.0, 3 * u64::from(INLINE_MAX)).unwrap();
        assert!(q.overflow.is_none());
        assert_eq!(q.inline_runs(), 3);
    }

    proptest! {
        /// Every sequence of appends, pops and takes gives the times a `VecDeque` of one time
        /// per task gives.
        #[test]
        fn behaves_as_a_vecdeque(start in 0usize..6, ops in prop::collection::vec(op(), 0..60)) {
            let mut q = TaskQueue::repeat(0.5, start as u64).unwrap();
            let mut model: VecDeque<f64> = std::iter::repeat_n(0.5, start).collect();
            let mut got = Vec::new();
            for op in ops {
                match op {
                    Op::Push(runs) => {
                        q.extend(&runs).unwrap();
                        model.extend(expand(&runs));
                    }
                    Op::Pop => prop_assert_eq!(q.pop_front(), model.pop_front()),
                    Op::Take(n) => {
                        got.clear();
                        q.take_back(n, &mut got);
                        prop_assert!(got.iter().all(|r| r.count > 0));
                        let keep = model.len() - n.min(model.len());
                        let want: Vec<f64> = model.drain(keep..).collect();
                        prop_assert_eq!(expand(&got), want);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.is_empty(), model.is_empty());
                let over = q.overflow.as_deref().map_or(0, |o| {
                    assert!(o.iter().all(|r| r.count > 0), "no empty run overflows");
                    o.iter().map(|r| u64::from(r.count)).sum()
                });
                prop_assert_eq!(over + u64::from(q.inline_tasks()), model.len() as u64);
                prop_assert!(q.counts != 0 || model.is_empty());
                let runs = q.inline_runs();
                prop_assert!((0..runs).all(|k| q.count(k) > 0), "no empty run inline");
            }
        }
    }
}
