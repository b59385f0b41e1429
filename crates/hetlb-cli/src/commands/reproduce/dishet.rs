//! `hetlb reproduce dishet`: the DISHET experiment grid (Neelakantan 2012, §5), recomputed
//! by [`hetlb_experiments::dishet`].

use crate::output::{Format, print_report};
use crate::plot::{Series, line_chart};
use crate::progress;
use anyhow::{Context, Result, bail};
use hetlb_core::algorithm::Algorithm;
use hetlb_experiments::dishet::{
    Cell, Config, MAX_TOTAL, PAPER_FINDINGS, aggregate, mean_rounds, run,
};
use hetlb_experiments::tables;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `hetlb reproduce dishet`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb reproduce dishet\n  hetlb reproduce dishet --sizes 8,16 --runs 3 --format csv > dishet.csv\n  hetlb reproduce dishet --max-capacity 1 --out-dir plots/homogeneous"
)]
pub struct Args {
    #[command(flatten)]
    grid: super::DishetGrid,
    /// Algorithms compared.
    #[arg(
        long,
        default_value = "dishet,dishet-tight,random-biasing,dynamic-biasing,diffusion,gdem",
        value_name = "A,…"
    )]
    algorithms: String,
    /// Round limit of every run.
    #[arg(long, default_value_t = hetlb_core::rounds::DEFAULT_MAX_ROUNDS, value_name = "R", value_parser = crate::input::whole::<u64>(1, 1_000_000_000))]
    max_rounds: u64,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Output format. JSON and CSV give every cell (size, total, distribution, algorithm).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

fn config(args: &Args) -> Result<Config> {
    let algorithms: Vec<Algorithm> =
        crate::input::parse_unique(&args.algorithms, "--algorithms", None)?;
    if let Some(a) = algorithms.iter().find(|a| a.needs_hypercube()) {
        bail!("--algorithms: {a} runs on a hypercube only; the experiment uses random graphs");
    }
    args.grid
        .config(algorithms, args.max_rounds, MAX_TOTAL, "at most 2^40 units")
}

#[derive(Serialize)]
struct Report<'a> {
    setup: &'a Config,
    capacity_distribution: String,
    graphs: String,
    paper: &'static str,
    plots: Vec<String>,
    cells: &'a [Cell],
}

/// Runs `hetlb reproduce dishet`.
pub fn run_command(args: Args) -> Result<()> {
    let config = config(&args)?;
    let bar = progress::bar(config.trial_count(), "dishet experiments");
    let outcomes = run(&config, &|| bar.inc(1))?;
    bar.finish_and_clear();
    let cells = aggregate(&outcomes);
    let plot_dir = args.plots.dir("dishet")?;
    let plots = match &plot_dir {
        None => Vec::new(),
        Some(dir) => write_plots(dir, &config, &cells).context("--out-dir")?,
    };
    crate::plot::notice(&plots);
    print_report(
        args.format,
        &Report {
            setup: &config,
            capacity_distribution: config.capacity_description(),
            graphs: config.graph_description(),
            paper: PAPER_FINDINGS,
            plots: plots.iter().map(|p| p.display().to_string()).collect(),
            cells: &cells,
        },
        || tables::dishet::csv(&cells),
        || tables::dishet::text(&config, &cells),
    )
}

fn write_plots(dir: &Path, config: &Config, cells: &[Cell]) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create directory '{}'", dir.display()))?;
    let mut written = Vec::new();
    for &d in &config.distributions {
        let series: Vec<Series> = config
            .algorithms
            .iter()
            .map(|&a| Series {
                label: a.to_string(),
                points: config
                    .totals
                    .iter()
                    .map(|&w| {
                        let m = mean_rounds(cells, a, |c| c.distribution == d && c.total == w);
                        (w as f64, m)
                    })
                    .collect(),
            })
            .collect();
        let path = dir.join(format!("rounds-{}.svg", d.name()));
        line_chart(
            &path,
            &format!(
                "{} — rounds to convergence (mean over sizes {}, {} runs, seed {})",
                d.describe(),
                config
                    .sizes
                    .iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join("/"),
                config.seeds,
                config.base_seed
            ),
            "total load (units)",
            "rounds",
            &series,
        )?;
        written.push(path);
    }
    Ok(written)
}
