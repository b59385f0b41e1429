//! `hetlb bench`: the hot kernels timed against their floors in the same run.
//!
//! Every subcommand times a kernel and the floor it is measured against in interleaved
//! repetitions ([`timing`]), and prints both medians and their ratio as a table, JSON (one
//! `<key>_ratio` field per ratio) or CSV. Criterion benchmarks of the same kernels live in
//! `crates/*/benches/` for developers; this is what a user runs to check a machine.

mod diffusion;
mod dispatch;
mod enumeration;
mod exchange;
mod rebalance;
mod simulator;
mod timing;
mod transmission;

use anyhow::Result;

/// Arguments of `hetlb bench`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb bench exchange --dims 24 --format json\n  hetlb bench diffusion --side 1000\n  hetlb bench dispatch --tasks 20000\n  hetlb bench transmission --dims 16\n  hetlb bench enumeration --procs 16 --values 13\n  hetlb bench simulator --dims 10,13\n  hetlb bench rebalance --items 1000000"
)]
pub struct Args {
    #[command(subcommand)]
    kernel: Kernel,
}

#[derive(Debug, clap::Subcommand)]
enum Kernel {
    /// One in-place dem and oem balance of a 2^n-node cube, against a plain pass (sum) over
    /// the same vector on the same threads.
    Exchange(exchange::Args),
    /// One diffusion and one DISHET round on a torus, against one sparse matrix–vector
    /// product (CSR) over the same graph on the same threads.
    Diffusion(diffusion::Args),
    /// Dispatching empty tasks one per request on the threads runtime, against a bare
    /// crossbeam request–reply loop between two threads.
    Dispatch(dispatch::Args),
    /// The pipelined schedule of a 2^n-node plan, against the overlapped schedule of the
    /// same plan.
    Transmission(transmission::Args),
    /// Rim's exhaustive enumeration (dem and oem), against planning every vector one by one.
    Enumeration(enumeration::Args),
    /// Events per second of the simulator from 10^3 to 10^6 nodes for every policy kind,
    /// against the same system without balancing.
    Simulator(simulator::Args),
    /// Peer rebalancing on threads: moving items against direct channel sends, a call with
    /// nothing to do against an all-reduce, and each transmission schedule beside the model.
    Rebalance(rebalance::Args),
}

/// Runs `hetlb bench`.
pub fn run(args: Args) -> Result<()> {
    match args.kernel {
        Kernel::Exchange(a) => exchange::run(a),
        Kernel::Diffusion(a) => diffusion::run(a),
        Kernel::Dispatch(a) => dispatch::run(a),
        Kernel::Transmission(a) => transmission::run(a),
        Kernel::Enumeration(a) => enumeration::run(a),
        Kernel::Simulator(a) => simulator::run(a),
        Kernel::Rebalance(a) => rebalance::run(a),
    }
}
