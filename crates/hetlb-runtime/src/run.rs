//! Entry points: run a job on threads, on MPI, or on one processor for reference.

use crate::config::RunConfig;
use crate::error::RuntimeError;
use crate::job::Job;
use crate::message::Msg;
use crate::processor::{self, Ending};
use crate::report::RunOutcome;
use hetlb_transport::Transport;
use hetlb_transport::threads::network;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long [`run_threads`] waits for worker threads to end after the run before leaving them
/// behind (a worker can only still be running if its task never returns).
const JOIN_GRACE: Duration = Duration::from_secs(2);

/// Runs `job` on `processors` threads of this process, processor `i` with
/// `cfg.slowdowns[i]`, and returns the outputs (each task's exactly once, in task order) and
/// the report.
///
/// The calling thread is processor 0, which calibrates the others and hands the master role to the
/// fastest (Aldasht, Ortega & Puntonet, §3). Tasks travel over crossbeam channels without copies.
///
/// # Errors
/// [`RuntimeError::Config`] for inconsistent settings; otherwise the failure that stopped the
/// run (a task failing `max_attempts` times on different processors, the master silent
/// beyond the timeout, no processor left). A panicking, failing or silent worker does *not*
/// stop the run: its tasks go to the others and the report names it.
///
/// # Complexity
/// `O(G)` master work for `G` tasks (plus `O(P)` per decision), as the paper states.
///
/// # Example
/// ```
/// use hetlb_runtime::{run_threads, ClosureJob, RunConfig};
/// use hetlb_core::rules::self_scheduling::Policy;
/// use std::sync::Arc;
/// let job = Arc::new(ClosureJob::new((0..100u64).collect(), |x: &u64| Ok::<_, String>(x * x)));
/// let out = run_threads(job, 3, &RunConfig::new(Policy::Efp)).unwrap();
/// assert_eq!(out.outputs[7], 49);
/// assert_eq!(out.report.processors.iter().map(|p| p.tasks).sum::<u64>(), 100);
/// ```
pub fn run_threads<J>(
    job: Arc<J>,
    processors: usize,
    cfg: &RunConfig,
) -> Result<RunOutcome<J::Output>, RuntimeError>
where
    J: Job + 'static,
    J::Task: 'static,
    J::Output: 'static,
{
    cfg.validate(processors)?;
    let mut ranks = network::<Msg<J::Task, J::Output>>(processors).into_iter();
    let Some(first) = ranks.next() else {
        return Err(crate::error::RunConfigError::NoWorkers.into());
    };
    let mut handles = Vec::with_capacity(processors.saturating_sub(1));
    for tr in ranks {
        let job = Arc::clone(&job);
        let cfg = cfg.clone();
        let name = format!("hetlb-p{}", tr.rank());
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                let _ = processor::run(&tr, &*job, &cfg);
            })
            .map_err(|e| RuntimeError::Protocol(format!("cannot start a thread: {e}")))?;
        handles.push(handle);
    }
    let result = processor::run(&first, &*job, cfg);
    // Anyone still waiting after the run (after a failure, say) is told it is over.
    for r in 1..processors {
        let _ = first.send(r, Msg::End);
    }
    let until = Instant::now() + JOIN_GRACE;
    for h in handles {
        while !h.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(1));
        }
        if h.is_finished() {
            let _ = h.join();
        }
    }
    match result? {
        Ending::Finished(outcome) => Ok(*outcome),
        Ending::Stopped => Err(RuntimeError::Protocol(
            "processor 0 ended without the outcome".into(),
        )),
    }
}

/// Runs every task of `job` in order on the calling thread, with no slowdown: the one-worker
/// reference the speedup is measured against. Returns the outputs and the seconds taken.
///
/// # Errors
/// The first task error, as [`RuntimeError::TaskFailed`].
///
/// # Example
/// ```
/// use hetlb_runtime::{run_sequential, ClosureJob};
/// let job = ClosureJob::new(vec![1u64, 2], |x: &u64| Ok::<_, String>(x + 1));
/// assert_eq!(run_sequential(&job).unwrap().0, vec![2, 3]);
/// ```
pub fn run_sequential<J: Job>(job: &J) -> Result<(Vec<J::Output>, f64), RuntimeError> {
    let start = Instant::now();
    let outputs = (0..job.tasks())
        .map(|id| {
            job.run(&job.task(id))
                .map_err(|e| RuntimeError::TaskFailed {
                    task: id,
                    attempts: 1,
                    error: e.to_string(),
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((outputs, start.elapsed().as_secs_f64()))
}

/// Runs `job` on the MPI processes of this job (launched with `mpiexec -n N`); every rank
/// calls this with the same job and settings. Rank 0 gets `Some(outcome)`, the others `None`.
///
/// On an error, ranks may still be waiting for messages that will never come: call
/// [`hetlb_transport::mpi::Mpi::abort`] to end them all rather than hang.
///
/// # Errors
/// As [`run_threads`]; a rank that stops answering is reported as
/// [`RuntimeError::Unresponsive`] once the timeout passes.
#[cfg(feature = "mpi")]
pub fn run_mpi<J>(
    mpi: &hetlb_transport::mpi::Mpi<'_>,
    job: &J,
    cfg: &RunConfig,
) -> Result<Option<RunOutcome<J::Output>>, RuntimeError>
where
    J: Job,
    J::Task: hetlb_transport::Message,
    J::Output: hetlb_transport::Message,
{
    use hetlb_transport::Group;
    cfg.validate(mpi.size())?;
    let tr = mpi.open::<Msg<J::Task, J::Output>>()?;
    match processor::run(&tr, job, cfg)? {
        Ending::Finished(outcome) => Ok(Some(*outcome)),
        Ending::Stopped => Ok(None),
    }
}
