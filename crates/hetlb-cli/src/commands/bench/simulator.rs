//! `hetlb bench simulator`: events per second of the discrete-event engine as the system
//! grows, for every policy kind, against the same system without balancing.

use super::timing::{Case, Comparison, Machine, Report, interleave, timed};
use crate::input::whole;
use crate::output::{Format, fixed};
use anyhow::{Result, anyhow, bail};
use hetlb_core::Algorithm;
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::topology::TopologySpec;
use hetlb_sim::engine::{Arrivals, Injection, SeriesOptions, Setup};
use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
use hetlb_sim::scenario::{PolicySpec, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// Arguments of `hetlb bench simulator`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Hypercube sizes, as powers of two (10 ≈ 10^3 nodes, 20 ≈ 10^6).
    #[arg(long, value_delimiter = ',', default_values_t = vec![10u32, 13, 17, 20], value_parser = crate::input::whole::<u32>(1, 24))]
    dims: Vec<u32>,
    /// Poisson arrivals per node (rate 0.55 tasks/s, service 1 task/s).
    #[arg(long, default_value_t = 20, value_parser = crate::input::whole::<u64>(1, 1_000_000))]
    arrivals: u64,
    /// The threshold policy balances the whole cube every few arrivals, so its cost grows as
    /// N² log N: it is run up to this dimension only.
    #[arg(long, default_value_t = 17, value_parser = crate::input::whole::<u32>(1, 24))]
    threshold_max_dims: u32,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 3, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Row {
    policy: &'static str,
    nodes: usize,
    events: u64,
    median_seconds: f64,
    events_per_second: f64,
    /// `d log(seconds per event) / d log N` from the previous size.
    per_event_growth_exponent: Option<f64>,
}

#[derive(Serialize)]
struct Details {
    arrivals_per_node: u64,
    rows: Vec<Row>,
}

const KINDS: [&str; 3] = ["none", "delay-aware", "threshold"];

fn scenario(kind: &str, dims: u32, arrivals: u64) -> Result<Scenario> {
    let n = 1usize << dims;
    let network = TopologySpec::Hypercube(dims)
        .build()
        .map_err(|e| anyhow!("--dims: {e}"))?;
    let (links, initial, injections, policy) = match kind {
        "delay-aware" => (
            Links::uniform(
                network,
                LinkParams {
                    rate: 100.0,
                    delay: 0.05,
                    distribution: Distribution::Exponential,
                },
            ),
            vec![5; n],
            // one injection per 100 nodes, spread over nodes and time
            (0..n / 100 + 1)
                .map(|i| Injection {
                    node: (i * 7919) % n,
                    time: 0.25 * i as f64,
                    tasks: 200,
                })
                .collect(),
            PolicySpec::DelayAware {
                compensation: Compensation::Factor,
                carry: hetlb_sim::policy::CarryOut::Centre,
            },
        ),
        "threshold" => (
            Links::uniform(network, LinkParams::INSTANT),
            vec![0; n],
            Vec::new(),
            PolicySpec::Hypercube {
                algorithm: Algorithm::Oem,
                threshold: 3,
            },
        ),
        _ => (
            Links::uniform(network, LinkParams::INSTANT),
            vec![0; n],
            Vec::new(),
            PolicySpec::None,
        ),
    };
    Ok(Scenario {
        name: Some(format!("bench-{kind}-{n}")),
        description: None,
        nodes: Nodes::new(vec![1.0; n], Distribution::Exponential),
        links,
        setup: Setup {
            initial,
            injections,
            arrivals: Some(Arrivals {
                rates: vec![0.55; n],
                per_node: Some(arrivals),
            }),
            seed: 1,
            end_time: None,
            status_interval: (kind == "delay-aware").then_some(5.0),
            series: SeriesOptions {
                enabled: false,
                interval: 0.0,
            },
            check_conservation: false,
        },
        policy,
    })
}

/// Runs `hetlb bench simulator`.
pub fn run(mut a: Args) -> Result<()> {
    a.dims = crate::input::unique(a.dims, "--dims");
    if a.dims.is_empty() || a.dims.iter().any(|&d| !(1..=22).contains(&d)) {
        bail!("--dims: each between 1 and 22");
    }
    if a.arrivals == 0 {
        bail!("--arrivals: must be at least 1");
    }
    let mut scenarios = BTreeMap::new();
    let mut events = BTreeMap::new();
    for &d in &a.dims {
        for kind in KINDS {
            if kind == "threshold" && d > a.threshold_max_dims {
                continue;
            }
            let s = scenario(kind, d, a.arrivals)?;
            let report = s.run().map_err(|e| anyhow!("{e}"))?;
            events.insert((kind, d), report.events);
            scenarios.insert((kind, d), s);
        }
    }
    let cases = scenarios
        .iter()
        .map(|(&(kind, d), s)| {
            Case::new(format!("{kind}/{d}"), move || {
                let (r, secs) = timed(|| black_box(s.run()));
                r.map_err(|e| anyhow!("{e}"))?;
                Ok(secs)
            })
        })
        .collect();
    let samples = interleave(a.repeat, 0, cases)?;
    let mut rows = Vec::new();
    let mut comparisons = Vec::new();
    for kind in KINDS {
        let mut previous: Option<(usize, f64)> = None;
        for &d in &a.dims {
            let Some(&ev) = events.get(&(kind, d)) else {
                continue;
            };
            let name = format!("{kind}/{d}");
            let secs = samples.median(&name);
            let nodes = 1usize << d;
            let per_event = secs / ev as f64;
            let growth =
                previous.map(|(n0, p0)| (per_event / p0).ln() / (nodes as f64 / n0 as f64).ln());
            previous = Some((nodes, per_event));
            rows.push(Row {
                policy: kind,
                nodes,
                events: ev,
                median_seconds: secs,
                events_per_second: ev as f64 / secs,
                per_event_growth_exponent: growth,
            });
            if kind != "none" {
                let none = events[&("none", d)];
                let mut c = Comparison::of(
                    &samples,
                    &format!("{}_{d}", kind.replace('-', "_")),
                    (&name, &format!("{kind}, 2^{d} nodes ({ev} events)")),
                    (
                        &format!("none/{d}"),
                        &format!("no balancing ({none} events)"),
                    ),
                    None,
                );
                // per event, so that the ratio compares costs of one event
                c.kernel_seconds /= ev as f64;
                c.floor_seconds /= none as f64;
                c.kernel_floor_ratio = c.kernel_seconds / c.floor_seconds;
                comparisons.push(c.per(1));
            }
        }
    }
    let report = Report::new(
        "simulator",
        Machine::here(1),
        a.repeat,
        Details {
            arrivals_per_node: a.arrivals,
            rows,
        },
        comparisons,
    );
    if a.format != Format::Table {
        return report.print(a.format, "", &[]);
    }
    crate::out!(
        "Discrete-event engine on hypercubes, {} Poisson arrivals per node (one thread; medians of {})",
        a.arrivals,
        a.repeat
    );
    let mut t = crate::output::table([
        "policy",
        "nodes",
        "events",
        "median s",
        "events/s",
        "growth of time per event",
    ]);
    for r in &report.details.rows {
        t.add_row(vec![
            r.policy.to_string(),
            r.nodes.to_string(),
            r.events.to_string(),
            fixed(r.median_seconds, 3),
            format!("{:.3e}", r.events_per_second),
            r.per_event_growth_exponent
                .map_or(String::new(), |g| format!("N^{}", fixed(g, 2))),
        ]);
    }
    crate::out!("{t}");
    report.print(
        Format::Table,
        "Cost per event against the same system without balancing",
        &[],
    )
}
