//! What the processors compute: a [`Job`] is a list of independent tasks.
//!
//! The master turns a task number into the [`Job::Task`] it sends; a processor turns that into
//! an [`Job::Output`] with [`Job::run`]. Two ready-made jobs carry user code:
//!
//! * [`ClosureJob`] — any closure over a list of inputs, for the threads backend. Tasks travel
//!   as indices; the inputs are shared, never copied.
//! * [`FnJob`] — a serialisable input type and a registered function (a plain `fn`, the same
//!   in every process of an SPMD program), for MPI: the input itself travels to the worker.
//!
//! Every rank of an MPI run builds the same job, as in any SPMD program: the master may be
//! any rank (the fastest one).

use crate::error::TaskError;
use std::fmt;

/// A list of independent tasks that processors can run in any order.
///
/// # Example
/// ```
/// use hetlb_runtime::{Job, TaskError};
/// struct Squares(u64);
/// impl Job for Squares {
///     type Task = u64;
///     type Output = u64;
///     fn tasks(&self) -> u64 { self.0 }
///     fn task(&self, id: u64) -> u64 { id }
///     fn run(&self, x: &u64) -> Result<u64, TaskError> { Ok(x * x) }
/// }
/// assert_eq!(Squares(4).run(&3), Ok(9));
/// ```
pub trait Job: Send + Sync {
    /// What the master sends for one task.
    type Task: Send;
    /// What a processor sends back.
    type Output: Send;

    /// The number of tasks, numbered `0..tasks()`.
    fn tasks(&self) -> u64;

    /// The message for task `id < tasks()` (the master calls this once per dispatch).
    fn task(&self, id: u64) -> Self::Task;

    /// Runs one task. Must be deterministic for slowdown repetitions to be harmless.
    ///
    /// # Errors
    /// A [`TaskError`] makes the master put the task back and run it elsewhere.
    fn run(&self, task: &Self::Task) -> Result<Self::Output, TaskError>;

    /// The size of task `id` in work units (rows, for matrix multiplication); 1 by default.
    fn units(&self, id: u64) -> u64 {
        let _ = id;
        1
    }

    /// The name of a work unit in reports (`rows`, `tasks`).
    fn unit_name(&self) -> &'static str {
        "tasks"
    }
}

/// A job from a list of inputs and a closure, for the threads backend.
///
/// Tasks travel as indices into the shared inputs, so nothing is copied or serialised.
///
/// # Example
/// ```
/// use hetlb_runtime::{ClosureJob, Job};
/// let job = ClosureJob::new(vec![1u64, 2, 3], |x: &u64| Ok::<_, String>(x * 10));
/// assert_eq!(job.tasks(), 3);
/// assert_eq!(job.run(&job.task(2)), Ok(30));
/// ```
pub struct ClosureJob<I, F> {
    inputs: Vec<I>,
    f: F,
}

impl<I, F> ClosureJob<I, F> {
    /// A job with one task per input; task `i` runs `f(&inputs[i])`.
    pub fn new(inputs: Vec<I>, f: F) -> Self {
        Self { inputs, f }
    }
}

impl<I, F> fmt::Debug for ClosureJob<I, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClosureJob")
            .field("tasks", &self.inputs.len())
            .finish()
    }
}

impl<I, O, E, F> Job for ClosureJob<I, F>
where
    I: Send + Sync,
    O: Send,
    E: fmt::Display,
    F: Fn(&I) -> Result<O, E> + Send + Sync,
{
    type Task = u64;
    type Output = O;

    fn tasks(&self) -> u64 {
        self.inputs.len() as u64
    }

    fn task(&self, id: u64) -> u64 {
        id
    }

    fn run(&self, task: &u64) -> Result<O, TaskError> {
        let input = usize::try_from(*task)
            .ok()
            .and_then(|i| self.inputs.get(i))
            .ok_or_else(|| TaskError::new(format!("no task {task}")))?;
        (self.f)(input).map_err(TaskError::new)
    }
}

/// A job from serialisable inputs and a registered function, for MPI (it works on threads too).
///
/// The function is a plain `fn`, so it is the same code in every process; the input is
/// serialised with postcard and sent to the worker that runs it.
///
/// # Example
/// ```
/// use hetlb_runtime::{FnJob, Job, TaskError};
/// fn count_primes(range: &(u64, u64)) -> Result<u64, TaskError> {
///     Ok((range.0..range.1).filter(|&n| n > 1 && (2..n).take_while(|d| d * d <= n).all(|d| n % d != 0)).count() as u64)
/// }
/// let job = FnJob::new(vec![(0, 10), (10, 20)], count_primes);
/// assert_eq!(job.run(&job.task(1)), Ok(4));
/// ```
pub struct FnJob<I, O> {
    inputs: Vec<I>,
    f: fn(&I) -> Result<O, TaskError>,
}

impl<I, O> FnJob<I, O> {
    /// A job with one task per input; task `i` sends `inputs[i]` and runs `f` on it.
    pub fn new(inputs: Vec<I>, f: fn(&I) -> Result<O, TaskError>) -> Self {
        Self { inputs, f }
    }
}

impl<I, O> fmt::Debug for FnJob<I, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnJob")
            .field("tasks", &self.inputs.len())
            .finish()
    }
}

impl<I, O> Job for FnJob<I, O>
where
    I: Clone + Send + Sync,
    O: Send,
{
    type Task = I;
    type Output = O;

    fn tasks(&self) -> u64 {
        self.inputs.len() as u64
    }

    /// # Panics
    /// If `id >= tasks()`; the runtime only asks for existing tasks.
    fn task(&self, id: u64) -> I {
        self.inputs[id as usize].clone()
    }

    fn run(&self, task: &I) -> Result<O, TaskError> {
        (self.f)(task)
    }
}
