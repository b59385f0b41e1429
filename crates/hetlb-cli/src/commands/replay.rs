//! `hetlb replay`: other rules, offline, on the rebalances a run recorded with `--dump`.
//!
//! Every line of the dump holds what the rule saw at one rebalance (loads per rank, the
//! capacities it used, the topology). Each rule named with `--algorithm` is run on exactly
//! those inputs by the core's planner, and the outcomes are printed side by side with what the
//! recorded run did: imbalance after, units moved, task-hops and Σ Tmax (Rim et al. §5.2).

use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::Metrics;
use hetlb_core::model::Capacities;
use hetlb_core::network_algorithm::{NetworkAlgorithm, NetworkOptions, balance_on_within};
use hetlb_core::topology::{Graph, GraphError, Network, Topology, TopologySpec};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

/// The largest dump read (bytes).
const MAX_DUMP_BYTES: u64 = 1 << 30;
/// The longest line of a dump (bytes): a step of 2^20 ranks takes about 40 MiB.
const MAX_LINE_BYTES: u64 = 64 << 20;
/// The most ranks a recorded step may have.
const MAX_RANKS: usize = 1 << 20;
/// Bytes held per rank of a step while it is replayed: its vectors (loads before and after,
/// capacities, the speeds), the network's state and one rule's round engine.
const BYTES_PER_RANK: u128 = 256;

/// Arguments of `hetlb replay`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run iterative --balancer dishet --workers 8 --drift hotspot:6 --dump steps.jsonl\n  \
    hetlb replay steps.jsonl --algorithm dishet,diffusion,gdem,cwa\n  \
    hetlb replay steps.jsonl --algorithm all --format json")]
pub struct Args {
    /// A dump written by `hetlb run iterative --dump` (one JSON object a line).
    file: PathBuf,
    /// Rules to replay, comma-separated, or `all` (every rule that fits the topology).
    #[arg(long, short, default_value = "all", value_name = "ALG[,ALG…]|all")]
    algorithm: String,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// One recorded rebalance.
#[derive(Debug, Deserialize)]
struct Recorded {
    step: u64,
    algorithm: String,
    topology: String,
    capacities: Vec<f64>,
    loads_before: Vec<u64>,
    loads_after: Vec<u64>,
}

/// One rule's outcome on one step.
#[derive(Debug, Clone, Serialize)]
struct Outcome {
    step: u64,
    algorithm: String,
    recorded: bool,
    imbalance_before: f64,
    imbalance_after: f64,
    units_moved: u64,
    task_hops: Option<u128>,
    sum_tmax: Option<u128>,
    phases: Option<usize>,
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
    let mut reader = BufReader::new(file);
    let mut steps = Vec::new();
    let mut line = String::new();
    for i in 0.. {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES + 1)
            .read_line(&mut line)
            .with_context(|| format!("file: {}: line {}", path.display(), i + 1))?;
        if read == 0 {
            break;
        }
        if read as u64 > MAX_LINE_BYTES {
            bail!(
                "file: {}: line {}: longer than {} MiB; not a dump of `hetlb run iterative`",
                path.display(),
                i + 1,
                MAX_LINE_BYTES >> 20
            );
        }
        if line.trim().is_empty() {
            continue;
        }
        let r: Recorded = serde_json::from_str(&line)
            .map_err(|e| anyhow!("file: {}: line {}: {e}", path.display(), i + 1))?;
        check(&r).map_err(|e| anyhow!("file: {}: line {}: {e}", path.display(), i + 1))?;
        crate::limits::check(
            "file",
            &format!("line {}: a step of {} ranks", i + 1, r.loads_before.len()),
            r.loads_before.len() as u128 * BYTES_PER_RANK,
        )?;
        steps.push(r);
    }
    if steps.is_empty() {
        bail!("file: '{}' holds no recorded rebalance", path.display());
    }
    let mut networks: HashMap<String, Network> = HashMap::new();
    let mut outcomes = Vec::new();
    for r in &steps {
        if !networks.contains_key(&r.topology) {
            let n = build(&r.topology, r.loads_before.len())?;
            networks.insert(r.topology.clone(), n);
        }
        let network = &networks[&r.topology];
        let algorithms = algorithms(&args.algorithm, network)?;
        let caps = &r.capacities;
        let before = hetlb_runtime::peer::imbalance(&r.loads_before, caps);
        outcomes.push(Outcome {
            step: r.step,
            algorithm: format!("{} (recorded)", r.algorithm),
            recorded: true,
            imbalance_before: before,
            imbalance_after: hetlb_runtime::peer::imbalance(&r.loads_after, caps),
            units_moved: r
                .loads_before
                .iter()
                .zip(&r.loads_after)
                .map(|(&b, &a)| a.saturating_sub(b))
                .sum(),
            task_hops: None,
            sum_tmax: None,
            phases: None,
        });
        for a in algorithms {
            let capacities = Some(
                Capacities::new(caps.clone())
                    .map_err(|e| anyhow!("file: step {}: capacities: {e}", r.step))?,
            );
            let run = balance_on_within(
                network,
                a,
                &r.loads_before,
                &NetworkOptions {
                    capacities: capacities.clone(),
                    ..NetworkOptions::default()
                },
                crate::limits::transfers_within(r.loads_before.len() as u128 * BYTES_PER_RANK),
            )
            .map_err(|e| crate::limits::round_error(e, &format!("step {}: {a}", r.step), "file"))?;
            let m = Metrics::of(&run.plan, capacities.as_ref());
            outcomes.push(Outcome {
                step: r.step,
                algorithm: a.name().to_string(),
                recorded: false,
                imbalance_before: before,
                imbalance_after: m.weighted_imbalance,
                units_moved: m.units_moved,
                task_hops: Some(m.task_hops),
                sum_tmax: Some(m.sum_tmax),
                phases: Some(m.phases),
            });
        }
    }
    match args.format {
        Format::Json => {
            print_json(&serde_json::json!({ "steps": steps.len(), "outcomes": outcomes }))
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
            Ok(())
        }
    }
}

fn check(r: &Recorded) -> Result<()> {
    let n = r.loads_before.len();
    if n == 0 {
        bail!("loads_before: empty");
    }
    if n > MAX_RANKS {
        bail!("loads_before: {n} ranks, more than the {MAX_RANKS} a replay handles");
    }
    if r.loads_after.len() != n {
        bail!("loads_after: {} values for {n} ranks", r.loads_after.len());
    }
    if r.capacities.len() != n {
        bail!("capacities: {} values for {n} ranks", r.capacities.len());
    }
    if let Some(i) = r
        .capacities
        .iter()
        .position(|c| !(c.is_finite() && *c > 0.0))
    {
        bail!("capacities: value {} must be positive and finite", i + 1);
    }
    Ok(())
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

fn algorithms(spec: &str, network: &Network) -> Result<Vec<NetworkAlgorithm>> {
    let cube = matches!(network, Network::Hypercube(_));
    if spec == "all" {
        return Ok(NetworkAlgorithm::all()
            .filter(|a| cube || !a.needs_hypercube())
            .collect());
    }
    spec.split(',')
        .map(|s| {
            let a: NetworkAlgorithm = s.trim().parse().map_err(|e| anyhow!("--algorithm: {e}"))?;
            if a.needs_hypercube() && !cube {
                bail!(
                    "--algorithm: {a} runs on a hypercube only, and the recorded ranks are not one"
                );
            }
            Ok(a)
        })
        .collect()
}

fn print_table(steps: &[Recorded], outcomes: &[Outcome]) {
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
    // Means per rule over the steps.
    let mut names: Vec<&str> = Vec::new();
    for o in outcomes {
        if !names.contains(&o.algorithm.as_str()) {
            names.push(&o.algorithm);
        }
    }
    let mut s = table([
        "algorithm",
        "mean imbalance after",
        "mean units moved",
        "mean task-hops",
        "mean Σ Tmax",
    ]);
    for name in names {
        let rows: Vec<&Outcome> = outcomes.iter().filter(|o| o.algorithm == name).collect();
        let n = rows.len() as f64;
        let mean = |f: &dyn Fn(&Outcome) -> Option<f64>| -> String {
            let v: Vec<f64> = rows.iter().filter_map(|o| f(o)).collect();
            if v.is_empty() {
                "–".into()
            } else {
                fixed(v.iter().sum::<f64>() / v.len() as f64, 3)
            }
        };
        s.add_row(vec![
            name.to_string(),
            fixed(rows.iter().map(|o| o.imbalance_after).sum::<f64>() / n, 3),
            fixed(
                rows.iter().map(|o| o.units_moved as f64).sum::<f64>() / n,
                1,
            ),
            mean(&|o| o.task_hops.map(|x| x as f64)),
            mean(&|o| o.sum_tmax.map(|x| x as f64)),
        ]);
    }
    crate::out!("{s}");
}
