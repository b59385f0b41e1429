//! `hetlb reproduce EXPERIMENT`: the papers' tables and figures, recomputed.
//!
//! One file per experiment family; each prints our numbers beside the paper's.

use anyhow::Result;

mod mirtaheri;
mod rim_dynamic;

/// Arguments of `hetlb reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    experiment: Experiment,
}

#[derive(Debug, clap::Subcommand)]
enum Experiment {
    /// Mirtaheri & Grandinetti (003_…) §5: the 6-node one-shot scenarios (Figs. 8–11) and a
    /// sweep of the transfer/execution rate ratio, with and without the compensating factor.
    Mirtaheri(mirtaheri::Args),
    /// Rim et al. (004_…) §4: dynamic hypercube balancing under Poisson arrivals with dem,
    /// oem, dem-improved and cwa; average max difference after balancing and speedup.
    RimDynamic(rim_dynamic::Args),
}

/// Runs `hetlb reproduce`.
pub fn run(args: Args) -> Result<()> {
    match args.experiment {
        Experiment::Mirtaheri(a) => mirtaheri::run(a),
        Experiment::RimDynamic(a) => rim_dynamic::run(a),
    }
}
