//! `hetlb replay`: other rules, offline, on the rebalances a run recorded with `--dump`.
//!
//! Every line of the dump holds what the rule saw at one rebalance (loads per rank, the
//! capacities it used, the topology). Each rule named with `--algorithm` is run on exactly
//! those inputs by the core's planner (`hetlb_runtime::workload::iterative::replay`), and the
//! outcomes are printed side by side with what the recorded run did: imbalance after, units
//! moved, task-hops and Σ Tmax (Rim, Jang & Kim 2003, §5.2).

use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::advice::Trigger;
use hetlb_core::algorithm::Algorithm;
use hetlb_core::topology::{Graph, GraphError, Network, Topology, TopologySpec};
use hetlb_peer::default_candidates;
use hetlb_runtime::workload::iterative::dump::{self, DumpLine};
use hetlb_runtime::workload::iterative::replay::{self, ReplayError, ReplayOutcome};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::PathBuf;

/// The largest dump read (bytes).
const MAX_DUMP_BYTES: u64 = 1 << 30;
/// Bytes held per rank of a step while it is replayed: its vectors (loads before and after,
/// capacities, the speeds), the network's state and one rule's round engine.
const BYTES_PER_RANK: u128 = 256;

/// Arguments of `hetlb replay`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run iterative --algorithm dishet --workers 8 --drift hotspot:6 --dump steps.jsonl\n  \
    hetlb replay steps.jsonl --algorithm dishet,diffusion,gdem,cwa\n  \
    hetlb replay steps.jsonl --algorithm all --format json\n  \
    hetlb replay steps.jsonl --trigger auto:10 --move-cost 1e-4,1e-6")]
pub struct Args {
    /// A dump written by `hetlb run iterative --dump` (one JSON object a line).
    file: PathBuf,
    /// Rules to replay, comma-separated, or `all` (every rule that fits the topology).
    #[arg(long, short, default_value = "all", value_name = "ALG[,ALG…]|all")]
    algorithm: String,
    /// Also show what rule `auto` with this trigger would have decided at every step
    /// (`always` or `auto[:HORIZON[:MARGIN]]`), from the speeds the run measured.
    #[arg(long, value_name = "always|auto[:H[:M]]")]
    trigger: Option<String>,
    /// The move's cost that `--trigger` weighs: seconds per message and per unit of load.
    #[arg(
        long,
        value_name = "ALPHA,BETA",
        default_value = "0,0",
        allow_hyphen_values = true
    )]
    move_cost: String,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb replay`.
pub fn run(args: Args) -> Result<()> {
    let path = &args.file;
    let file = crate::input::open_regular(path, MAX_DUMP_BYTES)
        .with_context(|| format!("file: cannot read '{}'", path.display()))?;
    let size = file.metadata().map_or(0, |m| m.len());
    // Every recorded value (8 bytes) from about as many bytes of text, kept for every step.
    crate::limits::check(
        "file",
        &format!("replaying '{}' ({size} bytes)", path.display()),
        u128::from(size) * 3,
    )?;
    let mut steps = Vec::new();
    let mut lines = dump::read(BufReader::new(file));
    while let Some(r) = lines.next() {
        let r = r
            .map_err(anyhow::Error::new)
            .with_context(|| format!("file: {}", path.display()))?;
        crate::limits::check(
            "file",
            &format!(
                "line {}: a step of {} ranks",
                lines.line(),
                r.loads_before.len()
            ),
            r.loads_before.len() as u128 * BYTES_PER_RANK,
        )?;
        steps.push(r);
    }
    if steps.is_empty() {
        bail!("file: '{}' holds no recorded rebalance", path.display());
    }
    let trigger: Option<Trigger> = args
        .trigger
        .as_deref()
        .map(|t| t.parse().map_err(|e| anyhow!("--trigger: {e}")))
        .transpose()?;
    let move_cost = hetlb_peer::options::parse_move_cost(&args.move_cost)
        .map_err(|e| anyhow!("--move-cost: {e}"))?;
    let mut networks: HashMap<String, Network> = HashMap::new();
    let mut outcomes = Vec::new();
    let mut decisions = Vec::new();
    for r in &steps {
        if !networks.contains_key(&r.topology) {
            let n = build(&r.topology, r.loads_before.len())?;
            networks.insert(r.topology.clone(), n);
        }
        let network = &networks[&r.topology];
        let rules = rules(&args.algorithm, network)?;
        let within = crate::limits::transfers_within(r.loads_before.len() as u128 * BYTES_PER_RANK);
        let replayed = replay::step(r, network, &rules, within).map_err(|e| match e {
            ReplayError::Rule { step, rule, source } => {
                crate::limits::round_error(source, &format!("step {step}: {rule}"), "file")
            }
            other => anyhow::Error::new(other).context("file"),
        })?;
        outcomes.extend(replayed);
        if let Some(trigger) = trigger {
            let candidates = default_candidates(network);
            let d = replay::auto_step(r, network, &candidates, trigger, move_cost, within)
                .map_err(|e| anyhow::Error::new(e).context("file"))?;
            decisions.extend(d);
        }
    }
    if trigger.is_some() && decisions.is_empty() {
        bail!(
            "--trigger: '{}' recorded no measured speeds, so there is nothing to predict \
             (record with --speeds measured)",
            path.display()
        );
    }
    match args.format {
        Format::Json if trigger.is_some() => print_json(&serde_json::json!({
            "steps": steps.len(),
            "outcomes": outcomes,
            "auto": decisions,
        })),
        Format::Json => {
            print_json(&serde_json::json!({ "steps": steps.len(), "outcomes": outcomes }))
        }
        Format::Csv if trigger.is_some() => {
            crate::output::print_table_csv(&replay::decisions_csv(&decisions))
        }
        Format::Csv => print_csv(
            &[
                "step",
                "algorithm",
                "recorded",
                "imbalance_before",
                "imbalance_after",
                "units_moved",
                "task_hops",
                "sum_tmax",
                "phases",
            ],
            outcomes.iter().map(|o| {
                vec![
                    o.step.to_string(),
                    o.algorithm.clone(),
                    o.recorded.to_string(),
                    format!("{:.6}", o.imbalance_before),
                    format!("{:.6}", o.imbalance_after),
                    o.units_moved.to_string(),
                    o.task_hops.map_or(String::new(), |x| x.to_string()),
                    o.sum_tmax.map_or(String::new(), |x| x.to_string()),
                    o.phases.map_or(String::new(), |x| x.to_string()),
                ]
            }),
        ),
        Format::Table => {
            print_table(&steps, &outcomes);
            if let Some(trigger) = trigger {
                crate::output::print_text(&replay::decisions_text(&decisions, trigger));
            }
            Ok(())
        }
    }
}

/// The network a step names. A `file:` topology is read as `--topology` reads it (a regular
/// file, bounded), and since a dump may come from someone else, an error about the file
/// names where it is wrong but never echoes what it holds.
fn build(spec: &str, nodes: usize) -> Result<Network> {
    let parsed: TopologySpec = spec.parse().map_err(|e| anyhow!("topology: {e}"))?;
    if let Some((n, arcs)) = parsed.size_estimate() {
        crate::limits::check(
            "file",
            &format!("the recorded topology {parsed}"),
            (n + 1 + arcs) * 8,
        )?;
    }
    let network = match &parsed {
        TopologySpec::File(path) => {
            let text = crate::input::read_text(std::path::Path::new(path), "file", 8)
                .map_err(|e| anyhow!("topology: cannot read '{path}' named in the dump: {e:#}"))?;
            let graph = Graph::parse(&text, Some(nodes)).map_err(|e| {
                let place = match &e {
                    GraphError::At { at, .. } => format!(" ({at})"),
                    _ => String::new(),
                };
                match e.kind() {
                    GraphError::Syntax(_) => {
                        anyhow!("topology: '{path}' named in the dump is not a graph file{place}")
                    }
                    other => anyhow!("topology: '{path}' named in the dump: {other}{place}"),
                }
            })?;
            Network::from_graph(graph)
        }
        _ => parsed
            .build()
            .map_err(|e| anyhow!("topology: {parsed}: {e}"))?,
    };
    if network.node_count() != nodes {
        bail!(
            "topology: {spec} has {} nodes but the step has {nodes} loads",
            network.node_count()
        );
    }
    Ok(network)
}

/// The rules `--algorithm` names, each fitting the recorded network, or `all` that fit.
fn rules(spec: &str, network: &Network) -> Result<Vec<Algorithm>> {
    if spec == "all" {
        return Ok(replay::rules_for(network));
    }
    spec.split(',')
        .map(|s| {
            let a: Algorithm = s.trim().parse().map_err(|e| anyhow!("--algorithm: {e}"))?;
            replay::check_rule(a, network).map_err(|e| anyhow!("--algorithm: {e}"))?;
            Ok(a)
        })
        .collect()
}

fn print_table(steps: &[DumpLine], outcomes: &[ReplayOutcome]) {
    crate::out!(
        "{} recorded rebalance(s) of {} on {} ({} ranks), replayed:",
        steps.len(),
        steps[0].algorithm,
        steps[0].topology,
        steps[0].loads_before.len()
    );
    let mut t = table([
        "step",
        "algorithm",
        "imbalance before",
        "after",
        "units moved",
        "task-hops",
        "Σ Tmax",
        "phases",
    ]);
    for o in outcomes {
        t.add_row(vec![
            o.step.to_string(),
            o.algorithm.clone(),
            fixed(o.imbalance_before, 3),
            fixed(o.imbalance_after, 3),
            o.units_moved.to_string(),
            o.task_hops.map_or("–".into(), |x| x.to_string()),
            o.sum_tmax.map_or("–".into(), |x| x.to_string()),
            o.phases.map_or("–".into(), |x| x.to_string()),
        ]);
    }
    crate::out!("{t}");
    let mut s = table([
        "algorithm",
        "mean imbalance after",
        "mean units moved",
        "mean task-hops",
        "mean Σ Tmax",
    ]);
    let opt = |x: Option<f64>| x.map_or("–".into(), |x| fixed(x, 3));
    for m in replay::means(outcomes) {
        s.add_row(vec![
            m.algorithm,
            fixed(m.imbalance_after, 3),
            fixed(m.units_moved, 1),
            opt(m.task_hops),
            opt(m.sum_tmax),
        ]);
    }
    crate::out!("{s}");
}
