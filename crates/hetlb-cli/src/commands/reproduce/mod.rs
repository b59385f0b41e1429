//! `hetlb reproduce EXPERIMENT`: the papers' tables and figures, recomputed.
//!
//! One file per experiment family; each prints our numbers beside the paper's.

use anyhow::Result;

/// Arguments of `hetlb reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    experiment: Experiment,
}

#[derive(Debug, clap::Subcommand)]
enum Experiment {}

/// Runs `hetlb reproduce`.
pub fn run(args: Args) -> Result<()> {
    match args.experiment {}
}
