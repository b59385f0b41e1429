//! An MPI job of a program that leaves MPI to hetlb, such as the `hetlb` binary under
//! `mpiexec`: hetlb starts MPI, every rank checks the same settings, the ranks run, rank 0
//! reports, and a failure that would leave ranks waiting ends the whole job instead of
//! keeping the launcher waiting for ever.
//!
//! An application that owns MPI does not need this: it adopts its communicator with
//! [`Mpi::adopt`] and calls the runtimes directly.
//!
//! The drivers that run a workload on a job: [`super::master_worker::on_mpi_job`],
//! [`super::iterative::on_mpi_job`] and [`super::scenario::run_mpi_job`].

use hetlb_transport::TransportError;
use hetlb_transport::mpi::Mpi;
use std::io::Write;
use std::time::Duration;

/// How long the other ranks wait for rank 0 to say a refusal that every rank found.
const AGREED_GRACE: Duration = Duration::from_millis(500);

/// This process's part of an MPI job that hetlb started (see the module's description).
#[derive(Debug)]
pub struct MpiJob {
    mpi: Mpi<'static>,
}

impl MpiJob {
    /// Starts MPI for this process ([`Mpi::init`]); MPI is finalised when the job is dropped.
    ///
    /// # Errors
    /// As [`Mpi::init`].
    pub fn init() -> Result<Self, TransportError> {
        Ok(Self { mpi: Mpi::init()? })
    }

    /// The transport, to open endpoints or run a workload on.
    pub fn mpi(&self) -> &Mpi<'static> {
        &self.mpi
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.mpi.rank()
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.mpi.size()
    }

    /// Processes of the job on this node per core they may use there (above 1 when they
    /// share cores; a launcher's binding of each process to its own core is not sharing).
    pub fn oversubscription(&self) -> f64 {
        self.mpi.ranks_on_this_node() as f64 / self.mpi.cores_on_this_node().max(1) as f64
    }

    /// Settings that every rank checked alike, so that every rank finds the same error: the
    /// value, or an end of this process with status 1, rank 0 printing `error: …` at once
    /// (one line; the error's causes too, as `{:#}` shows them) and the others, without a
    /// word, a moment later (the launcher ends the job when the first rank leaves, and rank 0
    /// must have spoken by then). MPI is not finalised: a rank waiting in `MPI_Finalize` for
    /// ranks that left would be killed by the launcher before it said why.
    pub fn agreed<T, E: std::fmt::Display>(&self, checked: Result<T, E>) -> T {
        match checked {
            Ok(t) => t,
            Err(e) => {
                if self.rank() == 0 {
                    let line = format!("error: {}\n", format!("{e:#}").replace('\n', " "));
                    let _ = std::io::stderr().write_all(line.as_bytes());
                } else {
                    std::thread::sleep(AGREED_GRACE);
                }
                std::process::exit(1)
            }
        }
    }

    /// Ends the job after a failure on this rank that the others learn of within moments:
    /// prints `error: rank R: message` in one write (so that the ranks' lines do not
    /// interleave on the launcher's stderr), waits `grace` so that the other ranks report it
    /// too, then ends every rank of the job (`MPI_Abort`): a stopped process would otherwise
    /// keep the launcher waiting for ever.
    pub fn report_and_end(&self, message: &str, grace: Duration) -> ! {
        let line = format!(
            "error: rank {}: {}\n",
            self.rank(),
            message.replace('\n', " ")
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
        std::thread::sleep(grace);
        self.mpi.abort(1)
    }

    /// Ends the job at once after a failure that may leave other ranks waiting for messages
    /// that will never come: prints `error: message` and ends every rank (`MPI_Abort`).
    pub fn end(&self, message: &str) -> ! {
        let line = format!("error: {}\n", message.replace('\n', " "));
        let _ = std::io::stderr().write_all(line.as_bytes());
        self.mpi.abort(1)
    }

    /// After the results are out: when `silent` names ranks given up as silent, which may
    /// still be stopped (`SIGSTOP`) or hung, and which the launcher would wait for for ever,
    /// flushes stdout, gives the launcher a moment to forward it, says so on stderr and ends
    /// every rank. Returns when `silent` is empty.
    pub fn end_if_silent(&self, silent: &[usize]) {
        let mut silent = silent.to_vec();
        silent.sort_unstable();
        silent.dedup();
        if silent.is_empty() {
            return;
        }
        let _ = std::io::stdout().flush();
        // The launcher forwards this rank's output through a pipe: give it a moment before
        // MPI_Abort tears the job down, or the results could be lost on the way.
        std::thread::sleep(Duration::from_millis(500));
        eprintln!(
            "error: rank(s) {silent:?} fell silent and were given up (the results above are \
             complete); MPI cannot end a silent rank, so every rank is now ended"
        );
        self.mpi.abort(1)
    }
}
