//! `hetlb run`: real work on real workers (threads, or MPI under `mpiexec`), one module per
//! way of balancing it.
//!
//! * [`master_worker`] — `matmul` and `synthetic`: a problem cut into tasks that a master hands
//!   out under EFP or a baseline (Aldasht, Ortega & Puntonet).
//! * [`iterative`] — an iterative application whose ranks balance their own items with peer
//!   rebalancing under the decentralised rules (Chau & Fu; Neelakantan 2012; Rim, Jang & Kim
//!   2003).
//! * [`scenario`] — the simulator's scenario files on real workers, measured against the
//!   simulator's prediction (Mirtaheri & Grandinetti 2017; Rim, Jang & Kim 2003, §4).
//!
//! Each parses its arguments, calls the drivers of `hetlb-runtime` and renders.

mod iterative;
mod master_worker;
mod scenario;

use anyhow::Result;
use hetlb_runtime::master_worker::Workload as Kind;

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
    Iterative(Box<iterative::Args>),
    /// A simulator scenario (TOML) on real workers, one rank per node; `--compare` prints the
    /// simulator's prediction beside the measurement.
    Scenario(scenario::Args),
}

/// Runs `hetlb run`.
pub fn run(args: Args) -> Result<()> {
    match args.workload {
        Workload::Matmul(a) => master_worker::run(Kind::Matmul, a),
        Workload::Synthetic(a) => master_worker::run(Kind::Synthetic, a),
        Workload::Iterative(a) => iterative::run(*a),
        Workload::Scenario(a) => scenario::run(a),
    }
}
