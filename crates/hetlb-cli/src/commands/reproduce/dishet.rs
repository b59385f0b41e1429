//! `hetlb reproduce dishet`: the DISHET experiment grid (002_… §5), recomputed.

use crate::input::{real, whole};
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Series, line_chart};
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::network_algorithm::NetworkAlgorithm;
use hetlb_experiments::dishet::{Cell, Config, Distribution, PAPER_FINDINGS, aggregate, run};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Arguments of `hetlb reproduce dishet`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb reproduce dishet\n  hetlb reproduce dishet --sizes 8,16 --runs 3 --format csv > dishet.csv\n  hetlb reproduce dishet --max-capacity 1 --out-dir plots/homogeneous"
)]
pub struct Args {
    #[command(flatten)]
    grid: Grid,
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

/// The experiment grid, shared with `reproduce dishet-response` (whose instances are these):
/// graph sizes, totals, initial distributions, trials per cell, the random graphs' degree and
/// capacities, and the seed of every random stream.
#[derive(Debug, clap::Args)]
pub(super) struct Grid {
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
    #[arg(long = "runs", visible_alias = "seeds", value_name = "N", default_value_t = 5, value_parser = whole::<u64>(1, 1_000_000))]
    runs: u64,
    /// Mean degree d of the random graphs: G(n, p) with p = min(1, d/(n-1)), made connected.
    #[arg(long, default_value_t = 4.0, value_parser = real(0.0, 1e6, true))]
    mean_degree: f64,
    /// Capacities are integers drawn uniformly from 1..=C per node (1: homogeneous).
    #[arg(long, default_value_t = 4, value_name = "C", value_parser = whole::<u32>(1, 1_000_000))]
    max_capacity: u32,
    /// Base seed of every random stream (the same seed gives the same instances in both
    /// experiments).
    #[arg(long, default_value_t = 2012, value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
}

impl Grid {
    /// The checked configuration for `algorithms` and a round limit; totals above
    /// `max_total` are refused with `why` (say, what the limit protects).
    pub(super) fn config(
        &self,
        algorithms: Vec<NetworkAlgorithm>,
        max_rounds: u64,
        max_total: u64,
        why: &str,
    ) -> Result<Config> {
        let sizes: Vec<usize> = crate::input::parse_unique(&self.sizes, "--sizes", None)?;
        if let Some(&bad) = sizes.iter().find(|&&n| n == 0 || n > 4096) {
            bail!("--sizes: {bad} nodes is out of range (1 to 4096)");
        }
        let totals: Vec<u64> = crate::input::parse_unique(&self.totals, "--totals", None)?;
        if let Some(&bad) = totals.iter().find(|&&w| w > max_total) {
            bail!("--totals: {bad} is too large ({why})");
        }
        let distributions: Vec<Distribution> =
            crate::input::parse_unique(&self.distributions, "--distributions", None)?;
        Ok(Config {
            sizes,
            totals,
            distributions,
            algorithms,
            seeds: self.runs,
            mean_degree: self.mean_degree,
            max_capacity: self.max_capacity,
            base_seed: self.seed,
            max_rounds,
        })
    }
}

fn config(args: &Args) -> Result<Config> {
    let algorithms: Vec<NetworkAlgorithm> =
        crate::input::parse_unique(&args.algorithms, "--algorithms", None)?;
    if let Some(a) = algorithms.iter().find(|a| a.needs_hypercube()) {
        bail!("--algorithms: {a} runs on a hypercube only; the experiment uses random graphs");
    }
    args.grid
        .config(algorithms, args.max_rounds, 1 << 40, "at most 2^40 units")
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
    let trials = (config.sizes.len() * config.totals.len() * config.distributions.len()) as u64
        * config.seeds;
    let bar = progress::bar(trials, "dishet experiments");
    let outcomes = run(&config, &|| bar.inc(1)).map_err(|e| anyhow!("{e}"))?;
    bar.finish_and_clear();
    let cells = aggregate(&outcomes);
    let plot_dir = args.plots.dir("dishet")?;
    let plots = match &plot_dir {
        None => Vec::new(),
        Some(dir) => write_plots(dir, &config, &cells).context("--out-dir")?,
    };
    crate::plot::notice(&plots);
    let capacity_distribution = format!(
        "integers drawn uniformly from 1..={} per node",
        config.max_capacity
    );
    let graphs = format!(
        "G(n, p) with p = min(1, {}/(n-1)), repaired to be connected; a new graph, capacity \
         vector and load vector per trial, shared by all algorithms",
        config.mean_degree
    );
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

/// Mean of `f` over the cells that match.
fn mean(cells: &[Cell], keep: impl Fn(&Cell) -> bool, f: impl Fn(&Cell) -> f64) -> f64 {
    let (sum, n) = cells
        .iter()
        .filter(|c| keep(c))
        .fold((0.0, 0usize), |(s, n), c| (s + f(c), n + 1));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

fn print_tables(config: &Config, cells: &[Cell], capacities: &str, graphs: &str) {
    let sizes: Vec<String> = config.sizes.iter().map(usize::to_string).collect();
    crate::out!("DISHET experiments (Neelakantan 2012, 002_… §5), recomputed");
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
                let m = mean(
                    cells,
                    |c| c.distribution == d && c.total == w && c.algorithm == a,
                    |c| c.rounds_mean,
                );
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
            row.push(fixed(
                mean(
                    cells,
                    |c| c.nodes == n && c.algorithm == a,
                    |c| c.rounds_mean,
                ),
                1,
            ));
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
        let of = |c: &Cell| c.algorithm == a;
        let trials: u64 = cells.iter().filter(|c| of(c)).map(|c| c.trials).sum();
        let converged: u64 = cells.iter().filter(|c| of(c)).map(|c| c.converged).sum();
        t.add_row(vec![
            a.to_string(),
            format!("{converged}/{trials}"),
            fixed(mean(cells, of, |c| c.rounds_mean), 1),
            cells
                .iter()
                .filter(|c| of(c))
                .map(|c| c.rounds_max)
                .max()
                .unwrap_or(0)
                .to_string(),
            fixed(mean(cells, of, |c| c.units_moved_mean), 0),
            fixed(mean(cells, of, |c| c.task_hops_mean), 0),
            fixed(mean(cells, of, |c| c.messages_mean), 0),
            fixed(mean(cells, of, |c| c.weighted_imbalance_mean), 4),
            fixed(mean(cells, of, |c| c.distance_from_optimal_mean), 2),
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
                        let m = mean(
                            cells,
                            |c| c.distribution == d && c.total == w && c.algorithm == a,
                            |c| c.rounds_mean,
                        );
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
