//! `hetlb balance`: one load vector, one algorithm, the plan and its metrics.

use crate::input::{parse_capacities, parse_loads};
use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Context, Result, anyhow};
use hetlb_core::{Algorithm, BalanceOptions, Capacities, Metrics, Plan, Transfer, balance};
use serde::Serialize;

/// Arguments of `hetlb balance`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb balance --algorithm oem --loads 4,7,0,9,2,2,8,1\n  hetlb balance --algorithm dem-hetero --loads 640,960 --capacities 64,32 --format json\n  hetlb balance --algorithm hybrid --procs-per-group 4 --loads @loads.txt"
)]
pub struct Args {
    /// Algorithm: dem, dem-fixed, dem-improved, dem-hetero, oem, cwa, hybrid.
    #[arg(long, short)]
    algorithm: String,
    /// Loads, one per node (a power of two of them): `5,0,3,…`, or `@path` to a file of one
    /// integer per line or a JSON array.
    #[arg(long, short, allow_hyphen_values = true)]
    loads: String,
    /// Node capacities (positive speeds), same count as loads: `1,2,…` or `@path`.
    #[arg(long, short, allow_hyphen_values = true)]
    capacities: Option<String>,
    /// P for `hybrid`: OEM inside groups of P nodes, then CWA across groups.
    #[arg(long, value_name = "P")]
    procs_per_group: Option<usize>,
    /// Output format. CSV lists the transfers: phase, dimension, from, to, units.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Report<'a> {
    algorithm: Algorithm,
    nodes: usize,
    total: u64,
    capacities: Option<&'a [f64]>,
    initial: &'a [u64],
    #[serde(rename = "final")]
    final_loads: &'a [u64],
    phases: Vec<&'a [Transfer]>,
    phase_dimensions: Vec<Option<u32>>,
    metrics: &'a Metrics,
}

/// Runs `hetlb balance`.
pub fn run(args: Args) -> Result<()> {
    let algorithm: Algorithm = args.algorithm.parse().context("--algorithm")?;
    let loads = parse_loads(&args.loads, "--loads")?;
    let capacities = args
        .capacities
        .as_deref()
        .map(|spec| -> Result<Capacities> {
            let values = parse_capacities(spec, "--capacities")?;
            Capacities::for_nodes(values, loads.len()).map_err(|e| anyhow!("--capacities: {e}"))
        })
        .transpose()?;
    if capacities.is_some() && !algorithm.uses_capacities() {
        eprintln!(
            "note: {algorithm} does not use capacities; they only weight the metrics (use dem-hetero, cwa or hybrid)"
        );
    }
    let options = BalanceOptions {
        capacities,
        procs_per_group: args.procs_per_group,
    };
    let plan = balance(algorithm, &loads, &options).map_err(|e| {
        let field = match &e {
            hetlb_core::BalanceError::Model(hetlb_core::ModelError::GroupSize { .. })
            | hetlb_core::BalanceError::GroupSizeUnused(_) => "--procs-per-group",
            hetlb_core::BalanceError::Model(hetlb_core::ModelError::CapacityCount { .. }) => {
                "--capacities"
            }
            _ => "--loads",
        };
        anyhow!("{field}: {e}")
    })?;
    let metrics = Metrics::of(&plan, options.capacities.as_ref());
    match args.format {
        Format::Json => print_json(&Report {
            algorithm,
            nodes: plan.nodes(),
            total: plan.initial.iter().sum(),
            capacities: options.capacities.as_ref().map(Capacities::as_slice),
            initial: &plan.initial,
            final_loads: &plan.final_loads,
            phases: plan.phases.iter().map(|p| p.transfers.as_slice()).collect(),
            phase_dimensions: plan.phases.iter().map(|p| p.dimension).collect(),
            metrics: &metrics,
        }),
        Format::Csv => print_csv(
            &["phase", "dimension", "from", "to", "units"],
            plan.phases.iter().enumerate().flat_map(|(i, p)| {
                p.transfers.iter().map(move |t| {
                    [
                        i.to_string(),
                        p.dimension.map(|d| d.to_string()).unwrap_or_default(),
                        t.from.to_string(),
                        t.to.to_string(),
                        t.units.to_string(),
                    ]
                })
            }),
        ),
        Format::Table => {
            print_table(algorithm, &plan, &metrics);
            Ok(())
        }
    }
}

/// Loads shown in full up to this many nodes; longer vectors are abbreviated.
const SHOWN_NODES: usize = 16;

fn abbreviate(loads: &[u64]) -> String {
    let shown: Vec<String> = loads.iter().take(SHOWN_NODES).map(u64::to_string).collect();
    if loads.len() > SHOWN_NODES {
        format!("{} … ({} nodes)", shown.join(" "), loads.len())
    } else {
        shown.join(" ")
    }
}

fn print_table(algorithm: Algorithm, plan: &Plan, m: &Metrics) {
    let total: u64 = plan.initial.iter().sum();
    println!(
        "{algorithm} on {} nodes, {total} units — {} [{}]",
        plan.nodes(),
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
    let mut loads = plan.initial.clone();
    phases.add_row(vec![
        "start".to_string(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        abbreviate(&loads),
    ]);
    for (i, p) in plan.phases.iter().enumerate() {
        for t in &p.transfers {
            loads[t.from] -= t.units;
            loads[t.to] += t.units;
        }
        phases.add_row(vec![
            i.to_string(),
            p.dimension.map(|d| d.to_string()).unwrap_or_default(),
            p.transfers.len().to_string(),
            p.transfers.iter().map(|t| t.units).sum::<u64>().to_string(),
            p.transfers
                .iter()
                .map(|t| t.units)
                .max()
                .unwrap_or(0)
                .to_string(),
            abbreviate(&loads),
        ]);
    }
    println!("{phases}");
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
    ] {
        metrics.add_row(vec![name.to_string(), value]);
    }
    println!("{metrics}");
}
