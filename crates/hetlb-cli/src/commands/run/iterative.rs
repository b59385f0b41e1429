//! `hetlb run iterative`: an iterative application on real workers, balanced by peer
//! rebalancing under each decentralised rule in turn, against no balancing and the ideal.

use crate::input::{parse_list, whole};
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Axes, Series, line_chart_with};
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::network_algorithm::NetworkAlgorithm;
use hetlb_core::transmission::Schedule;
use hetlb_runtime::Slowdown;
use hetlb_runtime::peer::{BalancerConfig, Speeds};
use hetlb_runtime::workload::iterative::{Drift, IterativeConfig, IterativeRun, Step};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The most ranks a threads run starts (each rank is a thread).
const MAX_THREAD_RANKS: usize = 1024;
/// The most cells (items) a run holds in memory.
const MAX_CELLS: u64 = 100_000_000;

/// Arguments of `hetlb run iterative`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run iterative --balancer all --procs 4 --slowdown 1,3,3,3\n  \
    hetlb run iterative --balancer cwa,dishet,none --procs 8 --drift hotspot:6 --plot iterations.svg\n  \
    hetlb run iterative --balancer oem --procs 4 --schedule pipeline --dump steps.jsonl --format json\n  \
    mpiexec -n 8 hetlb run iterative --backend mpi --balancer all --slowdown 1,1,3,3,3,3,3,3")]
pub struct Args {
    /// Items (cells of work) in all, spread over the ranks in equal blocks at the start.
    #[arg(long, default_value_t = 4096, visible_alias = "cells", value_parser = whole::<u64>(1, MAX_CELLS))]
    items: u64,
    /// Iterations of the application's loop.
    #[arg(long, default_value_t = 40, value_parser = whole::<u64>(1, 10_000_000))]
    iterations: u64,
    /// Rebalance every R iterations.
    #[arg(long, default_value_t = 5, value_name = "R", value_parser = whole::<u64>(1, 100_000_000))]
    every: u64,
    /// Rules to compare, comma-separated (any name `hetlb balance` accepts), `none` for the
    /// run without balancing, or `all`: every rule that fits the rank count, and none.
    #[arg(long, default_value = "all", value_name = "ALG[,ALG…]|all|none")]
    balancer: String,
    /// Ranks (threads; on MPI the number of processes, the default there).
    #[arg(long, visible_alias = "workers", value_name = "P", value_parser = whole::<usize>(1, MAX_THREAD_RANKS))]
    pub(super) procs: Option<usize>,
    /// Slowdown factor per rank, whole numbers ≥ 1 (`1,3,3,3`); the rank repeats its kernel
    /// that many times. The balancer never sees them: it measures speeds.
    #[arg(long, allow_hyphen_values = true)]
    slowdown: Option<String>,
    /// Costs that move over the iterations: `hotspot[:FACTOR[:WIDTH[:SWEEPS]]]`, a window of
    /// WIDTH (fraction of the items, default 0.125) costing FACTOR units per item (default 4)
    /// that sweeps SWEEPS times over the items during the run (default 1). Without it every
    /// item costs one unit.
    #[arg(long)]
    drift: Option<String>,
    /// Kernel rounds per unit of work.
    #[arg(long, default_value_t = 2000, value_parser = whole::<u64>(0, 1_000_000_000))]
    cost: u64,
    /// Bytes of application data carried by each item.
    #[arg(long, default_value_t = 64, value_parser = whole::<usize>(0, 1 << 30))]
    item_bytes: usize,
    /// How items are put on the links: phased, overlap or pipeline (Rim et al. §6).
    #[arg(long, default_value = "phased")]
    schedule: String,
    /// Capacities the rules weigh: `measured` (units per busy second, median of the last 3
    /// reports) or `equal`.
    #[arg(long, default_value = "measured")]
    speeds: String,
    /// Topology of the ranks for the diffusion rules (`ring:6`, `torus:2x4`, …); default a
    /// hypercube when the rank count is a power of two, a ring otherwise.
    #[arg(long)]
    topology: Option<String>,
    /// Seed of random-biasing's draws.
    #[arg(long, default_value_t = 0, value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Seconds a rank taking part in a rebalance may stay silent before it is declared failed.
    #[arg(long, default_value_t = 10.0, value_parser = crate::input::real(0.0, 86_400.0, true))]
    timeout: f64,
    /// threads (default) or mpi (under mpiexec; needs a build with `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Record every rebalance, one JSON object a line (for `hetlb replay`). With several
    /// balancers, one file each (`NAME-cwa.jsonl`, …).
    #[arg(long, value_name = "FILE.jsonl")]
    dump: Option<PathBuf>,
    /// Time per iteration for each balancer: `.svg` or `.png`.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Runs of every balancer: times are noisy, so the run of median total time is reported
    /// with the smallest and largest total of the runs (threads backend).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = whole::<u64>(1, 1000))]
    runs: u64,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Everything checked before anything runs.
pub(super) struct Setup {
    pub(super) config: IterativeConfig,
    pub(super) balancers: Vec<Option<BalancerConfig>>,
    /// Silence after which a rank is reported as stopped.
    pub(super) timeout: Duration,
    /// Per balancer, the totals of its runs (empty: one run each).
    pub(super) spreads: Vec<Spread>,
}

impl Setup {
    pub(super) fn parse(args: &Args, ranks: usize) -> Result<Self> {
        if ranks == 0 {
            bail!("--procs: at least one rank is needed");
        }
        if args.items == 0 {
            bail!("--items: at least one item is needed");
        }
        if args.items > MAX_CELLS {
            bail!(
                "--items: {} is more than the {MAX_CELLS} this machine's memory allows",
                args.items
            );
        }
        // Every item is held once, and at most twice more while it moves (its clone in a
        // message and its copy at the receiver).
        let bytes = (args.items as u128) * (args.item_bytes as u128 + 48) * 3;
        crate::limits::check(
            "--item-bytes",
            &format!("{} items of {} bytes", args.items, args.item_bytes),
            bytes,
        )?;
        if args.iterations == 0 {
            bail!("--iterations: at least one iteration is needed");
        }
        if args.every == 0 {
            bail!("--every: must be at least 1");
        }
        if !(args.timeout.is_finite() && args.timeout > 0.0 && args.timeout <= 86_400.0) {
            bail!("--timeout: must be a positive number of seconds, at most 86400");
        }
        let slowdowns: Vec<Slowdown> = match &args.slowdown {
            Some(s) => {
                let v = parse_list::<u32>(s, "--slowdown", Some("a whole number ≥ 1"))?;
                if v.len() != ranks {
                    bail!("--slowdown: {} values given for {ranks} ranks", v.len());
                }
                if let Some(i) = v.iter().position(|&f| f == 0) {
                    bail!(
                        "--slowdown: value {} is 0; factors are whole numbers from 1",
                        i + 1
                    );
                }
                v.into_iter().map(Slowdown::constant).collect()
            }
            None => vec![Slowdown::constant(1); ranks],
        };
        let drift = args
            .drift
            .as_deref()
            .map(|d| Drift::parse(d).map_err(|e| anyhow!("--drift: {e}")))
            .transpose()?;
        let schedule = Schedule::ALL
            .into_iter()
            .find(|s| s.name() == args.schedule)
            .ok_or_else(|| {
                anyhow!(
                    "--schedule: unknown schedule '{}' (expected phased, overlap or pipeline)",
                    args.schedule
                )
            })?;
        let speeds = match args.speeds.as_str() {
            "measured" => Speeds::Measured { window: 3 },
            "equal" => Speeds::Equal,
            other => bail!("--speeds: unknown '{other}' (expected measured or equal)"),
        };
        let names: Vec<String> = match args.balancer.as_str() {
            "all" => NetworkAlgorithm::all()
                .filter(|a| ranks.is_power_of_two() || !a.needs_hypercube())
                .map(|a| a.name().to_string())
                .chain(std::iter::once("none".to_string()))
                .collect(),
            list => crate::input::unique(
                list.split(',').map(|s| s.trim().to_string()).collect(),
                "--balancer",
            ),
        };
        if names.is_empty() || names.iter().any(String::is_empty) {
            bail!("--balancer: an empty name in '{}'", args.balancer);
        }
        let mut balancers = Vec::new();
        for name in &names {
            if name == "none" {
                balancers.push(None);
                continue;
            }
            // The core's message names every rule once.
            name.parse::<NetworkAlgorithm>()
                .map_err(|e| anyhow!("--balancer: {e}, or none"))?;
            let mut cfg = BalancerConfig::new(name)
                .map_err(|e| anyhow!("--balancer: {e}"))?
                .speeds(speeds.clone())
                .schedule(schedule)
                .timeout(Duration::from_secs_f64(args.timeout));
            if cfg.algorithm() == NetworkAlgorithm::RandomBiasing {
                cfg = cfg.seed(args.seed);
            }
            if let Some(t) = &args.topology {
                if !cfg.algorithm().needs_hypercube() {
                    cfg = with_topology(cfg, t)?;
                }
            }
            // Refuse a rule that does not fit the ranks before anything runs.
            cfg.check(ranks).map_err(|e| {
                let m = e.to_string();
                match m.strip_prefix("topology: ") {
                    Some(rest) => anyhow!("--topology: {rest}"),
                    None => anyhow!("--balancer: {m}"),
                }
            })?;
            balancers.push(Some(cfg));
        }
        Ok(Self {
            config: IterativeConfig {
                cells: args.items,
                iterations: args.iterations,
                every: args.every,
                cost: args.cost,
                payload: args.item_bytes,
                slowdowns,
                drift,
            },
            balancers,
            timeout: Duration::from_secs_f64(args.timeout),
            spreads: Vec::new(),
        })
    }
}

/// `cfg` on the ranks' topology of `--topology`: a `file:` graph is read as `hetlb balance`
/// reads it (a regular file, bounded by --max-memory), the other specs built by the config.
fn with_topology(cfg: BalancerConfig, spec: &str) -> Result<BalancerConfig> {
    use hetlb_core::topology::{Graph, Network, TopologySpec};
    let parsed: TopologySpec = spec.parse().map_err(|e| anyhow!("--topology: {e}"))?;
    if let TopologySpec::File(path) = &parsed {
        let text = crate::input::read_text(std::path::Path::new(path), "--topology", 8)
            .map_err(|e| anyhow!("--topology: cannot read '{path}': {e:#}"))?;
        let graph = Graph::parse(&text, None).map_err(|e| anyhow!("--topology: {path}: {e}"))?;
        return Ok(cfg.network(parsed.to_string(), Network::from_graph(graph)));
    }
    cfg.topology(spec).map_err(|e| {
        let m = e.to_string();
        anyhow!("--topology: {}", m.strip_prefix("topology: ").unwrap_or(&m))
    })
}

/// Runs `hetlb run iterative`./// Runs `hetlb run iterative`.
pub fn run(args: Args) -> Result<()> {
    match args.backend.as_str() {
        "threads" => {}
        "mpi" => return run_mpi(&args),
        other => bail!("--backend: unknown backend '{other}' (expected threads or mpi)"),
    }
    let ranks = args.procs.unwrap_or(4);
    if ranks > MAX_THREAD_RANKS {
        bail!(
            "--workers: {ranks} threads is more than the {MAX_THREAD_RANKS} a threads run starts"
        );
    }
    let mut setup = Setup::parse(&args, ranks)?;
    let mut runs = Vec::new();
    for b in &setup.balancers {
        let name = b
            .as_ref()
            .map_or("none", |c| c.algorithm().name())
            .to_string();
        let mut repeats = Vec::new();
        for k in 0..args.runs {
            let label = if args.runs > 1 {
                format!("{name} on {ranks} ranks, run {}", k + 1)
            } else {
                format!("{name} on {ranks} ranks")
            };
            let bar = progress::bar(setup.config.iterations, label);
            let bb = bar.clone();
            let p: hetlb_runtime::workload::iterative::IterationProgress =
                Arc::new(move |done| bb.set_position(done));
            let run = hetlb_runtime::workload::iterative::run_threads(
                &setup.config,
                ranks,
                b.clone(),
                Some(setup.timeout),
                Some(p),
            )
            .with_context(|| name.clone())?;
            bar.finish_and_clear();
            repeats.push(run);
        }
        check_exactly_once(&setup, &repeats)?;
        repeats.sort_by(|a, b| a.total_seconds.total_cmp(&b.total_seconds));
        let (low, high) = (
            repeats[0].total_seconds,
            repeats[repeats.len() - 1].total_seconds,
        );
        setup.spreads.push(Spread {
            runs: repeats.len() as u64,
            min: low,
            max: high,
        });
        runs.push(repeats.swap_remove(repeats.len() / 2));
    }
    present(&args, &setup, ranks, "threads", &runs)
}

/// The totals of a balancer's runs.
#[derive(Debug, Clone, Copy, Serialize)]
pub(super) struct Spread {
    /// Runs made.
    pub(super) runs: u64,
    /// The smallest total, seconds.
    pub(super) min: f64,
    /// The largest total, seconds.
    pub(super) max: f64,
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args) -> Result<()> {
    bail!(
        "--backend: this hetlb was built without MPI support; rebuild with \
         `cargo build --release -p hetlb-cli --features mpi` and launch it with mpiexec"
    )
}

#[cfg(feature = "mpi")]
fn run_mpi(args: &Args) -> Result<()> {
    super::iterative_mpi::run(args)
}

/// One balancer's row, as JSON.
#[derive(Serialize)]
struct BalancerJson<'a> {
    balancer: &'a str,
    /// The run reported: the one of median total time when there were several.
    total_seconds: f64,
    /// The balancer's runs, and the smallest and largest total among them.
    runs: u64,
    total_seconds_min: f64,
    total_seconds_max: f64,
    mean_iteration_seconds: f64,
    ideal_seconds: f64,
    vs_none: Option<f64>,
    vs_ideal: f64,
    oversubscription: f64,
    iteration_seconds: &'a [f64],
    steps: &'a [Step],
    ranks: &'a [hetlb_runtime::workload::iterative::RankLog],
    items_moved: u64,
    bytes: u64,
}

#[derive(Serialize)]
struct RunJson<'a> {
    backend: &'a str,
    workers: usize,
    items: u64,
    iterations: u64,
    every: u64,
    slowdown: Vec<u32>,
    drift: Option<&'a str>,
    schedule: &'a str,
    speeds: &'a str,
    balancers: Vec<BalancerJson<'a>>,
    best: Option<&'a str>,
    /// Rules that ignore the ranks' speeds and moved nothing.
    unmoved: Vec<&'a str>,
    /// Measured speeds that cannot be right.
    implausible_speeds: Vec<SpeedWarning>,
}

/// A measured speed that cannot be right, in a balancer's run.
#[derive(Debug, Serialize)]
struct SpeedWarning {
    balancer: String,
    #[serde(flatten)]
    speed: hetlb_runtime::speed_check::Implausible,
}

pub(super) fn present(
    args: &Args,
    setup: &Setup,
    ranks: usize,
    backend: &str,
    runs: &[IterativeRun],
) -> Result<()> {
    check_exactly_once(setup, runs)?;
    let none_total = runs
        .iter()
        .find(|r| r.balancer == "none")
        .map(|r| r.total_seconds);
    let balancers: Vec<BalancerJson> = runs
        .iter()
        .enumerate()
        .map(|(i, r)| BalancerJson {
            balancer: &r.balancer,
            total_seconds: r.total_seconds,
            runs: setup.spreads.get(i).map_or(1, |s| s.runs),
            total_seconds_min: setup.spreads.get(i).map_or(r.total_seconds, |s| s.min),
            total_seconds_max: setup.spreads.get(i).map_or(r.total_seconds, |s| s.max),
            mean_iteration_seconds: r.total_seconds / r.iteration_seconds.len().max(1) as f64,
            ideal_seconds: r.ideal_seconds,
            vs_none: none_total.map(|n| r.total_seconds / n),
            vs_ideal: r.total_seconds / r.ideal_seconds.max(f64::MIN_POSITIVE),
            oversubscription: r.oversubscription,
            iteration_seconds: &r.iteration_seconds,
            steps: &r.steps,
            ranks: &r.ranks,
            items_moved: r.steps.iter().map(|s| s.items_moved).sum(),
            bytes: r.steps.iter().map(|s| s.bytes).sum(),
        })
        .collect();
    let best = balancers
        .iter()
        .filter(|b| b.balancer != "none")
        .min_by(|a, b| a.total_seconds.total_cmp(&b.total_seconds))
        .map(|b| b.balancer);
    // Rules that do not weigh capacities see only the items' loads: with equal loads they
    // have nothing to move, whatever the speeds.
    let unmoved: Vec<&str> = balancers
        .iter()
        .filter(|b| b.items_moved == 0 && b.balancer != "none")
        .filter(|b| {
            b.balancer
                .parse::<NetworkAlgorithm>()
                .is_ok_and(|a| !a.uses_capacities())
        })
        .map(|b| b.balancer)
        .collect();
    if !unmoved.is_empty() {
        eprintln!(
            "note: {} moved nothing: {} not weigh the ranks' speeds, only the items' loads, \
             which were level (the measured speeds only weight their imbalance); dem-hetero, \
             cwa, hybrid and the diffusion rules use them",
            unmoved.join(", "),
            if unmoved.len() == 1 {
                "it does"
            } else {
                "they do"
            }
        );
    }
    // The speeds the rules were given at each rebalance, and each rank's over the run: the
    // first impossible one of each rank is reported.
    let mut implausible_speeds: Vec<SpeedWarning> = Vec::new();
    for r in runs {
        let over_run: Vec<Option<f64>> = r
            .ranks
            .iter()
            .map(|l| hetlb_runtime::speed_check::speed(l.units_processed, l.busy_seconds))
            .collect();
        let given = r
            .steps
            .iter()
            .filter_map(|s| s.report.measured_speeds.as_ref())
            .map(|v| v.iter().map(|&x| Some(x)).collect::<Vec<_>>());
        for speeds in given.chain(std::iter::once(over_run)) {
            for speed in hetlb_runtime::speed_check::implausible(&speeds) {
                let seen = implausible_speeds
                    .iter()
                    .any(|w| w.balancer == r.balancer && w.speed.rank == speed.rank);
                if !seen {
                    implausible_speeds.push(SpeedWarning {
                        balancer: r.balancer.clone(),
                        speed,
                    });
                }
            }
        }
    }
    for w in &implausible_speeds {
        eprintln!(
            "warning: {}: rank {} measured {:.3e} units/s, which cannot be right: {}; the \
             rules that weigh speeds trusted it",
            w.balancer, w.speed.rank, w.speed.speed, w.speed.reason
        );
    }
    let doc = RunJson {
        backend,
        workers: ranks,
        items: args.items,
        iterations: args.iterations,
        every: args.every,
        slowdown: setup.config.slowdowns.iter().map(|s| s.factor).collect(),
        drift: args.drift.as_deref(),
        schedule: &args.schedule,
        speeds: &args.speeds,
        balancers,
        best,
        unmoved,
        implausible_speeds,
    };
    if let Some(path) = &args.plot {
        let series: Vec<Series> = runs
            .iter()
            .map(|r| Series {
                label: r.balancer.clone(),
                points: r
                    .iteration_seconds
                    .iter()
                    .enumerate()
                    .map(|(i, &t)| ((i + 1) as f64, t * 1e3))
                    .collect(),
            })
            .collect();
        let rebalances: Vec<f64> = (1..=args.iterations)
            .filter(|i| i % args.every == 0 && *i < args.iterations)
            .map(|i| i as f64 + 0.5)
            .collect();
        line_chart_with(
            path,
            &format!(
                "Time per iteration: {ranks} ranks ({backend}), {} items, slowdowns {}{}",
                args.items,
                doc.slowdown
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                args.drift
                    .as_deref()
                    .map_or(String::new(), |d| format!(", drift {d}"))
            ),
            &Axes::new("iteration", "milliseconds (slowest rank)")
                .integer_x()
                .marks(rebalances, &format!("rebalance (every {})", args.every)),
            &series,
        )
        .context("--plot")?;
    }
    if let Some(path) = &args.dump {
        for r in runs.iter().filter(|r| r.balancer != "none") {
            let target = if runs.iter().filter(|r| r.balancer != "none").count() > 1 {
                suffixed(path, &r.balancer)
            } else {
                path.clone()
            };
            write_dump(&target, r).with_context(|| format!("--dump: {}", target.display()))?;
        }
    }
    if args.format == Format::Json {
        // Every iteration's time and every rebalance's report, for every balancer.
        let bytes: u128 = runs
            .iter()
            .map(|r| {
                r.iteration_seconds.len() as u128 * 24
                    + r.steps.len() as u128 * (ranks as u128 * 64 + 512)
                    + ranks as u128 * 256
            })
            .sum();
        crate::limits::check_output(
            "--format json",
            &format!("every iteration and rebalance of {} runs", runs.len()),
            bytes,
        )?;
    }
    match args.format {
        Format::Json => print_json(&doc),
        Format::Csv => print_csv(
            &[
                "balancer",
                "total_seconds",
                "mean_iteration_seconds",
                "ideal_seconds",
                "vs_none",
                "vs_ideal",
                "steps",
                "mean_imbalance_before",
                "mean_imbalance_after",
                "items_moved",
                "bytes",
            ],
            doc.balancers.iter().map(|b| {
                let (before, after) = mean_imbalance(b.steps);
                vec![
                    b.balancer.to_string(),
                    format!("{:.6}", b.total_seconds),
                    format!("{:.6}", b.mean_iteration_seconds),
                    format!("{:.6}", b.ideal_seconds),
                    b.vs_none.map_or(String::new(), |x| format!("{x:.4}")),
                    format!("{:.4}", b.vs_ideal),
                    b.steps.len().to_string(),
                    before.map_or(String::new(), |x| format!("{x:.4}")),
                    after.map_or(String::new(), |x| format!("{x:.4}")),
                    b.items_moved.to_string(),
                    b.bytes.to_string(),
                ]
            }),
        ),
        Format::Table => {
            print_table(&doc);
            Ok(())
        }
    }
}

fn mean_imbalance(steps: &[Step]) -> (Option<f64>, Option<f64>) {
    if steps.is_empty() {
        return (None, None);
    }
    let n = steps.len() as f64;
    (
        Some(steps.iter().map(|s| s.imbalance_before).sum::<f64>() / n),
        Some(steps.iter().map(|s| s.imbalance_after).sum::<f64>() / n),
    )
}

fn print_table(doc: &RunJson) {
    crate::out!(
        "Iterative workload on {} ({} ranks): {} items, {} iterations, rebalance every {}; \
         slowdowns {}; {}; {} schedule, {} speeds",
        doc.backend,
        doc.workers,
        doc.items,
        doc.iterations,
        doc.every,
        doc.slowdown
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(","),
        doc.drift
            .map_or("every item one unit".to_string(), |d| format!("drift {d}")),
        doc.schedule,
        doc.speeds
    );
    let spread = doc.balancers.iter().any(|b| b.runs > 1);
    let mut header = vec!["balancer", "total s"];
    if spread {
        header = vec!["balancer", "total s (median run)", "min – max"];
    }
    header.extend([
        "s / iteration",
        "ideal s",
        "÷ none",
        "÷ ideal",
        "rebalances",
        "imbalance before → after",
        "items moved",
        "MB moved",
        "s in rebalance",
    ]);
    let mut t = table(header);
    for b in &doc.balancers {
        let (before, after) = mean_imbalance(b.steps);
        let mut row = vec![b.balancer.to_string(), fixed(b.total_seconds, 3)];
        if spread {
            row.push(format!(
                "{} – {}",
                fixed(b.total_seconds_min, 3),
                fixed(b.total_seconds_max, 3)
            ));
        }
        row.extend([
            fixed(b.mean_iteration_seconds, 4),
            fixed(b.ideal_seconds, 3),
            b.vs_none.map_or("–".into(), |x| fixed(x, 3)),
            fixed(b.vs_ideal, 3),
            b.steps.len().to_string(),
            match (before, after) {
                (Some(x), Some(y)) => format!("{x:.3} → {y:.3}"),
                _ => "–".into(),
            },
            b.items_moved.to_string(),
            fixed(b.bytes as f64 / 1e6, 2),
            fixed(b.steps.iter().map(|s| s.seconds).fold(0.0, |a, x| a + x), 3),
        ]);
        t.add_row(row);
    }
    crate::out!("{t}");
    if let Some(best) = doc.best {
        if let Some(b) = doc.balancers.iter().find(|b| b.balancer == best) {
            crate::out!(
                "best: {best}, {:.3} s: {} · {:.1}% above the ideal ({:.3} s: work ÷ Σ speed \
                 measured in CPU time{})",
                b.total_seconds,
                b.vs_none
                    .map_or("no run without balancing to compare".into(), |x| format!(
                        "{:.1}% of the time without balancing",
                        100.0 * x
                    )),
                100.0 * (b.vs_ideal - 1.0),
                b.ideal_seconds,
                if b.oversubscription > 1.0 {
                    format!(", × {:.2} ranks per core", b.oversubscription)
                } else {
                    String::new()
                }
            );
        }
    }
    crate::out!(
        "Imbalance is max(load ÷ capacity) ÷ average, at each rebalance; an iteration lasts as \
         long as its slowest rank."
    );
}

/// Every item is held by exactly one rank at the end of every run (count and id checksum).
fn check_exactly_once(setup: &Setup, runs: &[IterativeRun]) -> Result<()> {
    let n = setup.config.cells;
    let expected: u128 = u128::from(n) * u128::from(n.saturating_sub(1)) / 2;
    for r in runs {
        let items: u64 = r.ranks.iter().map(|l| l.items).sum();
        let ids: u128 = r.ranks.iter().map(|l| l.id_sum).sum();
        if items != n || ids != expected {
            bail!(
                "{}: the ranks hold {items} items (id sum {ids}) at the end, expected {n} (id sum \
                 {expected})",
                r.balancer
            );
        }
    }
    Ok(())
}

fn suffixed(path: &std::path::Path, name: &str) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("steps");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("jsonl");
    path.with_file_name(format!("{stem}-{name}.{ext}"))
}

/// One line of a dump: a rebalance as the rule saw it.
#[derive(Serialize)]
struct DumpLine<'a> {
    step: usize,
    iteration: u64,
    algorithm: &'a str,
    topology: &'a str,
    capacities: Vec<f64>,
    loads_before: &'a [u64],
    planned_after: &'a [u64],
    loads_after: &'a [u64],
    measured_speeds: Option<&'a [f64]>,
    imbalance_before: f64,
    imbalance_after: f64,
}

fn write_dump(path: &std::path::Path, run: &IterativeRun) -> Result<()> {
    let file = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::new(file);
    for (k, s) in run.steps.iter().enumerate() {
        let r = &s.report;
        let line = DumpLine {
            step: k + 1,
            iteration: s.iteration,
            algorithm: &r.algorithm,
            topology: &r.topology,
            capacities: r
                .capacities
                .clone()
                .unwrap_or_else(|| vec![1.0; r.loads_before.len()]),
            loads_before: &r.loads_before,
            planned_after: &r.planned_after,
            loads_after: &r.loads_after,
            measured_speeds: r.measured_speeds.as_deref(),
            imbalance_before: s.imbalance_before,
            imbalance_after: s.imbalance_after,
        };
        serde_json::to_writer(&mut w, &line)?;
        writeln!(w)?;
    }
    w.flush()?;
    Ok(())
}
