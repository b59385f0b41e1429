//! The master-worker comparison of `hetlb run matmul|synthetic` on an MPI job: the runtime's
//! [`on_mpi`], with a failure on any rank ending the whole job. On threads the command calls
//! [`on_threads`](hetlb_runtime::master_worker::on_threads) directly; its report is drawn by
//! [`crate::tables::master_worker`].

use super::mpi_job::MpiJob;
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::master_worker::{Settings, on_mpi};
use hetlb_runtime::{Job, Progress, RunOutcome};

/// Runs `job` under every policy of `settings` in turn on the ranks of `mpi` — every rank
/// calls it — and returns the outcomes on rank 0, `None` on the others. A failure on any rank
/// ends the job (`error: …` on stderr, then `MPI_Abort`), since other ranks may be waiting for
/// messages that will never come. Once rank 0 has reported, call
/// [`MpiJob::end_if_silent`] with [`silent`](hetlb_runtime::master_worker::silent).
pub fn on_mpi_job<J>(
    mpi: &MpiJob,
    job: &J,
    settings: &Settings,
    progress: &mut dyn FnMut(Policy) -> Option<Progress>,
) -> Option<Vec<RunOutcome<J::Output>>>
where
    J: Job,
    J::Task: hetlb_transport::Message,
    J::Output: hetlb_transport::Message,
{
    match on_mpi(mpi.mpi(), job, settings, progress) {
        Ok(outcomes) => outcomes,
        Err(e) => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                message += &format!(": {s}");
                source = s.source();
            }
            mpi.end(&message)
        }
    }
}
