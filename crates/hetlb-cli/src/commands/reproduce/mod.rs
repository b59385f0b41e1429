//! `hetlb reproduce EXPERIMENT`: the papers' tables and figures, recomputed.
//!
//! One file per experiment family; each prints our numbers beside the paper's.

mod dishet;

use anyhow::Result;

/// Arguments of `hetlb reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    experiment: Experiment,
}

#[derive(Debug, clap::Subcommand)]
enum Experiment {
    /// DISHET against diffusion, biasing and gdem on random graphs (Neelakantan 2012, §5).
    Dishet(dishet::Args),
}

/// Runs `hetlb reproduce`.
pub fn run(args: Args) -> Result<()> {
    match args.experiment {
        Experiment::Dishet(a) => dishet::run_command(a),
    }
}
