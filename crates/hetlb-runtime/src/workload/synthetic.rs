//! A synthetic CPU-bound task of configurable cost, with a checkable result.

use crate::error::TaskError;
use crate::job::Job;

/// `tasks` tasks, each `cost` rounds of a 64-bit xorshift mixing of its number; the output is
/// the final state, so every result can be checked with [`Synthetic::expected`]. A cost of 0
/// makes empty tasks, for measuring dispatch overhead.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::synthetic::Synthetic;
/// use hetlb_runtime::Job;
/// let job = Synthetic::new(10, 1000);
/// assert_eq!(job.run(&3), Ok(Synthetic::expected(3, 1000)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Synthetic {
    tasks: u64,
    cost: u64,
}

impl Synthetic {
    /// `tasks` tasks of `cost` rounds each.
    pub fn new(tasks: u64, cost: u64) -> Self {
        Self { tasks, cost }
    }

    /// The output of task `id` at cost `cost`.
    ///
    /// # Complexity
    /// `O(cost)`.
    pub fn expected(id: u64, cost: u64) -> u64 {
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for _ in 0..cost {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        x
    }
}

impl Job for Synthetic {
    type Task = u64;
    type Output = u64;

    fn tasks(&self) -> u64 {
        self.tasks
    }

    fn task(&self, id: u64) -> u64 {
        id
    }

    fn run(&self, id: &u64) -> Result<u64, TaskError> {
        Ok(Self::expected(*id, std::hint::black_box(self.cost)))
    }
}
