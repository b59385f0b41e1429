//! `hetlb reproduce EXPERIMENT`: the papers' tables and figures, recomputed.
//!
//! One file per experiment family; each prints our numbers beside the paper's.

mod chau;
mod chau_hetero;
mod dishet;
mod dishet_response;
mod efp;
mod mirtaheri;
mod rim;
mod rim_dynamic;
mod rim_overhead;

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Arguments of `hetlb reproduce`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    experiment: Experiment,
}

#[derive(Debug, clap::Subcommand)]
enum Experiment {
    /// Chau & Fu, Table 1: max difference after DEM, 100,000 random trials, n = 3..12.
    ChauTable1(chau::Args),
    /// Chau & Fu, Table 2: max difference after the improved DEM, n = 3..12.
    ChauTable2(chau::Args),
    /// Chau & Fu §5's claim: dem-hetero (Fig. 5) against the optimal allocation on random
    /// clusters of different sizes and speeds, n = 2..12.
    ChauHetero(chau_hetero::Args),
    /// Rim et al., Table 1: DEM and OEM over every non-decreasing load vector (8, 16, 32
    /// processors; 64 with `--procs 64`, beyond the paper).
    RimTable1(rim::Args),
    /// Mirtaheri & Grandinetti (003_…) §5: the 6-node one-shot scenarios (Figs. 8–11) and a
    /// sweep of the transfer/execution rate ratio, with and without the compensating factor.
    Mirtaheri(mirtaheri::Args),
    /// Rim et al. (004_…) §4: dynamic hypercube balancing under Poisson arrivals with dem,
    /// oem, dem-improved and cwa; average max difference after balancing and speedup.
    RimDynamic(rim_dynamic::Args),
    /// Rim et al., §§5.2 and 6: time to transmit CWA, DEM and OEM plans, phased, overlapped, pipelined.
    RimOverhead(rim_overhead::Args),
    /// DISHET against diffusion, biasing and gdem on random graphs (Neelakantan 2012, §5).
    Dishet(dishet::Args),
    /// Aldasht et al. (001_…): EFP against the static split on real workers, Tables 2–6 beside
    /// the paper's, Fig. 3 (time against the matrix order), Figs. 9–11 (time, efficiency and
    /// speedup against the number of processors).
    Efp(efp::Args),
    /// DISHET and its baselines in time: throughput and average response time while tasks
    /// execute at node capacities and units cross links with rates and delays (002_… §5).
    DishetResponse(dishet_response::Args),
}

/// Runs `hetlb reproduce`.
pub fn run(args: Args) -> Result<()> {
    match args.experiment {
        Experiment::ChauTable1(a) => chau::run(chau::Table::One, a),
        Experiment::ChauTable2(a) => chau::run(chau::Table::Two, a),
        Experiment::ChauHetero(a) => chau_hetero::run_command(a),
        Experiment::RimTable1(a) => rim::run(a),
        Experiment::Mirtaheri(a) => mirtaheri::run(a),
        Experiment::RimDynamic(a) => rim_dynamic::run(a),
        Experiment::RimOverhead(a) => rim_overhead::run(a),
        Experiment::Dishet(a) => dishet::run_command(a),
        Experiment::DishetResponse(a) => dishet_response::run_command(a),
        Experiment::Efp(a) => efp::run_command(a),
    }
}

/// Where a reproduction writes its plots: `plots/<experiment>` unless told otherwise.
#[derive(Debug, clap::Args)]
pub struct PlotOptions {
    /// Directory for the plots, created if missing [default: plots/EXPERIMENT].
    #[arg(long = "out-dir", alias = "plots", value_name = "DIR")]
    out_dir: Option<PathBuf>,
    /// Do not write plots.
    #[arg(long)]
    no_plots: bool,
}

impl PlotOptions {
    /// The directory for `experiment`'s plots, created, or `None` with `--no-plots`.
    pub fn dir(&self, experiment: &str) -> Result<Option<PathBuf>> {
        if self.no_plots {
            return Ok(None);
        }
        let dir = self
            .out_dir
            .clone()
            .unwrap_or_else(|| Path::new("plots").join(experiment));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("--out-dir: cannot create '{}'", dir.display()))?;
        Ok(Some(dir))
    }
}
