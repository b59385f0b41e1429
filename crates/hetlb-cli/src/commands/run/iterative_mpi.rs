//! `hetlb run iterative --backend mpi`: one rank per MPI process.

use super::iterative::{Args, Setup, present};
use anyhow::{Result, anyhow};
use hetlb_runtime::transport::mpi::Mpi;
use hetlb_runtime::workload::iterative::run_group;

/// Runs every balancer in turn on the MPI job's ranks; rank 0 prints. A rank that fails or
/// stops is reported by every other rank (each prints the error naming it), then the job is
/// ended, since a stopped process would otherwise keep the launcher waiting.
pub(super) fn run(args: &Args) -> Result<()> {
    let mpi = Mpi::init().map_err(|e| anyhow!("--backend: {e}"))?;
    let (rank, ranks) = (mpi.rank(), mpi.size());
    let setup = (|| {
        if let Some(w) = args.procs {
            if w != ranks {
                return Err(anyhow!(
                    "--procs: {w} given but mpiexec started {ranks} ranks"
                ));
            }
        }
        Setup::parse(args, ranks)
    })();
    let setup = match setup {
        Ok(s) => s,
        // Every rank finds the same error; rank 0 says it.
        Err(e) if rank == 0 => return Err(e),
        Err(_) => std::process::exit(1),
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let oversubscription = mpi.ranks_on_this_node() as f64 / cores;
    match run_group(
        &setup.config,
        &mpi,
        &setup.balancers,
        setup.timeout,
        oversubscription,
    ) {
        Ok(runs) => {
            if rank == 0 {
                present(args, &setup, ranks, "mpi", &runs)?;
            }
            Ok(())
        }
        Err(e) => crate::mpi_end::report_and_end(
            &mpi,
            &e.to_string(),
            setup.timeout.min(std::time::Duration::from_secs(2)),
        ),
    }
}
