//! `hetlb reproduce dishet-response`: throughput and average response time of DISHET against
//! its baselines while tasks execute (Neelakantan 2012, 002_… §5).
//!
//! The paper compares DISHET, random biasing and dynamic biasing "in terms of number of
//! iterations, throughput and average response time for the varying loads". `reproduce
//! dishet` counts the iterations; this command measures the other two. The instances are those
//! of `reproduce dishet` (the same graphs, capacities, totals, distributions and seeds); each is
//! then run in the simulator: node `i` executes its queue at `capacity_i × --rate` tasks per
//! second, every `--interval` seconds the policy runs one round of its rule (the code of
//! `hetlb balance`), and the units it moves cross the links at `--link-rate` tasks per second
//! after `--link-delay` seconds. The paper's figures did not survive, so there is nothing
//! published to print beside these numbers.

use crate::input::real;
use crate::limits;
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Series, line_chart};
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::network_algorithm::NetworkAlgorithm;
use hetlb_experiments::dishet::{Config, Distribution, Trial, trials};
use hetlb_sim::Scenario;
use hetlb_sim::engine::Setup;
use hetlb_sim::model::{Distribution as Service, LinkParams, Links, Nodes};
use hetlb_sim::policy::DiffusionSettings;
use hetlb_sim::scenario::{MAX_ROUNDS, PolicySpec};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Arguments of `hetlb reproduce dishet-response`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb reproduce dishet-response\n  \
    hetlb reproduce dishet-response --sizes 8,16 --runs 5 --interval 0.5\n  \
    hetlb reproduce dishet-response --link-rate inf --link-delay 0 --format csv > response.csv")]
pub struct Args {
    #[command(flatten)]
    grid: super::dishet::Grid,
    /// Policies compared: none and any of dishet, dishet-tight, random-biasing,
    /// dynamic-biasing, diffusion, gdem.
    #[arg(
        long,
        default_value = "none,dishet,dishet-tight,random-biasing,dynamic-biasing,diffusion,gdem",
        value_name = "P,…"
    )]
    algorithms: String,
    /// Tasks per second a node executes per unit of capacity.
    #[arg(long, default_value_t = 1.0, value_name = "TASKS/S", value_parser = real(1e-6, 1e9, false))]
    rate: f64,
    /// Seconds between balancing rounds (the first at 0).
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS", value_parser = real(1e-6, 1e9, false))]
    interval: f64,
    /// Tasks per second a link carries (`inf`: instant).
    #[arg(long, default_value_t = 50.0, value_name = "TASKS/S", value_parser = link_rate)]
    link_rate: f64,
    /// Seconds a batch spends on a link after its transfer.
    #[arg(long, default_value_t = 0.1, value_name = "SECONDS", value_parser = real(0.0, 1e9, false))]
    link_delay: f64,
    /// Task execution times: deterministic or exponential (Poisson completions).
    #[arg(long, default_value = "deterministic")]
    service: String,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Output format. JSON and CSV give every cell (size, total, distribution, policy).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

fn link_rate(s: &str) -> Result<f64, String> {
    if s.trim() == "inf" {
        return Ok(f64::INFINITY);
    }
    real(1e-6, 1e15, false)(s)
}

/// A policy of the comparison: none, or a diffusion rule in rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Policy {
    None,
    Rule(NetworkAlgorithm),
}

impl Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Rule(a) => a.name(),
        }
    }
}

fn parse_policy(s: &str) -> Result<Policy> {
    if s == "none" {
        return Ok(Policy::None);
    }
    let a: NetworkAlgorithm = s.parse().map_err(|e| anyhow!("--algorithms: {e}"))?;
    if !NetworkAlgorithm::DIFFUSION.contains(&a) {
        bail!(
            "--algorithms: {a} is not a diffusion rule (expected none, dishet, dishet-tight, \
             random-biasing, dynamic-biasing, diffusion or gdem)"
        );
    }
    Ok(Policy::Rule(a))
}

/// Everything checked before anything runs.
struct Experiment {
    config: Config,
    policies: Vec<Policy>,
    service: Service,
}

fn setup(args: &Args) -> Result<Experiment> {
    let config = args.grid.config(
        NetworkAlgorithm::DIFFUSION.to_vec(),
        hetlb_core::rounds::DEFAULT_MAX_ROUNDS,
        100_000_000,
        "at most 10^8 tasks: every task is simulated",
    )?;
    let policies = args
        .algorithms
        .split([',', ' '])
        .filter(|s| !s.trim().is_empty())
        .map(|s| parse_policy(s.trim()))
        .collect::<Result<Vec<_>>>()?;
    if policies.is_empty() {
        bail!("--algorithms: give at least one policy");
    }
    let service = match args.service.as_str() {
        "deterministic" => Service::Deterministic,
        "exponential" => Service::Exponential,
        other => bail!("--service: '{other}' is not deterministic or exponential"),
    };
    let max_total = config.totals.iter().copied().max().unwrap_or(0);
    // Every task is a queue entry (with its entry time) in every run of every thread.
    limits::check(
        "--totals",
        &format!(
            "simulating {max_total} tasks on each of {} threads",
            rayon::current_num_threads()
        ),
        u128::from(max_total) * 64 * rayon::current_num_threads() as u128,
    )?;
    // The slowest node runs at one unit of capacity: a bound on how long the rounds go on.
    let horizon = max_total as f64 / args.rate
        + if args.link_rate.is_finite() {
            max_total as f64 / args.link_rate
        } else {
            0.0
        }
        + args.link_delay;
    let rounds = horizon / args.interval;
    if rounds > MAX_ROUNDS {
        bail!(
            "--interval: {} s between rounds could need about {rounds:.1e} rounds per run (at most \
             {MAX_ROUNDS:e}); choose a longer interval",
            args.interval
        );
    }
    Ok(Experiment {
        config,
        policies,
        service,
    })
}

/// One policy on one trial.
struct Outcome {
    trial: Trial,
    policy: Policy,
    makespan: f64,
    ideal: f64,
    throughput: f64,
    response: f64,
    moved: u64,
    rounds: u64,
}

fn run_trial(args: &Args, s: &Experiment, trial: Trial) -> Result<Vec<Outcome>> {
    let instance = trial
        .instance(&s.config)
        .map_err(|e| anyhow!("--sizes: {e}"))?;
    let rates: Vec<f64> = instance
        .capacities
        .as_slice()
        .iter()
        .map(|c| c * args.rate)
        .collect();
    let total: u64 = instance.loads.iter().sum();
    let ideal = total as f64 / rates.iter().sum::<f64>();
    let links = Links::uniform(
        instance.network.clone(),
        LinkParams {
            rate: args.link_rate,
            delay: args.link_delay,
            distribution: Service::Deterministic,
        },
    );
    let mut setup = Setup::new(instance.loads.clone());
    setup.seed = instance.seed;
    let mut out = Vec::new();
    for &policy in &s.policies {
        let spec = match policy {
            Policy::None => PolicySpec::None,
            Policy::Rule(a) => PolicySpec::Diffusion(
                DiffusionSettings::new(a, args.interval, None)
                    .map_err(|e| anyhow!("--interval: {e}"))?,
            ),
        };
        let scenario = Scenario {
            name: None,
            description: None,
            nodes: Nodes::new(rates.clone(), s.service),
            links: links.clone(),
            setup: setup.clone(),
            policy: spec,
        };
        let r = scenario.run().map_err(|e| anyhow!("{e}"))?;
        out.push(Outcome {
            trial,
            policy,
            makespan: r.makespan,
            ideal,
            throughput: if r.makespan > 0.0 {
                r.executed as f64 / r.makespan
            } else {
                0.0
            },
            response: r.mean_response_time.unwrap_or(0.0),
            moved: r.tasks_moved,
            rounds: r.policy_stats.balancings,
        });
    }
    Ok(out)
}

/// Means over the trials of one cell.
#[derive(Debug, Clone, Serialize)]
struct Cell {
    nodes: usize,
    total: u64,
    distribution: Distribution,
    policy: &'static str,
    trials: u64,
    /// Tasks completed per second (all tasks ÷ makespan).
    throughput: f64,
    /// Mean time from time 0 to a task's completion, seconds.
    response_time: f64,
    /// Time of the last completion, seconds.
    makespan: f64,
    /// Total ÷ Σ rates: the makespan of a perfect fluid balance without transfers.
    ideal_makespan: f64,
    /// Tasks moved over links (a task moved twice counts twice).
    tasks_moved: f64,
    /// Balancing rounds run.
    rounds: f64,
}

fn aggregate(outcomes: &[Outcome]) -> Vec<Cell> {
    let mut groups: BTreeMap<(usize, u64, Distribution, Policy), Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        groups
            .entry((o.trial.nodes, o.trial.total, o.trial.distribution, o.policy))
            .or_default()
            .push(o);
    }
    groups
        .into_iter()
        .map(|((nodes, total, distribution, policy), os)| {
            let n = os.len() as f64;
            let mean = |f: fn(&Outcome) -> f64| os.iter().map(|o| f(o)).sum::<f64>() / n;
            Cell {
                nodes,
                total,
                distribution,
                policy: policy.name(),
                trials: os.len() as u64,
                throughput: mean(|o| o.throughput),
                response_time: mean(|o| o.response),
                makespan: mean(|o| o.makespan),
                ideal_makespan: mean(|o| o.ideal),
                tasks_moved: mean(|o| o.moved as f64),
                rounds: mean(|o| o.rounds as f64),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct Report<'a> {
    setup: &'a Config,
    rate_per_capacity: f64,
    interval: f64,
    link_rate: f64,
    link_delay: f64,
    service: &'a str,
    paper: &'static str,
    cells: &'a [Cell],
}

const PAPER: &str = "002_… §5 compares DISHET, random biasing and dynamic biasing by number of \
    iterations, throughput and average response time against the total load; those figures did \
    not survive in the text available, which gives no numbers: nothing published to compare with.";

/// Runs `hetlb reproduce dishet-response`.
pub fn run_command(args: Args) -> Result<()> {
    let s = setup(&args)?;
    let all = trials(&s.config);
    let bar = progress::bar(all.len() as u64, "dishet-response runs");
    let outcomes: Vec<Outcome> = all
        .par_iter()
        .map(|&t| {
            let r = run_trial(&args, &s, t);
            bar.inc(1);
            r
        })
        .collect::<Result<Vec<Vec<Outcome>>>>()?
        .into_iter()
        .flatten()
        .collect();
    bar.finish_and_clear();
    let cells = aggregate(&outcomes);
    if let Some(dir) = args.plots.dir("dishet-response")? {
        let written = write_plots(&dir, &args, &s, &cells).context("--out-dir")?;
        crate::plot::notice(&written);
    }
    match args.format {
        Format::Json => print_json(&Report {
            setup: &s.config,
            rate_per_capacity: args.rate,
            interval: args.interval,
            link_rate: args.link_rate,
            link_delay: args.link_delay,
            service: &args.service,
            paper: PAPER,
            cells: &cells,
        }),
        Format::Csv => print_csv(
            &[
                "nodes",
                "total",
                "distribution",
                "policy",
                "trials",
                "throughput",
                "response_time",
                "makespan",
                "ideal_makespan",
                "tasks_moved",
                "rounds",
            ],
            cells.iter().map(|c| {
                vec![
                    c.nodes.to_string(),
                    c.total.to_string(),
                    c.distribution.name(),
                    c.policy.to_string(),
                    c.trials.to_string(),
                    format!("{:.6}", c.throughput),
                    format!("{:.6}", c.response_time),
                    format!("{:.6}", c.makespan),
                    format!("{:.6}", c.ideal_makespan),
                    format!("{:.3}", c.tasks_moved),
                    format!("{:.3}", c.rounds),
                ]
            }),
        ),
        Format::Table => {
            print_tables(&args, &s, &cells);
            Ok(())
        }
    }
}

fn mean(cells: &[Cell], keep: impl Fn(&Cell) -> bool, f: impl Fn(&Cell) -> f64) -> f64 {
    let (sum, n) = cells
        .iter()
        .filter(|c| keep(c))
        .fold((0.0, 0usize), |(s, n), c| (s + f(c), n + 1));
    if n == 0 { f64::NAN } else { sum / n as f64 }
}

fn print_tables(args: &Args, s: &Experiment, cells: &[Cell]) {
    let c = &s.config;
    let list = |v: Vec<String>| v.join(", ");
    crate::out!(
        "DISHET in time (Neelakantan 2012, 002_… §5): throughput and average response time"
    );
    crate::out!(
        "  instances of `reproduce dishet` (seed {}): sizes {}; totals {}; {} trials per cell; G(n, p) with mean\n  \
         degree {}, capacities uniform on 1..={}",
        c.base_seed,
        list(c.sizes.iter().map(usize::to_string).collect()),
        list(c.totals.iter().map(u64::to_string).collect()),
        c.seeds,
        c.mean_degree,
        c.max_capacity
    );
    crate::out!(
        "  node i executes {} x capacity_i tasks/s ({} service); a round every {} s; links {} tasks/s, {} s delay",
        args.rate,
        args.service,
        args.interval,
        if args.link_rate.is_infinite() {
            "inf".to_string()
        } else {
            args.link_rate.to_string()
        },
        args.link_delay
    );
    crate::out!(
        "  response time: from time 0 (every task is there at the start) to its completion"
    );
    crate::out!("  paper: {PAPER}\n");
    let policies: Vec<&str> = s.policies.iter().map(|p| p.name()).collect();
    crate::out!("Summary over the whole grid (means over cells)");
    let mut t = table([
        "policy",
        "throughput (tasks/s)",
        "response time (s)",
        "response ÷ none",
        "makespan ÷ ideal",
        "tasks moved",
        "rounds run",
    ]);
    let none_response = mean(cells, |x| x.policy == "none", |x| x.response_time);
    for &p in &policies {
        let of = |x: &Cell| x.policy == p;
        let response = mean(cells, of, |x| x.response_time);
        t.add_row(vec![
            p.to_string(),
            fixed(mean(cells, of, |x| x.throughput), 2),
            fixed(response, 2),
            if none_response.is_nan() {
                "–".into()
            } else {
                fixed(response / none_response, 3)
            },
            fixed(mean(cells, of, |x| x.makespan / x.ideal_makespan), 3),
            fixed(mean(cells, of, |x| x.tasks_moved), 0),
            fixed(mean(cells, of, |x| x.rounds), 1),
        ]);
    }
    crate::out!("{t}\n");
    for (title, f) in [
        (
            "Average response time (s) by distribution (means over sizes, totals and trials)",
            (|x: &Cell| x.response_time) as fn(&Cell) -> f64,
        ),
        (
            "Throughput (tasks/s) by distribution (means over sizes, totals and trials)",
            |x: &Cell| x.throughput,
        ),
    ] {
        crate::out!("{title}");
        let mut t = table(
            std::iter::once("distribution".to_string())
                .chain(policies.iter().map(|p| p.to_string())),
        );
        for &d in &c.distributions {
            let mut row = vec![d.name()];
            for &p in &policies {
                row.push(fixed(
                    mean(cells, |x| x.distribution == d && x.policy == p, f),
                    2,
                ));
            }
            t.add_row(row);
        }
        crate::out!("{t}\n");
    }
    crate::out!(
        "Average response time (s) by graph size (means over totals, distributions and trials)"
    );
    let mut t =
        table(std::iter::once("nodes".to_string()).chain(policies.iter().map(|p| p.to_string())));
    for &n in &c.sizes {
        let mut row = vec![n.to_string()];
        for &p in &policies {
            row.push(fixed(
                mean(
                    cells,
                    |x| x.nodes == n && x.policy == p,
                    |x| x.response_time,
                ),
                2,
            ));
        }
        t.add_row(row);
    }
    crate::out!("{t}");
    let best = c
        .sizes
        .iter()
        .flat_map(|&n| c.totals.iter().map(move |&w| (n, w)))
        .flat_map(|(n, w)| c.distributions.iter().map(move |&d| (n, w, d)))
        .filter(|&(n, w, d)| {
            let at = |p: &str| {
                cells
                    .iter()
                    .find(|x| x.nodes == n && x.total == w && x.distribution == d && x.policy == p)
                    .map(|x| x.response_time)
            };
            let Some(dishet) = at("dishet") else {
                return false;
            };
            policies
                .iter()
                .filter(|&&p| p != "dishet" && p != "none")
                .all(|&p| at(p).is_none_or(|r| dishet <= r))
        })
        .count();
    if policies.contains(&"dishet") && policies.len() > 2 {
        let cells_count = c.sizes.len() * c.totals.len() * c.distributions.len();
        crate::out!(
            "\nDISHET has the lowest average response time of the balancing rules in {best} of {cells_count} cells."
        );
    }
}

fn write_plots(dir: &Path, args: &Args, s: &Experiment, cells: &[Cell]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for &d in &s.config.distributions {
        for (what, label, f) in [
            (
                "response",
                "average response time (s)",
                (|x: &Cell| x.response_time) as fn(&Cell) -> f64,
            ),
            ("throughput", "throughput (tasks/s)", |x: &Cell| {
                x.throughput
            }),
        ] {
            let series: Vec<Series> = s
                .policies
                .iter()
                .map(|&p| Series {
                    label: p.name().to_string(),
                    points: s
                        .config
                        .totals
                        .iter()
                        .map(|&w| {
                            let m = mean(
                                cells,
                                |x| x.distribution == d && x.total == w && x.policy == p.name(),
                                f,
                            );
                            (w as f64, m)
                        })
                        .collect(),
                })
                .collect();
            // The balancing rules often lie within a fraction of a percent of each other:
            // beside the absolute chart, one of each rule against dishet shows them apart.
            if s.policies.contains(&Policy::Rule(NetworkAlgorithm::Dishet)) {
                let base = series
                    .iter()
                    .find(|x| x.label == "dishet")
                    .map(|x| x.points.clone())
                    .unwrap_or_default();
                let relative: Vec<Series> = series
                    .iter()
                    .filter(|x| x.label != "dishet" && x.label != "none")
                    .map(|x| Series {
                        label: x.label.clone(),
                        points: x
                            .points
                            .iter()
                            .zip(&base)
                            .filter(|(_, b)| b.1 != 0.0)
                            .map(|(p, b)| (p.0, 100.0 * (p.1 - b.1) / b.1))
                            .collect(),
                    })
                    .collect();
                if !relative.is_empty() {
                    let path = dir.join(format!("{what}-{}-vs-dishet.svg", d.name()));
                    line_chart(
                        &path,
                        &format!(
                            "{} — {label} against dishet's: a round every {} s, seed {}",
                            d.describe(),
                            args.interval,
                            s.config.base_seed
                        ),
                        "total load (tasks)",
                        "difference from dishet (%)",
                        &relative,
                    )?;
                    written.push(path);
                }
            }
            let path = dir.join(format!("{what}-{}.svg", d.name()));
            line_chart(
                &path,
                &format!(
                    "{} — {label}: a round every {} s, links {} tasks/s, {} s; seed {}",
                    d.describe(),
                    args.interval,
                    args.link_rate,
                    args.link_delay,
                    s.config.base_seed
                ),
                "total load (tasks)",
                label,
                &series,
            )?;
            written.push(path);
        }
    }
    Ok(written)
}
