//! Ending an MPI job after a failure: every rank reports, then the job ends.

use hetlb_runtime::transport::mpi::Mpi;
use std::io::Write;
use std::time::Duration;

/// Prints `error: rank R: message` in one write (so that the ranks' lines do not interleave on
/// the launcher's stderr), waits `grace` so that the other ranks, which learn of the failure
/// within moments, report it too, then ends every rank of the job (`MPI_Abort`): a stopped
/// process would otherwise keep the launcher waiting for ever.
pub fn report_and_end(mpi: &Mpi<'_>, message: &str, grace: Duration) -> ! {
    let line = format!(
        "error: rank {}: {}\n",
        mpi.rank(),
        message.replace('\n', " ")
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    std::thread::sleep(grace);
    mpi.abort(1)
}
