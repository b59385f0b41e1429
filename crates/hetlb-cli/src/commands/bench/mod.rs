//! `hetlb bench`: the hot kernels timed against their floors in the same run.
//!
//! Every subcommand calls one benchmark of `hetlb-bench`, which times a kernel and the floor
//! it is measured against in interleaved repetitions, and prints both medians and their ratio
//! as a table, JSON (one `<key>_ratio` field per ratio) or CSV. Criterion benchmarks of the
//! same kernels live in `crates/*/benches/` for developers; this is what a user runs to check
//! a machine.

mod auto;
mod kernels;
mod locality;
mod simulator;

use crate::output::{self, Format};
use anyhow::{Result, anyhow};
use hetlb_bench::{BenchError, Report, tables};
use serde::Serialize;

/// Arguments of `hetlb bench`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb bench exchange --dims 24 --format json\n  hetlb bench diffusion --side 1000\n  hetlb bench dispatch --tasks 20000\n  hetlb bench transmission --dims 16\n  hetlb bench enumeration --procs 16 --values 13\n  hetlb bench simulator --dims 10,13\n  hetlb bench simulator --dims 10,12,14,16,18,20 --plot docs/img/simulator-cost.png\n  hetlb bench rebalance --items 1000000"
)]
pub struct Args {
    #[command(subcommand)]
    kernel: Kernel,
}

#[derive(Debug, clap::Subcommand)]
enum Kernel {
    /// One in-place dem and oem balance of a 2^n-node cube, against a plain pass (sum) over
    /// the same vector on the same threads.
    Exchange(kernels::Exchange),
    /// One diffusion and one DISHET round on a torus, against one sparse matrix–vector
    /// product (CSR) over the same graph on the same threads.
    Diffusion(kernels::Diffusion),
    /// Dispatching empty tasks one per request on the threads runtime, against a bare
    /// crossbeam request–reply loop between two threads.
    Dispatch(kernels::Dispatch),
    /// The pipelined schedule of a 2^n-node plan, against the overlapped schedule of the
    /// same plan.
    Transmission(kernels::Transmission),
    /// Rim's exhaustive enumeration (dem and oem), against planning every vector one by one.
    Enumeration(kernels::Enumeration),
    /// Events per second of the simulator from 10^3 to 10^6 nodes for every policy kind,
    /// against the same system without balancing.
    Simulator(simulator::Simulator),
    /// Peer rebalancing on threads: moving items against direct channel sends, a call with
    /// nothing to do against an all-reduce, and each transmission schedule beside the model.
    Rebalance(kernels::Rebalance),
    /// Rule auto with the trigger auto beside every fixed (rule, period) pair, on four
    /// sleep-based workloads (static, drifting hotspot, speed change, balanced).
    Auto(auto::Auto),
    /// Keeping subdomains compact under a drifting hotspot: hetlb with positions, without,
    /// and recursive coordinate bisection from scratch at every step, side by side.
    Locality(locality::Locality),
}

/// Runs `hetlb bench`.
pub fn run(args: Args) -> Result<()> {
    match args.kernel {
        Kernel::Exchange(a) => kernels::exchange(a),
        Kernel::Diffusion(a) => kernels::diffusion(a),
        Kernel::Dispatch(a) => kernels::dispatch(a),
        Kernel::Transmission(a) => kernels::transmission(a),
        Kernel::Enumeration(a) => kernels::enumeration(a),
        Kernel::Simulator(a) => simulator::run(a),
        Kernel::Rebalance(a) => kernels::rebalance(a),
        Kernel::Auto(a) => auto::run(a),
        Kernel::Locality(a) => locality::run(a),
    }
}

/// A benchmark's error as one line, the setting at fault named as the option that sets it
/// (`max_load` as `--max-load`).
fn flagged(e: BenchError) -> anyhow::Error {
    let flags = |setting: &str| {
        setting
            .split('/')
            .map(|s| format!("--{}", s.replace('_', "-")))
            .collect::<Vec<_>>()
            .join("/")
    };
    match &e {
        BenchError::Setting { setting, message } => anyhow!("{}: {message}", flags(setting)),
        BenchError::Refused { setting, source } => anyhow!("{}: {source}", flags(setting)),
        _ => anyhow!("{e}"),
    }
}

/// Prints `report`; `title` and `notes` go around the table in the table format.
fn print_report<P: Serialize>(
    report: &Report<P>,
    format: Format,
    title: &str,
    notes: &[String],
) -> Result<()> {
    output::print_report(
        format,
        report,
        || tables::csv(report),
        || tables::text(report, title, notes),
    )
}
