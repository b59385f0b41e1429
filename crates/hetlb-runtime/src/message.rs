//! The messages of the master-worker protocol.
//!
//! ```text
//! rank 0            every rank              master                 worker
//!   Calibrate  ──────►  Calibrated ──► rank 0
//!   Lead (to the fastest) ──────────► master
//!                                          Tasks ───────────────►
//!                                                ◄─────────────── Results (speed data)
//!                                          Tasks / Stop ────────►
//!                                                ◄─────────────── Bye (totals)
//!                                          Tasks (a stopped worker woken) / End ──►
//!   ◄── Finished / Failed (when the master is not rank 0)
//!
//! every rank, all the time:  Alive ──► its coordinator (the leader: ──► everyone)
//! ```

use crate::report::Outcome;
use hetlb_core::rules::self_scheduling::Observation;
use serde::{Deserialize, Serialize};

/// What one processor measured over the whole run, sent when it is stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Seconds from the start of the run until the processor was stopped.
    pub t_exec: f64,
    /// Seconds computing.
    pub t_comp: f64,
    /// Seconds in communication.
    pub t_comm: f64,
    /// Seconds waiting for the master.
    pub t_wait: f64,
    /// Tasks the processor ran (successful or not).
    pub tasks_run: u64,
}

/// One message between ranks. `T` is a job's task, `O` its output.
#[derive(Debug, Serialize, Deserialize)]
pub enum Msg<T, O> {
    /// Run `task` repeatedly for `seconds` and report the rate.
    Calibrate {
        /// The sample task.
        task: T,
        /// How long to keep running it.
        seconds: f64,
    },
    /// Tasks per second of the calibration task.
    Calibrated {
        /// The rate.
        rate: f64,
    },
    /// The calibration task failed.
    CalibrationFailed {
        /// Why.
        message: String,
    },
    /// You are the master; here are the capacities.
    Lead {
        /// One per processor.
        capacities: Vec<f64>,
        /// True when they were measured.
        calibrated: bool,
    },
    /// A batch of tasks.
    Tasks {
        /// `(task number, task)` pairs.
        tasks: Batch<T>,
        /// Seconds the request this answers waited before the master attended to it.
        queued_for: f64,
        /// Seconds since the master started the run, when it sent this.
        since_start: f64,
    },
    /// The results of a batch, with the time split the speed factor is computed from.
    Results {
        /// `(task number, output or error)` pairs.
        results: Batch<Result<O, String>>,
        /// The batch's computation, communication and wait.
        obs: Observation,
        /// Set when the processor panicked and will take no more tasks.
        panic: Option<String>,
    },
    /// No more tasks: report your totals.
    Stop {
        /// As in `Tasks`.
        queued_for: f64,
        /// As in `Tasks`.
        since_start: f64,
    },
    /// The run is over: a stopped worker ends.
    End,
    /// A heartbeat: the sender is alive (it may be computing a long task).
    Alive {
        /// True when the sender leads the run (rank 0 while it launches, then the master).
        leading: bool,
    },
    /// A stopped processor's totals (cumulative over the run).
    Bye {
        /// The totals.
        totals: Totals,
    },
    /// A processor's thread ended unexpectedly.
    Gone {
        /// Why, as far as known.
        reason: String,
    },
    /// The finished run, from the master to rank 0.
    Finished(Box<Outcome<O>>),
    /// The run failed on the master.
    Failed {
        /// The error.
        message: String,
    },
}

/// `(task number, item)` pairs sent in one message: the tasks of a batch, or their results.
///
/// A single pair is held inline, so the one-task-per-request dispatch of self-scheduling
/// moves its task and its result without a heap allocation.
///
/// # Example
/// ```
/// use hetlb_runtime::message::Batch;
/// let mut b = Batch::with_capacity(1);
/// b.push(7, "seven");
/// assert!(matches!(b, Batch::One(_)));
/// b.push(8, "eight");
/// assert_eq!(b.as_slice(), &[(7, "seven"), (8, "eight")]);
/// assert_eq!(b.into_iter().map(|(id, _)| id).sum::<u64>(), 15);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Batch<X> {
    /// Exactly one pair, held inline.
    One((u64, X)),
    /// Any number of pairs.
    Many(Vec<(u64, X)>),
}

impl<X> Default for Batch<X> {
    fn default() -> Self {
        Self::Many(Vec::new())
    }
}

impl<X> Batch<X> {
    /// An empty batch with room for `n` pairs: no allocation for `n ≤ 1`.
    pub fn with_capacity(n: usize) -> Self {
        if n <= 1 {
            Self::default()
        } else {
            Self::Many(Vec::with_capacity(n))
        }
    }

    /// Appends a pair. The first pair of a batch made without room for more is held inline.
    pub fn push(&mut self, id: u64, item: X) {
        match self {
            Self::Many(v) if v.capacity() == 0 => *self = Self::One((id, item)),
            Self::Many(v) => v.push((id, item)),
            Self::One(_) => {
                if let Self::One(first) = std::mem::take(self) {
                    *self = Self::Many(vec![first, (id, item)]);
                }
            }
        }
    }

    /// The pairs, in the order they were pushed.
    pub fn as_slice(&self) -> &[(u64, X)] {
        match self {
            Self::One(pair) => std::slice::from_ref(pair),
            Self::Many(v) => v,
        }
    }

    /// The number of pairs.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// True when there is no pair.
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }
}

impl<X> FromIterator<(u64, X)> for Batch<X> {
    fn from_iter<I: IntoIterator<Item = (u64, X)>>(iter: I) -> Self {
        let iter = iter.into_iter();
        let mut b = Self::with_capacity(iter.size_hint().0);
        for (id, x) in iter {
            b.push(id, x);
        }
        b
    }
}

/// The pairs of a [`Batch`], by value, in order.
#[derive(Debug)]
pub struct BatchIter<X>(BatchIterInner<X>);

#[derive(Debug)]
enum BatchIterInner<X> {
    One(Option<(u64, X)>),
    Many(std::vec::IntoIter<(u64, X)>),
}

impl<X> Iterator for BatchIter<X> {
    type Item = (u64, X);

    fn next(&mut self) -> Option<(u64, X)> {
        match &mut self.0 {
            BatchIterInner::One(pair) => pair.take(),
            BatchIterInner::Many(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            BatchIterInner::One(pair) => {
                let n = usize::from(pair.is_some());
                (n, Some(n))
            }
            BatchIterInner::Many(it) => it.size_hint(),
        }
    }
}

impl<X> IntoIterator for Batch<X> {
    type Item = (u64, X);
    type IntoIter = BatchIter<X>;

    fn into_iter(self) -> BatchIter<X> {
        BatchIter(match self {
            Self::One(pair) => BatchIterInner::One(Some(pair)),
            Self::Many(v) => BatchIterInner::Many(v.into_iter()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_keeps_its_pairs_in_order_whatever_its_form() {
        for n in 0..5u64 {
            for room in [0, 1, 3] {
                let mut b = Batch::with_capacity(room);
                for id in 0..n {
                    b.push(id, id * 10);
                }
                assert_eq!(b.len() as u64, n);
                assert_eq!(b.is_empty(), n == 0);
                assert_eq!(matches!(b, Batch::One(_)), n == 1 && room <= 1);
                let want: Vec<(u64, u64)> = (0..n).map(|id| (id, id * 10)).collect();
                assert_eq!(b.as_slice(), want.as_slice());
                assert_eq!(b.clone().into_iter().collect::<Vec<_>>(), want);
                let collected: Batch<u64> = want.iter().copied().collect();
                assert_eq!(collected.as_slice(), want.as_slice());
            }
        }
    }
}
