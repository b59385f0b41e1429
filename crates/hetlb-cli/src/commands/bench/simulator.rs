//! `hetlb bench simulator`: the discrete-event engine's cost per event as the cube grows, for
//! every policy kind, with an optional chart of that cost against the number of nodes.

use super::{flagged, print_report};
use crate::input::whole;
use crate::output::{Format, fixed, table};
use crate::plot::{Axes, Series};
use crate::progress::counter;
use anyhow::Result;
use hetlb_bench::simulator::{KINDS, MAX_DIMS, SimulatorConfig};
use std::path::PathBuf;

/// Arguments of `hetlb bench simulator`.
#[derive(Debug, clap::Args)]
pub struct Simulator {
    /// Hypercube sizes, as powers of two (10 ≈ 10^3 nodes, 20 ≈ 10^6).
    #[arg(long, value_delimiter = ',', default_values_t = vec![10u32, 13, 17, 20], value_parser = whole::<u32>(1, 24))]
    dims: Vec<u32>,
    /// Poisson arrivals per node (rate 0.55 tasks/s, service 1 task/s), at most: a large cube
    /// gets fewer (at least one) so that a run has at most --max-arrivals in all.
    #[arg(long, default_value = "20", value_parser = whole::<u64>(1, 1_000_000))]
    arrivals: u64,
    /// The most Poisson arrivals of one run (nodes × arrivals per node), so that every size
    /// runs about as many events.
    #[arg(long, default_value_t = 1 << 21, value_parser = whole::<u64>(1, 1 << 40))]
    max_arrivals: u64,
    /// Policy kinds to time (none, delay-aware, diffusion, threshold); all by default.
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(KINDS))]
    policies: Vec<String>,
    /// The threshold policy is run up to this dimension only.
    #[arg(long, default_value_t = MAX_DIMS, value_parser = whole::<u32>(1, 24))]
    threshold_max_dims: u32,
    /// Timed samples of each case (interleaved; a sample repeats a run shorter than 50 ms on
    /// new engines and takes the mean); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value = "3", value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Also draw the nanoseconds per event against the number of nodes, one line per policy
    /// kind, to this SVG or PNG file.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

const REPETITIONS: &str = "benchmark repetitions";

/// Runs `hetlb bench simulator`.
pub fn run(a: Simulator) -> Result<()> {
    let mut cfg = SimulatorConfig::default();
    cfg.dims = crate::input::unique(a.dims, "--dims");
    (cfg.arrivals, cfg.threshold_max_dims, cfg.repeat) =
        (a.arrivals, a.threshold_max_dims, a.repeat);
    cfg.max_arrivals = a.max_arrivals;
    if !a.policies.is_empty() {
        cfg.kinds = KINDS
            .into_iter()
            .filter(|k| a.policies.iter().any(|p| p == k))
            .collect();
    }
    crate::limits::check(
        "--dims",
        "keeping every simulated cube (one runs at a time)",
        cfg.memory_needed(),
    )?;
    let report = hetlb_bench::simulator::run(&cfg, &mut counter(REPETITIONS)).map_err(flagged)?;
    if let Some(path) = &a.plot {
        let series: Vec<Series> = KINDS
            .iter()
            .map(|&kind| {
                let points = report
                    .details
                    .rows
                    .iter()
                    .filter(|r| r.policy == kind)
                    .map(|r| (r.nodes as f64, r.nanoseconds_per_event))
                    .collect();
                Series::new(kind, points)
            })
            .filter(|s| !s.points.is_empty())
            .collect();
        let axes = Axes::new("nodes", "nanoseconds per event").log2_x();
        crate::plot::line_chart_with(path, "Simulator: cost per event", &axes, &series)?;
        crate::plot::notice(std::slice::from_ref(path));
    }
    if a.format != Format::Table {
        return print_report(&report, a.format, "", &[]);
    }
    crate::out!(
        "Discrete-event engine on hypercubes, up to {} Poisson arrivals per node and {} per run (one thread; medians of {} samples, a sample the mean of runs making at least {} ms; the event loop timed, the engine's setup apart)",
        a.arrivals,
        a.max_arrivals,
        a.repeat,
        hetlb_bench::simulator::MIN_SAMPLE_SECONDS * 1e3
    );
    let mut t = table([
        "policy",
        "nodes",
        "arrivals/node",
        "events",
        "median s",
        "runs/sample",
        "setup s",
        "events/s",
        "ns/event",
        "growth of time per event",
        "bytes/node",
    ]);
    for r in &report.details.rows {
        t.add_row(vec![
            r.policy.to_string(),
            r.nodes.to_string(),
            r.arrivals_per_node.to_string(),
            r.events.to_string(),
            fixed(r.median_seconds, 3),
            r.runs_per_sample.to_string(),
            fixed(r.setup_seconds, 3),
            format!("{:.3e}", r.events_per_second),
            fixed(r.nanoseconds_per_event, 0),
            r.per_event_growth_exponent
                .map_or(String::new(), |g| format!("N^{}", fixed(g, 2))),
            fixed(r.bytes_per_node, 0),
        ]);
    }
    crate::out!("{t}");
    print_report(
        &report,
        Format::Table,
        "Cost per event against the same system without balancing",
        &[],
    )
}
