//! `hetlb balance`: one load vector, one algorithm, one network; the plan and its metrics.

use crate::input::{joined, parse_capacities, parse_loads};
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::Downsampler;

mod schedule;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::algorithm::{
    Algorithm, BalanceError, BalanceOptions, balance_on_within, balance_summarised,
};
use hetlb_core::report::{BalanceReport, ReportDetail};
use hetlb_core::rounds::{RoundError, RoundRun};
use hetlb_core::summary::{PhaseRow, PlanSummary, SummaryOptions};
use hetlb_core::topology::{Graph, Network, Topology, TopologySpec};
use hetlb_core::{Capacities, Metrics, Phase};
use std::path::PathBuf;

/// Arguments of `hetlb balance`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb balance --algorithm oem --loads 4,7,0,9,2,2,8,1\n  hetlb balance --algorithm dem-hetero --loads 640,960 --capacities 64,32 --format json\n  hetlb balance --algorithm hybrid --procs-per-group 4 --loads @examples/loads.txt\n  hetlb balance --algorithm dishet --topology ring:8 --loads 80,0,0,0,0,0,0,0 --capacities 1,1,2,2,4,4,1,1\n  hetlb balance --algorithm gdem --topology torus:4x4 --loads @examples/loads.txt --plot loads.svg\n  hetlb balance --algorithm diffusion --topology file:examples/graph.txt --loads @examples/loads.txt --max-rounds 500"
)]
pub struct Args {
    /// Algorithm. On a hypercube (or any count of loads, embedded): dem, dem-fixed,
    /// dem-improved, dem-hetero, oem, cwa, hybrid. On any network: dishet, dishet-tight,
    /// diffusion, random-biasing, dynamic-biasing, gdem.
    #[arg(long, short)]
    algorithm: String,
    /// Loads, one per node: `5,0,3,…`, or `@path` to a file of one integer per line or a JSON
    /// array. Without --topology: the hypercube of a power of two of them; another count runs
    /// the hypercube rules embedded in a cube (on complete:N), the diffusion rules need one.
    /// Values may also be separate words: `--loads 5 0 3`.
    #[arg(long, short, required = true, num_args = 1.., allow_negative_numbers = true)]
    loads: Vec<String>,
    /// Node capacities (positive speeds), same count as loads: `1,2,…` (or `1 2 …`) or
    /// `@path`.
    #[arg(long, short, num_args = 1.., allow_negative_numbers = true)]
    capacities: Option<Vec<String>>,
    /// P for `hybrid`: OEM inside groups of P nodes, then CWA across groups.
    #[arg(long, value_name = "P", value_parser = crate::input::whole::<usize>(1, 1 << 24))]
    procs_per_group: Option<usize>,
    /// Network: ring:16, path:8, mesh:4x4, torus:8x8, kary:4:3, star:9, complete:8,
    /// hypercube:5, `random:32:0.2[:seed]`, or file:PATH (edge list `a b` per line, ids from 0,
    /// or JSON `{"nodes": N, "edges": [[a, b], …]}`). Default: the hypercube of the loads.
    #[arg(long, short, value_name = "SPEC")]
    topology: Option<String>,
    /// Round limit of the diffusion algorithms (default 100000).
    #[arg(long, value_name = "R", value_parser = crate::input::whole::<u64>(1, 1_000_000_000))]
    max_rounds: Option<u64>,
    /// Seed of random-biasing's random streams.
    #[arg(long, value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: Option<u64>,
    /// Exchange parameter λ of gdem, 0 < λ < 1 (default: the known optimum for hypercubes,
    /// rings, paths, meshes and tori, 1/2 otherwise).
    #[arg(long, allow_hyphen_values = true)]
    lambda: Option<f64>,
    /// Write every node's load per round to this chart (.svg or .png).
    #[arg(long, value_name = "PATH")]
    plot: Option<PathBuf>,
    /// Transmit the plan and print the time, in steps of T_comm: phased, overlap, pipeline
    /// (comma-separated for several), or pipeline-per-processor (Rim et al.'s §6.2
    /// pseudo-code read literally: one unit per processor per step). Hypercube plans only.
    #[arg(long, num_args = 1.., value_delimiter = ',', value_name = "SCHEDULE")]
    schedule: Vec<String>,
    /// Draw every link's activity over time (.svg or .png), for the schedule given (default
    /// phased; with several schedules, one file each, named PATH-SCHEDULE.ext).
    #[arg(long, value_name = "PATH")]
    gantt: Option<PathBuf>,
    /// Write every round: JSON `loads_per_round` (the load vector after every round) and
    /// every transfer (`phases`), CSV every transfer. Without it a plan of more than 10,000
    /// transfers is summarised (its transfers are left out and `omitted` says so), while its
    /// rounds run: memory grows with the nodes, not the transfers. Refused above
    /// --max-output.
    #[arg(long)]
    rounds: bool,
    /// Write a trace of the plan (Trace Event JSON, one round a millisecond: open it in
    /// ui.perfetto.dev, or make a report of it with `hetlb report`): every node's load after
    /// each round, the imbalance, an arrow per transfer. (`--trace` was once an alias of
    /// `--rounds`; the per-round vectors are `--rounds`.) Refused above --max-output.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The trace's event limit: past it, counter samples are thinned and other events
    /// dropped (the file says so).
    #[arg(long, value_name = "N", default_value_t = hetlb_trace::DEFAULT_EVENT_LIMIT,
        value_parser = crate::input::whole::<usize>(16, 1 << 40))]
    trace_events: usize,
    /// Output format. CSV has one row per transfer (phase, dimension, from, to, units), per
    /// node's final load (record `final`: node, load) and per metric (record `metric`:
    /// metric, value).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Transfers written in full without `--rounds`.
const SHOWN_TRANSFERS: usize = 10_000;

/// What the outputs need of a balance: the plan, when an output lists every round or
/// transfer (`--rounds`, `--plot`, `--schedule`, `--gantt`), and always its summary
/// (gathered while the rounds ran when there is no plan: memory `O(nodes)`).
struct Outcome {
    plan: Option<RoundRun>,
    summary: RoundRun<PlanSummary>,
}

/// Runs `hetlb balance`.
pub fn run(args: Args) -> Result<()> {
    let algorithm: Algorithm = args.algorithm.parse().context("--algorithm")?;
    let loads = parse_loads(&joined(&args.loads), "--loads")?;
    let (network, topology) = network(args.topology.as_deref(), &loads, algorithm)?;
    // What every run holds whatever it does: the loads, the network and a round engine's
    // vectors (about 64 bytes a node and 8 an adjacency entry); a recorded plan's transfers
    // get the rest of --max-memory.
    let arcs: u128 = (0..network.node_count())
        .map(|i| network.degree(i) as u128)
        .sum();
    let fixed = loads.len() as u128 * 64 + arcs * 8;
    crate::limits::check(
        "--loads",
        &format!("balancing {} nodes", loads.len()),
        fixed,
    )?;
    let options = options(&args, algorithm, loads.len())?;
    if let Some(path) = &args.trace {
        crate::trace_out::check_target(path, args.trace_events, 1)?;
    }
    let outcome = balance(&args, &network, algorithm, &loads, &options, fixed).map_err(|e| {
        if matches!(e, BalanceError::Round(RoundError::TooManyTransfers { .. })) {
            return crate::limits::round_error(e, &format!("{algorithm} on {topology}"), "");
        }
        let field = e.argument();
        anyhow!("--{field}: {e}")
    })?;
    let summary = &outcome.summary;
    let metrics = Metrics::of_summary(&summary.plan, options.capacities.as_ref());
    let transmissions = match &outcome.plan {
        Some(run) => {
            schedule::transmissions(&args.schedule, args.gantt.as_deref(), &network, &run.plan)?
        }
        None => Vec::new(),
    };
    if !(metrics.weighted_imbalance.is_finite() && metrics.distance_from_optimal.is_finite()) {
        eprintln!(
            "note: the capacity-weighted metrics are not finite numbers: the loads and \
             capacities span more orders of magnitude than a double holds"
        );
    }
    if let (Some(path), Some(run)) = (&args.trace, &outcome.plan) {
        let caps = options.capacities.as_ref().map(Capacities::as_slice);
        let about = format!("{algorithm} on {topology}");
        let trace = crate::trace_out::plan(&run.plan, caps, args.trace_events, &about);
        crate::trace_out::write(path, &trace)?;
    }
    if let (Some(path), Some(run)) = (&args.plot, &outcome.plan) {
        plot_loads(path, algorithm, &topology, run).context("--plot")?;
        crate::plot::notice(std::slice::from_ref(path));
    }
    let all_rounds = match &outcome.plan {
        Some(run) => ReportDetail::for_plan(&run.plan, args.rounds, SHOWN_TRANSFERS).phases,
        None => summary.plan.kept_phases().is_some(),
    };
    check_output(&args, &summary.plan, all_rounds)?;
    let caps = options.capacities.as_ref().map(Capacities::as_slice);
    match args.format {
        Format::Json => print_json(&match &outcome.plan {
            Some(run) => {
                let detail = ReportDetail::for_plan(&run.plan, args.rounds, SHOWN_TRANSFERS);
                BalanceReport::new(
                    algorithm,
                    &topology,
                    &network,
                    run,
                    &metrics,
                    caps,
                    transmissions,
                    detail,
                )
            }
            None => BalanceReport::summarised(
                algorithm,
                &topology,
                &network,
                summary,
                &metrics,
                caps,
                transmissions,
            ),
        }),
        Format::Csv => print_csv(
            &[
                "phase",
                "dimension",
                "from",
                "to",
                "units",
                "record",
                "node",
                "load",
                "metric",
                "value",
            ],
            csv_rows(&outcome, &metrics, all_rounds),
        ),
        Format::Table => {
            print_table(algorithm, &topology, summary, &metrics);
            schedule::print_transmissions(&transmissions);
            Ok(())
        }
    }
}

/// Balances `loads`: the whole plan when an output lists it, else its summary gathered
/// while the rounds run. A recorded plan gets the memory left by `fixed` bytes.
fn balance(
    args: &Args,
    network: &Network,
    algorithm: Algorithm,
    loads: &[u64],
    options: &BalanceOptions,
    fixed: u128,
) -> Result<Outcome, BalanceError> {
    let within = crate::limits::transfers_within(fixed);
    let summary_options = SummaryOptions::default()
        .keep_transfers(SHOWN_TRANSFERS)
        .phases(SHOWN_PHASES, TAIL_PHASES)
        .shown_loads(SHOWN_NODES);
    let listed = args.rounds
        || args.trace.is_some()
        || args.plot.is_some()
        || args.gantt.is_some()
        || !args.schedule.is_empty();
    if !listed {
        let summary =
            balance_summarised(network, algorithm, loads, options, within, summary_options)?;
        return Ok(Outcome {
            plan: None,
            summary,
        });
    }
    let run = balance_on_within(network, algorithm, loads, options, within)?;
    let summary = run
        .borrowed()
        .map(|plan| PlanSummary::of(plan, summary_options));
    Ok(Outcome {
        plan: Some(run),
        summary,
    })
}

/// The options of `algorithm` on `nodes` nodes: `--capacities` (noted when the algorithm
/// does not use them), `--procs-per-group`, `--max-rounds`, `--seed` (random-biasing's
/// only) and `--lambda`.
fn options(args: &Args, algorithm: Algorithm, nodes: usize) -> Result<BalanceOptions> {
    let capacities = args
        .capacities
        .as_deref()
        .map(|words| -> Result<Capacities> {
            let values = parse_capacities(&joined(words), "--capacities")?;
            Capacities::for_nodes(values, nodes).map_err(|e| anyhow!("--capacities: {e}"))
        })
        .transpose()?;
    if capacities.is_some() && !algorithm.uses_capacities() {
        eprintln!(
            "note: {algorithm} does not use capacities; they only weight the metrics (use dem-hetero, cwa, hybrid or a diffusion algorithm)"
        );
    }
    if args.seed.is_some() && algorithm != Algorithm::RandomBiasing {
        bail!("--seed: only random-biasing draws random numbers, not {algorithm}");
    }
    Ok(BalanceOptions::new()
        .capacities(capacities)
        .procs_per_group(args.procs_per_group)
        .max_rounds(args.max_rounds)
        .seed(args.seed.unwrap_or(0))
        .lambda(args.lambda))
}

/// JSON and CSV: every transfer and round (`all_rounds`) refused above --max-output, or a
/// note that the transfers are summarised.
fn check_output(args: &Args, plan: &PlanSummary, all_rounds: bool) -> Result<()> {
    if args.format == Format::Table {
        return Ok(());
    }
    let transfers = plan.transfers;
    if !all_rounds {
        eprintln!(
            "note: the plan's {transfers} transfers are summarised, not listed; --rounds \
             writes them (and, in JSON, the loads after every round)"
        );
        return Ok(());
    }
    // About 50 bytes a transfer; a load vector a round, each load as many digits as the
    // largest one and a separator.
    let digits = plan
        .initial
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .to_string()
        .len() as u128
        + 8;
    let vectors = if args.rounds && args.format == Format::Json {
        u128::from(plan.phases) * plan.nodes() as u128 * digits
    } else {
        0
    };
    crate::limits::check_output(
        "--rounds",
        &format!(
            "{transfers} transfers and {} rounds of {} loads",
            plan.phases,
            plan.nodes()
        ),
        u128::from(transfers) * 50 + vectors,
    )
}

/// The CSV rows: the transfers (when `transfers`: the plan's, or those the summary kept),
/// every node's final load, every metric.
fn csv_rows<'a>(
    outcome: &'a Outcome,
    m: &Metrics,
    transfers: bool,
) -> impl Iterator<Item = [String; 10]> + 'a {
    let summary = &outcome.summary;
    let phases: Box<dyn Iterator<Item = (u64, &'a Phase)> + 'a> = match &outcome.plan {
        _ if !transfers => Box::new(std::iter::empty()),
        Some(run) => Box::new((0u64..).zip(&run.plan.phases)),
        None => Box::new(
            summary
                .plan
                .kept_phases()
                .unwrap_or_default()
                .iter()
                .map(|(i, p)| (*i, p)),
        ),
    };
    let transfer_rows = phases.flat_map(|(i, p)| {
        p.transfers.iter().map(move |t| {
            [
                i.to_string(),
                p.dimension.map(|d| d.to_string()).unwrap_or_default(),
                t.from.to_string(),
                t.to.to_string(),
                t.units.to_string(),
                "transfer".to_string(),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]
        })
    });
    let final_rows = summary
        .plan
        .final_loads
        .iter()
        .enumerate()
        .map(|(node, w)| {
            let mut row: [String; 10] = Default::default();
            row[5] = "final".into();
            row[6] = node.to_string();
            row[7] = w.to_string();
            row
        });
    let metrics: Vec<(&str, String)> = vec![
        ("max_difference", m.max_difference.to_string()),
        ("weighted_imbalance", m.weighted_imbalance.to_string()),
        ("distance_from_optimal", m.distance_from_optimal.to_string()),
        ("units_moved", m.units_moved.to_string()),
        ("task_hops", m.task_hops.to_string()),
        ("messages", m.messages.to_string()),
        ("load_info_messages", m.load_info_messages.to_string()),
        ("load_info_words", m.load_info_words.to_string()),
        ("task_messages", m.task_messages.to_string()),
        ("sum_tmax", m.sum_tmax.to_string()),
        ("phases", m.phases.to_string()),
        ("rounds", summary.rounds.to_string()),
        ("converged", summary.converged.to_string()),
    ];
    let metric_rows = metrics.into_iter().map(|(name, value)| {
        let mut row: [String; 10] = Default::default();
        row[5] = "metric".into();
        row[8] = name.into();
        row[9] = value;
        row
    });
    transfer_rows.chain(final_rows).chain(metric_rows)
}

/// The network of `--topology`, or the default for the loads (`Network::default_for`), with
/// its name.
fn network(spec: Option<&str>, loads: &[u64], algorithm: Algorithm) -> Result<(Network, String)> {
    let Some(spec) = spec else {
        let hypercube_rule = algorithm.needs_hypercube();
        return Network::default_for(loads.len(), hypercube_rule).map_err(
            |e| match hypercube_rule {
                true => anyhow!("--loads: {e}"),
                false => anyhow!("--loads: {e}; give --topology for other networks"),
            },
        );
    };
    let parsed: TopologySpec = spec.parse().map_err(|e| anyhow!("--topology: {e}"))?;
    let network = match &parsed {
        TopologySpec::File(path) => {
            let text = crate::input::read_text(std::path::Path::new(path), "--topology", 8)
                .map_err(|e| anyhow!("--topology: cannot read '{path}': {e}"))?;
            let graph = Graph::parse(&text, Some(loads.len()))
                .map_err(|e| anyhow!("--topology: {path}: {e}"))?;
            Network::from_graph(graph)
        }
        _ => parsed
            .build()
            .map_err(|e| anyhow!("--topology: {parsed}: {e}"))?,
    };
    if network.node_count() != loads.len() {
        bail!(
            "--loads: {} loads given for a network of {} nodes ({parsed})",
            loads.len(),
            network.node_count()
        );
    }
    Ok((network, parsed.to_string()))
}

/// Nodes drawn one line each; larger networks are drawn as the largest, mean and smallest
/// load per round.
const PLOTTED_NODES: usize = 16;

/// Every node's load per round, or the largest, mean and smallest load per round on larger
/// networks; rounds are sampled down to what the chart can show, replaying the plan one
/// round at a time so that no per-round table is held.
fn plot_loads(
    path: &std::path::Path,
    algorithm: Algorithm,
    topology: &str,
    run: &RoundRun,
) -> Result<()> {
    let plan = &run.plan;
    let n = plan.nodes();
    let mut lines = Downsampler::new(n, plan.phases.len(), PLOTTED_NODES, |i| format!("node {i}"))
        .envelope_labels("largest load", "mean load", "smallest load");
    let (each, stride) = (lines.each(), lines.stride());
    let total: u128 = plan.initial.iter().map(|&w| u128::from(w)).sum();
    let mut loads = plan.initial.clone();
    lines.record(0, &loads);
    for (r, phase) in plan.phases.iter().enumerate() {
        for t in &phase.transfers {
            loads[t.from] -= t.units;
            loads[t.to] += t.units;
        }
        lines.record(r + 1, &loads);
    }
    let series = lines.finish();
    let what = if each {
        "load of every node".to_string()
    } else {
        format!("largest, mean, smallest of {n} nodes")
    };
    let sampled = if stride > 1 {
        format!(", every {stride}th round")
    } else {
        String::new()
    };
    // Loads that start far above the mean are drawn on a logarithmic axis, where the end of
    // the run is as readable as its start (zero loads are then left out).
    let peak = plan.initial.iter().copied().max().unwrap_or(0) as f64;
    let mean = total as f64 / n.max(1) as f64;
    let mut axes = crate::plot::Axes::new("round", "load (units)").integer_x();
    let mut scale = String::new();
    if mean > 0.0 && peak > 100.0 * mean {
        axes = axes.log10_y();
        scale = " (log axis)".into();
    }
    crate::plot::line_chart_with(
        path,
        &format!("{algorithm} on {topology}, {total} units: {what}{sampled}{scale}"),
        &axes,
        &series,
    )
}

/// Loads shown in full up to this many nodes; longer vectors are abbreviated.
const SHOWN_NODES: usize = 16;

/// `shown`, the first loads of a vector of `nodes`, for the table.
fn abbreviate(shown: &[u64], nodes: usize) -> String {
    let shown: Vec<String> = shown.iter().take(SHOWN_NODES).map(u64::to_string).collect();
    if nodes > SHOWN_NODES {
        format!("{} … ({nodes} nodes)", shown.join(" "))
    } else {
        shown.join(" ")
    }
}

/// Phases listed in full up to this many; longer runs show the first [`HEAD_PHASES`] and
/// the last [`TAIL_PHASES`].
const SHOWN_PHASES: usize = 40;
/// The first phases of a longer run.
const HEAD_PHASES: usize = 20;
/// The last phases of a longer run.
const TAIL_PHASES: usize = 10;

fn print_table(algorithm: Algorithm, topology: &str, run: &RoundRun<PlanSummary>, m: &Metrics) {
    let plan = &run.plan;
    let total: u64 = plan.initial.iter().sum();
    let nodes = plan.nodes();
    crate::out!(
        "{algorithm} on {nodes} nodes ({topology}), {total} units — {} [{}]",
        algorithm.summary(),
        algorithm.source()
    );
    let mut phases = table([
        "phase",
        "dimension",
        "transfers",
        "units",
        "Tmax",
        "loads after",
    ]);
    let blank = || vec![String::new(); 4];
    let mut start = vec!["start".to_string()];
    start.extend(blank());
    start.push(abbreviate(&plan.initial, nodes));
    phases.add_row(start);
    let row = |p: &PhaseRow| {
        vec![
            p.index.to_string(),
            p.dimension.map(|d| d.to_string()).unwrap_or_default(),
            p.transfers.to_string(),
            p.units.to_string(),
            p.tmax.to_string(),
            abbreviate(&p.loads_after, nodes),
        ]
    };
    if plan.phases > SHOWN_PHASES as u64 {
        for p in &plan.head[..HEAD_PHASES] {
            phases.add_row(row(p));
        }
        let mut gap = vec!["…".to_string()];
        gap.extend(blank());
        let hidden = plan.phases - (HEAD_PHASES + TAIL_PHASES) as u64;
        gap.push(format!("({hidden} phases not shown)"));
        phases.add_row(gap);
        for p in &plan.tail {
            phases.add_row(row(p));
        }
    } else {
        for p in &plan.head {
            phases.add_row(row(p));
        }
    }
    crate::out!("{phases}");
    print_metrics(run, m);
}

/// The metrics table.
fn print_metrics(run: &RoundRun<PlanSummary>, m: &Metrics) {
    let mut metrics = table(["metric", "value"]);
    for (name, value) in [
        ("max difference", m.max_difference.to_string()),
        ("weighted imbalance", fixed(m.weighted_imbalance, 4)),
        ("distance from optimal", fixed(m.distance_from_optimal, 2)),
        ("units moved (net)", m.units_moved.to_string()),
        ("task-hops", m.task_hops.to_string()),
        ("messages", m.messages.to_string()),
        (
            "  load information",
            format!("{} ({} words)", m.load_info_messages, m.load_info_words),
        ),
        ("  task messages", m.task_messages.to_string()),
        ("Σ Tmax", m.sum_tmax.to_string()),
        ("phases", m.phases.to_string()),
        (
            "rounds to convergence",
            format!("{} ({} executed)", run.rounds, run.executed_rounds),
        ),
        ("convergence", run.convergence.to_string()),
    ] {
        metrics.add_row(vec![name.to_string(), value]);
    }
    crate::out!("{metrics}");
}
