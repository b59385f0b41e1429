//! `hetlb run iterative`: an iterative application on real workers, balanced by peer
//! rebalancing under each decentralised rule in turn, against no balancing and the ideal.

use crate::input::{parse_list, whole};
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Axes, Series, line_chart_with};
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::algorithm::Algorithm;
use hetlb_experiments::drivers::iterative::{
    self as compare, BalancerReport, SpeedWarning, Spread,
};
use hetlb_peer::{AUTO, BalancerConfig, PeerError};
use hetlb_runtime::Slowdown;
use hetlb_runtime::workload::iterative::{
    Drift, IterationProgress, IterativeConfig, IterativeRun, dump,
};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The most ranks a threads run starts (each rank is a thread).
const MAX_THREAD_RANKS: usize = 1024;
/// The most cells (items) a run holds in memory.
const MAX_CELLS: u64 = 100_000_000;

/// Arguments of `hetlb run iterative`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run iterative --algorithm all --procs 4 --slowdown 1,3,3,3\n  \
    hetlb run iterative --algorithm cwa,dishet,none --procs 8 --drift hotspot:6 --plot iterations.svg\n  \
    hetlb run iterative --algorithm oem --procs 4 --schedule pipeline --dump steps.jsonl --format json\n  \
    mpiexec -n 8 hetlb run iterative --backend mpi --algorithm all --slowdown 1,1,3,3,3,3,3,3")]
pub struct Args {
    /// Items (cells of work) in all, spread over the ranks in equal blocks at the start.
    #[arg(long, default_value = "4096", visible_alias = "cells", value_parser = whole::<u64>(1, MAX_CELLS))]
    items: u64,
    /// Iterations of the application's loop.
    #[arg(long, default_value = "40", value_parser = whole::<u64>(1, 10_000_000))]
    iterations: u64,
    /// Rebalance every R iterations.
    #[arg(long, default_value = "5", value_name = "R", value_parser = whole::<u64>(1, 100_000_000))]
    every: u64,
    /// Rules to compare, comma-separated (any name `hetlb balance` accepts), `auto` (at each
    /// rebalance the candidate rule with the best predicted gain; needs `--speeds measured`),
    /// `none` for the run without balancing, or `all`: every rule that fits the rank count,
    /// and none.
    #[arg(
        long = "algorithm",
        visible_alias = "balancer",
        default_value = "all",
        value_name = "ALG[,ALG…]|all|none"
    )]
    balancer: String,
    /// Ranks (threads; on MPI the number of processes, the default there).
    #[arg(long, visible_alias = "workers", value_name = "P", value_parser = whole::<usize>(1, MAX_THREAD_RANKS))]
    procs: Option<usize>,
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
    /// Cells with positions: `1d`, `2d` or `3d` — the cells fill the unit square (cube), the
    /// ranks start with slabs of it, and the `--drift` hot spot is a ball moving across it;
    /// the balancers move the cells nearest each neighbour, and the report gives the spread
    /// of the ranks' regions (`spread_before`, `spread_after` in the JSON steps).
    #[arg(long, value_name = "1d|2d|3d")]
    positions: Option<String>,
    /// Kernel rounds per unit of work.
    #[arg(long, default_value = "2000", value_parser = whole::<u64>(0, 1_000_000_000))]
    cost: u64,
    /// Bytes of application data carried by each item.
    #[arg(long, default_value = "64", value_parser = whole::<usize>(0, 1 << 30))]
    item_bytes: usize,
    /// How items are put on the links: phased, overlap or pipeline (Rim et al. §6).
    #[arg(long, default_value = option_default("schedule"))]
    schedule: String,
    /// Capacities the rules weigh: `measured` (units per busy second, the median of the
    /// last reports: `measured:WINDOW` names how many) or `equal`. This command measures by
    /// default, since its ranks run at different speeds; an embedded balancer's default is
    /// `equal` (`hetlb options`).
    #[arg(long, default_value = "measured")]
    speeds: String,
    /// When a rebalance moves: `always`, or `auto[:HORIZON[:MARGIN]]` — only when the gain
    /// predicted over HORIZON iterations exceeds MARGIN × the move's predicted cost (needs
    /// `--speeds measured`; docs/advise.md).
    #[arg(long, default_value = option_default("trigger"))]
    trigger: String,
    /// The move's cost that `--trigger auto` weighs: seconds per message and per unit of load
    /// (`ALPHA,BETA`; default free, so auto moves whenever the predicted gain is positive).
    #[arg(
        long,
        value_name = "ALPHA,BETA",
        default_value = option_default("move_cost"),
        allow_hyphen_values = true
    )]
    move_cost: String,
    /// How the units travel: `paper` (hop by hop along the topology, as the rules move them)
    /// or `direct` (each unit once, straight to the rank where the plan ends it).
    #[arg(long, default_value = option_default("routing"), value_name = "paper|direct")]
    routing: String,
    /// Learn the move's cost on line: after every move, refit seconds per message and per
    /// unit to the moves measured so far (`--move-cost` is the prior until the first).
    #[arg(long)]
    learn_cost: bool,
    /// With `--trigger auto`: the share of the iteration time that checking may cost (0 to 1;
    /// 0 checks at every rebalance). Calls between checks return at once, without a message.
    #[arg(long, default_value = option_default("check_budget"))]
    check_budget: String,
    /// Topology of the ranks for the diffusion rules (`ring:6`, `torus:2x4`, …); default a
    /// hypercube on a power of two, else complete:N for the hypercube rules, a ring otherwise.
    #[arg(long)]
    topology: Option<String>,
    /// Seed of random-biasing's draws.
    #[arg(long, default_value = option_default("seed"))]
    seed: String,
    /// Seconds a rank taking part in a rebalance may stay silent before it is declared failed.
    #[arg(long, default_value = option_default("timeout"))]
    timeout: String,
    /// threads (default) or mpi (under mpiexec; needs a build with `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Record every rebalance, one JSON object a line (for `hetlb replay`). With several
    /// balancers, one file each (`NAME-cwa.jsonl`, …).
    #[arg(long, value_name = "FILE.jsonl")]
    dump: Option<PathBuf>,
    /// Write a trace of every balanced run (Trace Event JSON: open it in ui.perfetto.dev, or
    /// make a report of it with `hetlb report`): every rank's steps, each rebalance and its
    /// phases, load, speed and imbalance counters, an arrow per transfer. With several
    /// balancers, one file each (`NAME-cwa.json`, …); with --runs, the last run's. On MPI
    /// each rank writes `NAME.rankR.json` and rank 0 merges them into FILE. Refused above
    /// --max-output.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The trace's event limit: past it, counter samples are thinned and other events
    /// dropped (the file says so).
    #[arg(long, value_name = "N", default_value_t = hetlb_trace::DEFAULT_EVENT_LIMIT,
        value_parser = whole::<usize>(16, 1 << 40))]
    trace_events: usize,
    /// Time per iteration for each balancer: `.svg` or `.png`.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Runs of every balancer: times are noisy, so the run of median total time is reported
    /// with the smallest and largest total of the runs (threads backend).
    #[arg(long, default_value = "1", value_name = "N", value_parser = whole::<u64>(1, 1000))]
    runs: u64,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Everything checked before anything runs.
struct Setup {
    config: IterativeConfig,
    balancers: Vec<Option<BalancerConfig>>,
    /// Silence after which a rank is reported as stopped.
    timeout: Duration,
    /// Per balancer, the totals of its runs (empty: one run each).
    spreads: Vec<Spread>,
}

impl Setup {
    /// The ranges of the numbers are clap's (`whole`, `real`); what depends on several
    /// arguments or on the ranks is checked here.
    fn parse(args: &Args, ranks: usize) -> Result<Self> {
        // Every item is held once, and at most twice more while it moves (its clone in a
        // message and its copy at the receiver).
        let bytes = (args.items as u128) * (args.item_bytes as u128 + 48) * 3;
        crate::limits::check(
            "--item-bytes",
            &format!("{} items of {} bytes", args.items, args.item_bytes),
            bytes,
        )?;
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
        let names: Vec<String> = match args.balancer.as_str() {
            // Every rule on every count: off a power of two the hypercube rules run embedded.
            "all" => Algorithm::all()
                .map(|a| a.name().to_string())
                .chain(std::iter::once("none".to_string()))
                .collect(),
            list => crate::input::unique(
                list.split(',').map(|s| s.trim().to_string()).collect(),
                "--algorithm",
            ),
        };
        if names.is_empty() || names.iter().any(String::is_empty) {
            bail!("--algorithm: an empty name in '{}'", args.balancer);
        }
        let mut balancers = Vec::new();
        let balanced = names.iter().filter(|n| *n != "none").count();
        for name in &names {
            if name == "none" {
                balancers.push(None);
                continue;
            }
            // The core's message names every rule once.
            if name != AUTO {
                name.parse::<Algorithm>()
                    .map_err(|e| anyhow!("--algorithm: {e}, auto, or none"))?;
            }
            let mut cfg = balancer_config(args, name)?;
            if let Some(path) = trace_path(args, name, balanced) {
                cfg = cfg
                    .set("trace", &path.display().to_string())
                    .and_then(|c| c.set("trace_events", &args.trace_events.to_string()))
                    .map_err(|e| flag_error(&e))?;
            }
            // Refuse a rule that does not fit the ranks before anything runs.
            cfg.check(ranks).map_err(|e| flag_error(&e))?;
            balancers.push(Some(cfg));
        }
        let mut config = IterativeConfig::default();
        (config.cells, config.iterations, config.every) = (args.items, args.iterations, args.every);
        (config.cost, config.payload) = (args.cost, args.item_bytes);
        (config.slowdowns, config.drift) = (slowdowns, drift);
        config.positions = match args.positions.as_deref() {
            None => None,
            Some("1d") => Some(1),
            Some("2d") => Some(2),
            Some("3d") => Some(3),
            Some(other) => bail!("--positions: '{other}' is not 1d, 2d or 3d"),
        };
        let timeout = hetlb_peer::options::parse_seconds(&args.timeout)
            .map_err(|e| anyhow!("--timeout: {e}"))?;
        Ok(Self {
            config,
            balancers,
            timeout,
            spreads: Vec::new(),
        })
    }
}

/// The trace file of balancer `name` (one of `balanced`), when `--trace` asks for one.
fn trace_path(args: &Args, name: &str, balanced: usize) -> Option<PathBuf> {
    let path = args.trace.as_ref()?;
    Some(if balanced > 1 {
        suffixed_as(path, name, "json")
    } else {
        path.clone()
    })
}

/// Refuses, before the run, trace files that cannot be written or are too large: on MPI
/// (`rank`) this rank's part.
fn check_traces(args: &Args, setup: &Setup, rank: Option<usize>) -> Result<()> {
    let Some(path) = &args.trace else {
        return Ok(());
    };
    let paths: Vec<PathBuf> = setup
        .balancers
        .iter()
        .flatten()
        .filter_map(|c| c.options().trace.clone())
        .collect();
    if paths.is_empty() {
        eprintln!(
            "note: --trace {}: no balanced run to trace (--algorithm none)",
            path.display()
        );
    }
    for p in &paths {
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => {
                bail!(
                    "--trace: cannot write the trace '{}': it is a directory",
                    p.display()
                )
            }
            // On MPI each rank writes a file beside the path: never beside a device.
            Ok(m) if !m.is_file() && rank.is_some() => bail!(
                "--trace: cannot write the trace '{}': it is not a regular file",
                p.display()
            ),
            _ => {}
        }
        let p = match rank {
            Some(r) => hetlb_peer::trace::rank_path(p, r),
            None => p.clone(),
        };
        crate::trace_out::check_target(&p, args.trace_events, paths.len())?;
    }
    Ok(())
}

/// The default of the balancer option `name`, as the library's options table gives it.
fn option_default(name: &str) -> String {
    hetlb_peer::options::OptionInfo::find(name)
        .ok()
        .and_then(|o| o.default_value())
        .unwrap_or_default()
}

/// The configuration of rule `name` with the options of the command line, each set by name
/// through the library's options table.
fn balancer_config(args: &Args, name: &str) -> Result<BalancerConfig> {
    let mut cfg = BalancerConfig::new(name).map_err(|e| anyhow!("--algorithm: {e}"))?;
    // A capacity-blind rule refuses capacities; beside the others it runs on equal speeds,
    // and says so.
    let blind = name != AUTO && !cfg.algorithm().uses_capacities();
    let given = args.speeds.trim();
    let speeds = if blind && (given.starts_with("fixed") || given.starts_with("own")) {
        eprintln!(
            "note: {name} is capacity-blind (it balances equal shares): it runs with equal \
             speeds, --speeds {given} is for the other rules"
        );
        "equal"
    } else {
        args.speeds.as_str()
    };
    let mut options = vec![
        ("speeds", speeds),
        ("schedule", &args.schedule),
        ("timeout", &args.timeout),
        ("trigger", &args.trigger),
        ("move_cost", &args.move_cost),
        ("routing", &args.routing),
        ("check_budget", &args.check_budget),
        ("seed", &args.seed),
    ];
    if args.learn_cost {
        options.push(("learn_cost", "true"));
    }
    for (option, value) in options {
        cfg = cfg.set(option, value).map_err(|e| flag_error(&e))?;
    }
    if let Some(t) = &args.topology
        && (name == AUTO || !cfg.algorithm().needs_hypercube())
    {
        cfg = with_topology(cfg, t)?;
    }
    Ok(cfg)
}

/// A balancer's error, with the option it names spelled as this command's flag.
fn flag_error(e: &PeerError) -> anyhow::Error {
    match e {
        PeerError::Config(c) => match c.option_name() {
            Some("rule") => anyhow!("--algorithm: {}", c.reason()),
            Some(name) => anyhow!("--{}: {}", name.replace('_', "-"), c.reason()),
            None => anyhow!("--algorithm: {c}"),
        },
        other => anyhow!("--algorithm: {other}"),
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
    cfg.topology(spec).map_err(|e| flag_error(&e))
}

/// Runs `hetlb run iterative`.
pub fn run(args: Args) -> Result<()> {
    if crate::input::mpi_backend(&args.backend)? {
        return run_mpi(&args);
    }
    let ranks = args.procs.unwrap_or(4);
    if ranks > MAX_THREAD_RANKS {
        bail!(
            "--workers: {ranks} threads is more than the {MAX_THREAD_RANKS} a threads run starts"
        );
    }
    let mut setup = Setup::parse(&args, ranks)?;
    check_traces(&args, &setup, None)?;
    let iterations = setup.config.iterations;
    let compared = compare::on_threads(
        &setup.config,
        ranks,
        &setup.balancers,
        args.runs,
        Some(setup.timeout),
        &mut |name, k| {
            let label = if args.runs > 1 {
                format!("{name} on {ranks} ranks, run {}", k + 1)
            } else {
                format!("{name} on {ranks} ranks")
            };
            let bar = progress::bar(iterations, label);
            let p: IterationProgress = Arc::new(move |done| {
                bar.set_position(done);
                if done >= iterations {
                    bar.finish_and_clear();
                }
            });
            Some(p)
        },
    )?;
    let (runs, spreads): (Vec<IterativeRun>, Vec<Spread>) =
        compared.into_iter().map(|c| (c.run, c.spread)).unzip();
    setup.spreads = spreads;
    present(&args, &setup, ranks, "threads", runs)
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args) -> Result<()> {
    bail!("{}", crate::input::NO_MPI)
}

/// Every balancer in turn on the MPI job's ranks; rank 0 prints (see
/// `hetlb_experiments::drivers::iterative::on_mpi_job`).
#[cfg(feature = "mpi")]
fn run_mpi(args: &Args) -> Result<()> {
    let job = hetlb_experiments::drivers::mpi_job::MpiJob::init()
        .map_err(|e| anyhow!("--backend: {e}"))?;
    let ranks = job.size();
    let setup = job.agreed((|| {
        if let Some(w) = args.procs
            && w != ranks
        {
            bail!("--procs: {w} given but mpiexec started {ranks} ranks");
        }
        let setup = Setup::parse(args, ranks)?;
        check_traces(args, &setup, Some(job.rank()))?;
        Ok::<_, anyhow::Error>(setup)
    })());
    match compare::on_mpi_job(&job, &setup.config, &setup.balancers, setup.timeout)? {
        Some(runs) => {
            for cfg in setup.balancers.iter().flatten() {
                if let Some(path) = &cfg.options().trace {
                    crate::trace_out::merge_parts(path, ranks, args.trace_events, setup.timeout)?;
                }
            }
            present(args, &setup, ranks, "mpi", runs)
        }
        None => Ok(()),
    }
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
    balancers: &'a [BalancerReport],
    best: Option<&'a str>,
    /// Rules that ignore the ranks' speeds and moved nothing.
    unmoved: &'a [String],
    /// Measured speeds that cannot be right.
    implausible_speeds: &'a [SpeedWarning],
}

fn present(
    args: &Args,
    setup: &Setup,
    ranks: usize,
    backend: &str,
    runs: Vec<IterativeRun>,
) -> Result<()> {
    let assessment = compare::assess(runs, &setup.spreads);
    notes(&assessment);
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
        balancers: &assessment.balancers,
        best: assessment.best.as_deref(),
        unmoved: &assessment.unmoved,
        implausible_speeds: &assessment.implausible_speeds,
    };
    if let Some(path) = &args.plot {
        plot(path, args, &doc)?;
        crate::plot::notice(std::slice::from_ref(path));
    }
    if let Some(path) = &args.dump {
        write_dumps(path, doc.balancers)?;
    }
    match args.format {
        Format::Json => {
            check_json_size(&doc, ranks)?;
            print_json(&doc)
        }
        Format::Csv => print_csv_rows(&doc),
        Format::Table => {
            print_table(&doc);
            Ok(())
        }
    }
}

/// On stderr: the rules that moved nothing and why, and the measured speeds that cannot be
/// right.
fn notes(assessment: &compare::Assessment) {
    let unmoved = &assessment.unmoved;
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
    for w in &assessment.implausible_speeds {
        eprintln!(
            "warning: {}: rank {} measured {:.3e} units/s, which cannot be right: {}; the \
             rules that weigh speeds trusted it",
            w.balancer, w.speed.rank, w.speed.speed, w.speed.reason
        );
    }
}

/// Every balanced run's rebalances written to `path` (with several, `NAME-RULE.ext` each).
fn write_dumps(path: &Path, reports: &[BalancerReport]) -> Result<()> {
    let balanced: Vec<&BalancerReport> = reports.iter().filter(|r| r.balancer != "none").collect();
    for r in &balanced {
        let target = if balanced.len() > 1 {
            suffixed(path, &r.balancer)
        } else {
            path.to_path_buf()
        };
        std::fs::File::create(&target)
            .and_then(|f| dump::write(std::io::BufWriter::new(f), &r.steps))
            .with_context(|| format!("--dump: {}", target.display()))?;
    }
    Ok(())
}

/// Refuses a JSON document above --max-output: every iteration's time and every
/// rebalance's report, for every balancer.
fn check_json_size(doc: &RunJson, ranks: usize) -> Result<()> {
    let bytes: u128 = doc
        .balancers
        .iter()
        .map(|r| {
            r.iteration_seconds.len() as u128 * 24
                + r.steps.len() as u128 * (ranks as u128 * 64 + 512)
                + ranks as u128 * 256
        })
        .sum();
    crate::limits::check_output(
        "--format json",
        &format!(
            "every iteration and rebalance of {} runs",
            doc.balancers.len()
        ),
        bytes,
    )
}

/// One CSV row per balancer.
fn print_csv_rows(doc: &RunJson) -> Result<()> {
    let cell = |x: Option<f64>, d: usize| x.map_or(String::new(), |x| format!("{x:.d$}"));
    print_csv(
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
            vec![
                b.balancer.to_string(),
                format!("{:.6}", b.total_seconds),
                format!("{:.6}", b.mean_iteration_seconds),
                format!("{:.6}", b.ideal_seconds),
                cell(b.vs_none, 4),
                format!("{:.4}", b.vs_ideal),
                b.steps.len().to_string(),
                cell(b.mean_imbalance_before, 4),
                cell(b.mean_imbalance_after, 4),
                b.items_moved.to_string(),
                b.bytes.to_string(),
            ]
        }),
    )
}

/// Time per iteration of every balancer, the rebalances marked.
fn plot(path: &Path, args: &Args, doc: &RunJson) -> Result<()> {
    let series: Vec<Series> = doc
        .balancers
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
            "Time per iteration: {} ranks ({}), {} items, slowdowns {}{}",
            doc.workers,
            doc.backend,
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
    .context("--plot")
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
    for b in doc.balancers {
        let (before, after) = (b.mean_imbalance_before, b.mean_imbalance_after);
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
    if doc.best == Some("none") {
        crate::out!(
            "best: none — no balancer beat running without balancing here (each took longer \
             than its moves saved)"
        );
    } else if let Some(best) = doc.best
        && let Some(b) = doc.balancers.iter().find(|b| b.balancer == best)
    {
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
    for b in doc.balancers {
        let held = b.steps.iter().filter(|s| s.report.held_back).count();
        if held > 0 {
            crate::out!(
                "{}: the trigger held back {held} of {} rebalances (predicted gain below the \
                 move's cost × margin).",
                b.balancer,
                b.steps.len()
            );
        }
    }
    crate::out!(
        "Imbalance is max(load ÷ capacity) ÷ average, at each rebalance; an iteration lasts as \
         long as its slowest rank."
    );
}

fn suffixed(path: &std::path::Path, name: &str) -> PathBuf {
    suffixed_as(path, name, "jsonl")
}

/// `STEM-NAME.EXT` beside `path` (`ext` when it has none).
fn suffixed_as(path: &std::path::Path, name: &str, ext: &str) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("steps");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or(ext);
    path.with_file_name(format!("{stem}-{name}.{ext}"))
}
