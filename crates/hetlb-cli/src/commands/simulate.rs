//! `hetlb simulate SCENARIO.toml`: run one discrete-event scenario.

use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::queues::plot_queues;
use anyhow::{Context, Result};
use hetlb_sim::{Report, Scenario};
use std::path::{Path, PathBuf};

/// Arguments of `hetlb simulate`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb simulate examples/scenarios/mirtaheri-balanced.toml\n  hetlb simulate examples/scenarios/mirtaheri-compensated.toml --plot queues.svg\n  hetlb simulate examples/scenarios/rim-dynamic.toml --seed 7 --format json"
)]
pub struct Args {
    /// The scenario file (TOML); see examples/scenarios/.
    scenario: PathBuf,
    /// Output format. CSV has one row per node and a first row `all` for the totals.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
    /// Write every node's queue length over time to this SVG or PNG file.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Override the scenario's seed.
    #[arg(long, value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: Option<u64>,
    /// Recount every task after every event (slow on large scenarios).
    #[arg(long)]
    check: bool,
    /// Add every node's queue-length series (and the tasks on links over time) to the JSON,
    /// when the scenario records them; refused above --max-output.
    #[arg(long)]
    series: bool,
    /// Write a trace of the run in simulated time (Trace Event JSON: open it in
    /// ui.perfetto.dev, or make a report of it with `hetlb report`): every node's queue
    /// length, the imbalance, the run of each node and the delay-aware decisions with an
    /// arrow per transfer. Refused above --max-output.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// The trace's event limit: past it, counter samples are thinned and other events
    /// dropped (the file says so).
    #[arg(long, value_name = "N", default_value_t = hetlb_trace::DEFAULT_EVENT_LIMIT,
        value_parser = crate::input::whole::<usize>(16, 1 << 40))]
    trace_events: usize,
}

/// Runs `hetlb simulate`.
pub fn run(args: Args) -> Result<()> {
    let mut scenario = Scenario::from_path_within(&args.scenario, crate::limits::bytes())
        .map_err(|e| crate::limits::scenario_error(&args.scenario, e))?;
    if let Some(seed) = args.seed {
        scenario.setup.seed = seed;
    }
    scenario.setup.check_conservation |= args.check;
    scenario.setup.series.enabled |= args.plot.is_some() || args.trace.is_some();
    if let Some(path) = &args.trace {
        crate::trace_out::check_target(path, args.trace_events, 1)?;
    }
    crate::limits::check(
        &args.scenario.display().to_string(),
        "the run (every task is a queue entry; queue lengths are recorded unless \
         [output] series = false)",
        scenario.memory_estimate(),
    )?;
    let spinner = crate::progress::spinner(format!("simulating {}", args.scenario.display()));
    let report = scenario
        .run()
        .with_context(|| args.scenario.display().to_string())?;
    spinner.finish_and_clear();
    if !(report.makespan.is_finite() && report.total_idle.is_finite()) {
        anyhow::bail!(
            "{}: the run's times are not finite numbers (makespan {}): rates or times too far \
             apart for a double",
            args.scenario.display(),
            report.makespan
        );
    }
    if let Some(path) = &args.plot {
        let title = scenario
            .name
            .clone()
            .unwrap_or_else(|| args.scenario.display().to_string());
        plot_queues(
            path,
            &format!("{title} — {}, seed {}", report.policy, report.seed),
            &report,
            |i| format!("node {i}"),
        )?;
        crate::plot::notice(std::slice::from_ref(path));
    }
    if let Some(path) = &args.trace {
        let trace = crate::trace_out::simulated(
            &report,
            args.trace_events,
            &args.scenario.display().to_string(),
        );
        crate::trace_out::write(path, &trace)?;
    }
    let mut report = report;
    let samples: usize =
        report.series.iter().map(Vec::len).sum::<usize>() + report.transit_series.len();
    if args.series && args.format == Format::Json {
        crate::limits::check_output(
            "--series",
            &format!("{samples} queue-length samples"),
            samples as u128 * 40,
        )?;
    } else {
        // The summary and the per-node figures; the series only on request.
        report.series.clear();
        report.transit_series.clear();
    }
    match args.format {
        Format::Json => print_json(&report),
        Format::Csv => print_csv(
            &[
                "node",
                "finish",
                "busy",
                "idle",
                "executed",
                "sent",
                "received",
                "final_load",
            ],
            std::iter::once([
                "all".to_string(),
                report.makespan.to_string(),
                report.nodes.iter().map(|n| n.busy).sum::<f64>().to_string(),
                report.total_idle.to_string(),
                report.executed.to_string(),
                report.tasks_moved.to_string(),
                report.tasks_moved.to_string(),
                (report.queued_at_end + report.in_transit_at_end).to_string(),
            ])
            .chain(report.nodes.iter().map(|n| {
                [
                    n.node.to_string(),
                    n.finish.to_string(),
                    n.busy.to_string(),
                    n.idle.to_string(),
                    n.executed.to_string(),
                    n.sent.to_string(),
                    n.received.to_string(),
                    n.final_load.to_string(),
                ]
            })),
        ),
        Format::Table => {
            print_summary(&scenario, &args.scenario, &report);
            Ok(())
        }
    }
}

/// Nodes listed in the per-node table; larger runs show only the summary.
const SHOWN_NODES: usize = 64;

fn print_summary(scenario: &Scenario, path: &Path, r: &Report) {
    crate::out!(
        "{} — {} nodes, policy {}, seed {}",
        scenario
            .name
            .clone()
            .unwrap_or_else(|| path.display().to_string()),
        r.nodes.len(),
        r.policy,
        r.seed
    );
    if let Some(d) = &scenario.description {
        crate::out!("{d}");
    }
    let mut summary = table(["metric", "value"]);
    let mut rows = vec![
        ("makespan (s)", fixed(r.makespan, 4)),
        ("total idle (s)", fixed(r.total_idle, 4)),
        ("tasks moved", r.tasks_moved.to_string()),
        ("transfers", r.transfers.to_string()),
        ("events processed", r.events.to_string()),
        ("cancelled completions", r.cancelled_events.to_string()),
        (
            "tasks: initial + injected + arrived",
            format!("{} + {} + {}", r.initial, r.injected, r.arrived),
        ),
        ("tasks executed", r.executed.to_string()),
    ];
    if r.queued_at_end + r.in_transit_at_end > 0 {
        rows.push((
            "left at the end (queued, in transit)",
            format!("{}, {}", r.queued_at_end, r.in_transit_at_end),
        ));
    }
    if let Some(t) = r.mean_response_time {
        rows.push(("mean response time (s)", fixed(t, 4)));
    }
    let s = &r.policy_stats;
    if s.balancings > 0 {
        rows.push(("balancing operations", s.balancings.to_string()));
    }
    if let Some(d) = s.mean_max_difference_after {
        rows.push(("mean max difference after balancing", fixed(d, 4)));
    }
    for (name, value) in rows {
        summary.add_row(vec![name.to_string(), value]);
    }
    crate::out!("{summary}");
    if !s.decisions.is_empty() {
        let mut t = table([
            "time (s)",
            "from",
            "to",
            "share p",
            "planned",
            "k",
            "sent",
            "arrival (s)",
        ]);
        for d in &s.decisions {
            for x in &d.transfers {
                t.add_row(vec![
                    fixed(d.time, 4),
                    x.from.to_string(),
                    x.to.to_string(),
                    fixed(x.share, 4),
                    x.planned.to_string(),
                    fixed(x.factor, 4),
                    x.tasks.to_string(),
                    fixed(d.time + x.arrival, 4),
                ]);
            }
        }
        crate::out!("{t}");
    }
    if r.nodes.len() <= SHOWN_NODES {
        let mut t = table([
            "node",
            "finish (s)",
            "busy (s)",
            "idle (s)",
            "waiting (s)",
            "executed",
            "sent",
            "received",
        ]);
        for n in &r.nodes {
            t.add_row(vec![
                n.node.to_string(),
                fixed(n.finish, 4),
                fixed(n.busy, 4),
                fixed(n.idle, 4),
                fixed(n.waiting, 4),
                n.executed.to_string(),
                n.sent.to_string(),
                n.received.to_string(),
            ]);
        }
        crate::out!("{t}");
    }
}
