//! `hetlb run`: real work on real workers (threads, or MPI under `mpiexec`), one module per
//! way of balancing it.
//!
//! * [`master_worker`] — `matmul` and `synthetic`: a problem cut into tasks that a master hands
//!   out under EFP or a baseline (Aldasht, Ortega & Puntonet, 001_…).
//! * [`iterative`] — an iterative application whose ranks balance their own items with peer
//!   rebalancing under the decentralised rules (000_…, 002_…, 004_…).
//! * [`scenario`] — the simulator's scenario files on real workers, measured against the
//!   simulator's prediction (003_…, 004_… §4).

mod iterative;
#[cfg(feature = "mpi")]
mod iterative_mpi;
pub(crate) mod master_worker;
mod scenario;

use anyhow::Result;

/// Arguments of `hetlb run`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    workload: Workload,
}

#[derive(Debug, clap::Subcommand)]
enum Workload {
    /// C = A·B split by rows (the EFP paper's benchmark), under EFP or a baseline.
    Matmul(master_worker::Args),
    /// CPU-bound tasks of a configurable cost, under EFP or a baseline.
    Synthetic(master_worker::Args),
    /// An iterative application balanced by peer rebalancing, each rule against none and the
    /// ideal.
    Iterative(iterative::Args),
    /// A simulator scenario (TOML) on real workers, one rank per node; `--compare` prints the
    /// simulator's prediction beside the measurement.
    Scenario(scenario::Args),
}

/// Runs `hetlb run`.
pub fn run(args: Args) -> Result<()> {
    match args.workload {
        Workload::Matmul(a) => master_worker::run(master_worker::Workload::Matmul, a),
        Workload::Synthetic(a) => master_worker::run(master_worker::Workload::Synthetic, a),
        Workload::Iterative(a) => iterative::run(a),
        Workload::Scenario(a) => scenario::run(a),
    }
}
