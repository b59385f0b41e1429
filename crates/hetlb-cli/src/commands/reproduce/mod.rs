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
use hetlb_core::algorithm::Algorithm;
use hetlb_experiments::dishet::{Config, DishetError, Distribution};
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
    /// Mirtaheri & Grandinetti (2017) §5: the 6-node one-shot scenarios (Figs. 8–11) and a
    /// sweep of the transfer/execution rate ratio, with and without the compensating factor.
    Mirtaheri(mirtaheri::Args),
    /// Rim, Jang & Kim (2003) §4: dynamic hypercube balancing under Poisson arrivals with dem,
    /// oem, dem-improved and cwa; average max difference after balancing and speedup.
    RimDynamic(rim_dynamic::Args),
    /// Rim et al., §§5.2 and 6: time to transmit CWA, DEM and OEM plans, phased, overlapped, pipelined.
    RimOverhead(rim_overhead::Args),
    /// DISHET against diffusion, biasing and gdem on random graphs (Neelakantan 2012, §5).
    Dishet(dishet::Args),
    /// Aldasht, Ortega & Puntonet: EFP against the static split on real workers, Tables 2–6 beside
    /// the paper's, Fig. 3 (time against the matrix order), Figs. 9–11 (time, efficiency and
    /// speedup against the number of processors).
    Efp(efp::Args),
    /// DISHET and its baselines in time: throughput and average response time while tasks
    /// execute at node capacities and units cross links with rates and delays (Neelakantan 2012, §5).
    DishetResponse(dishet_response::Args),
}

/// Runs `hetlb reproduce`.
pub fn run(args: Args) -> Result<()> {
    match args.experiment {
        Experiment::ChauTable1(a) => chau::run(hetlb_experiments::chau::ChauTable::One, a),
        Experiment::ChauTable2(a) => chau::run(hetlb_experiments::chau::ChauTable::Two, a),
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

/// The experiment grid, shared with `reproduce dishet-response` (whose instances are these):
/// graph sizes, totals, initial distributions, trials per cell, the random graphs' degree and
/// capacities, and the seed of every random stream.
#[derive(Debug, clap::Args)]
pub struct DishetGrid {
    /// Graph sizes (nodes).
    #[arg(long, default_value = "8,16,32,64", value_name = "N,…")]
    sizes: String,
    /// Total loads (units; in `dishet-response` each unit is a task).
    #[arg(
        long,
        default_value = "1000,2000,4000,6000,8000,10000",
        value_name = "W,…"
    )]
    totals: String,
    /// Initial distributions: vary-25, vary-50, vary-75, vary-100, single, idle-25, idle-50,
    /// idle-75.
    #[arg(
        long,
        default_value = "vary-25,vary-50,vary-75,vary-100,single,idle-25,idle-50,idle-75",
        value_name = "D,…"
    )]
    distributions: String,
    /// Trials (graph, capacities, loads) per cell.
    #[arg(long = "runs", visible_alias = "seeds", value_name = "N", default_value = "5", value_parser = crate::input::whole::<u64>(1, 1_000_000))]
    runs: u64,
    /// Mean degree d of the random graphs: G(n, p) with p = min(1, d/(n-1)), made connected.
    #[arg(long, default_value = "4", value_parser = crate::input::real(0.0, 1e6, true))]
    mean_degree: f64,
    /// Capacities are integers drawn uniformly from 1..=C per node (1: homogeneous).
    #[arg(long, default_value = "4", value_name = "C", value_parser = crate::input::whole::<u32>(1, 1_000_000))]
    max_capacity: u32,
    /// Base seed of every random stream (the same seed gives the same instances in both
    /// experiments).
    #[arg(long, default_value = "2012", value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: u64,
}

impl DishetGrid {
    /// The checked configuration for `algorithms` and a round limit; totals above
    /// `max_total` are refused with `why` (say, what the limit protects).
    pub fn config(
        &self,
        algorithms: Vec<Algorithm>,
        max_rounds: u64,
        max_total: u64,
        why: &'static str,
    ) -> Result<Config> {
        let sizes: Vec<usize> = crate::input::parse_unique(&self.sizes, "--sizes", None)?;
        let totals: Vec<u64> = crate::input::parse_unique(&self.totals, "--totals", None)?;
        let distributions: Vec<Distribution> =
            crate::input::parse_unique(&self.distributions, "--distributions", None)?;
        let config = Config::new()
            .sizes(sizes)
            .totals(totals)
            .distributions(distributions)
            .algorithms(algorithms)
            .seeds(self.runs)
            .mean_degree(self.mean_degree)
            .max_capacity(self.max_capacity)
            .base_seed(self.seed)
            .max_rounds(max_rounds);
        config.check(max_total, why).map_err(dishet_error)?;
        Ok(config)
    }
}

/// A DISHET error as one line naming its option (the grid's, or `--interval` and
/// `--algorithms` of `dishet-response`).
pub fn dishet_error(e: DishetError) -> anyhow::Error {
    let field = match &e {
        DishetError::Size(_) | DishetError::Graph { .. } => "--sizes",
        DishetError::Total { .. } => "--totals",
        DishetError::Interval { .. } | DishetError::Settings(_) => "--interval",
        DishetError::NoPolicy | DishetError::NotDiffusion(_) => "--algorithms",
        _ => return e.into(),
    };
    anyhow::Error::new(e).context(field)
}
