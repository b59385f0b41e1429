//! `hetlb reproduce dishet`: the DISHET experiment grid (Neelakantan 2012, §5), recomputed
//! by [`hetlb_experiments::dishet`].

use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Series, line_chart};
use crate::progress;
use anyhow::{Context, Result, bail};
use hetlb_core::algorithm::Algorithm;
use hetlb_experiments::dishet::{
    Cell, Config, MAX_TOTAL, PAPER_FINDINGS, aggregate, mean_rounds, run, summarise,
};
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
    let capacity_distribution = config.capacity_description();
    let graphs = config.graph_description();
    match args.format {
        Format::Json => print_json(&Report {
            setup: &config,
            capacity_distribution,
            graphs,
            paper: PAPER_FINDINGS,
            plots: plots.iter().map(|p| p.display().to_string()).collect(),
            cells: &cells,
        }),
        Format::Csv => print_csv(
            &[
                "nodes",
                "total",
                "distribution",
                "algorithm",
                "trials",
                "converged",
                "rounds_mean",
                "rounds_min",
                "rounds_max",
                "units_moved_mean",
                "task_hops_mean",
                "messages_mean",
                "max_difference_mean",
                "weighted_imbalance_mean",
                "distance_from_optimal_mean",
            ],
            cells.iter().map(|c| {
                [
                    c.nodes.to_string(),
                    c.total.to_string(),
                    c.distribution.name(),
                    c.algorithm.name().to_string(),
                    c.trials.to_string(),
                    c.converged.to_string(),
                    fixed(c.rounds_mean, 2),
                    c.rounds_min.to_string(),
                    c.rounds_max.to_string(),
                    fixed(c.units_moved_mean, 2),
                    fixed(c.task_hops_mean, 2),
                    fixed(c.messages_mean, 2),
                    fixed(c.max_difference_mean, 3),
                    fixed(c.weighted_imbalance_mean, 4),
                    fixed(c.distance_from_optimal_mean, 3),
                ]
            }),
        ),
        Format::Table => {
            print_tables(&config, &cells, &capacity_distribution, &graphs);
            Ok(())
        }
    }
}

fn print_tables(config: &Config, cells: &[Cell], capacities: &str, graphs: &str) {
    let sizes: Vec<String> = config.sizes.iter().map(usize::to_string).collect();
    crate::out!("DISHET experiments (Neelakantan 2012, §5), recomputed");
    crate::out!("  graphs: {graphs}");
    crate::out!("  capacities: {capacities}");
    crate::out!(
        "  sizes {}; totals {}; {} trials per cell; round limit {}",
        sizes.join(", "),
        config
            .totals
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        config.seeds,
        config.max_rounds
    );
    crate::out!("  paper: {PAPER_FINDINGS}");
    crate::out!();
    let algs = &config.algorithms;
    for &d in &config.distributions {
        crate::out!(
            "Rounds to convergence — {} (mean over {} sizes × {} trials)",
            d.describe(),
            config.sizes.len(),
            config.seeds
        );
        let mut t = table(
            std::iter::once("total load".to_string()).chain(algs.iter().map(|a| a.to_string())),
        );
        for &w in &config.totals {
            let mut row = vec![w.to_string()];
            for &a in algs {
                let m = mean_rounds(cells, a, |c| c.distribution == d && c.total == w);
                row.push(fixed(m, 1));
            }
            t.add_row(row);
        }
        crate::out!("{t}\n");
    }
    crate::out!("Rounds to convergence by graph size (mean over totals, distributions and trials)");
    let mut t =
        table(std::iter::once("nodes".to_string()).chain(algs.iter().map(|a| a.to_string())));
    for &n in &config.sizes {
        let mut row = vec![n.to_string()];
        for &a in algs {
            row.push(fixed(mean_rounds(cells, a, |c| c.nodes == n), 1));
        }
        t.add_row(row);
    }
    crate::out!("{t}\n");
    crate::out!("Summary over the whole grid (means over cells; imbalance weighted by capacity)");
    let mut t = table([
        "algorithm",
        "converged",
        "rounds",
        "max rounds",
        "units moved",
        "task-hops",
        "messages",
        "weighted imbalance",
        "distance from optimal",
    ]);
    for &a in algs {
        let s = summarise(cells, a);
        t.add_row(vec![
            a.to_string(),
            format!("{}/{}", s.converged, s.trials),
            fixed(s.rounds, 1),
            s.max_rounds.to_string(),
            fixed(s.units_moved, 0),
            fixed(s.task_hops, 0),
            fixed(s.messages, 0),
            fixed(s.weighted_imbalance, 4),
            fixed(s.distance_from_optimal, 2),
        ]);
    }
    crate::out!("{t}\n");
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
