//! `hetlb advise`: whether a move pays, with which rule and which routing, before anything
//! moves.

use crate::input::{parse_capacities, parse_loads, real, whole};
use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Result, anyhow, bail};
use hetlb_core::Algorithm;
use hetlb_core::advice::{Advice, CostModel, Question, Trigger, advise};
use hetlb_core::advice_request::per_node_speeds;
use hetlb_core::routing::Routing;
use hetlb_core::topology::{Network, Topology, TopologySpec};
use serde::Serialize;

/// Arguments of `hetlb advise`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb advise --loads 900,0,0,0,0,0,0,0 --speeds 100 --seconds-per-message 1e-3\n  \
    hetlb advise --loads 40,10,10,0 --speeds 1,2,2,4 --algorithm cwa,dem-hetero --routing paper,direct --trigger auto:5:2\n  \
    hetlb advise --loads 5,5,5,5 --speeds 1 --format json")]
pub struct Args {
    /// Units each node holds now: `5,0,3` (or `5 0 3`) or `@file`.
    #[arg(long, short, required = true, num_args = 1.., allow_negative_numbers = true)]
    loads: Vec<String>,
    /// Units each node processes per second (measured): one value for all, or one per node.
    #[arg(long, default_value = "1", num_args = 1.., allow_negative_numbers = true)]
    speeds: Vec<String>,
    /// Candidate rules, comma-separated, or `all` (every rule that fits the network).
    #[arg(
        long = "algorithm",
        visible_alias = "algorithms",
        default_value = "all"
    )]
    algorithm: String,
    /// Routings to compare: `paper` (hop by hop, as the rule moves), `direct` (each unit
    /// once, straight to its end), or both.
    #[arg(long, value_delimiter = ',', default_value = "paper,direct")]
    routing: Vec<String>,
    /// The network (default: the hypercube of the loads, or complete:N on another count), as in
    /// `hetlb balance`.
    #[arg(long)]
    topology: Option<String>,
    /// Bytes of one unit on the wire.
    #[arg(long, default_value = "8", value_parser = whole::<u64>(0, 1 << 40))]
    bytes_per_unit: u64,
    /// Cost of one message at each end, in seconds (Hockney's α).
    #[arg(long, default_value = "0.00001", value_parser = real(0.0, 1e6, false))]
    seconds_per_message: f64,
    /// Cost of one byte at each end, in seconds (Hockney's β).
    #[arg(long, default_value = "0.000000001", value_parser = real(0.0, 1e6, false))]
    seconds_per_byte: f64,
    /// When to move: `always`, or `auto[:HORIZON[:MARGIN]]` (move when the gain over HORIZON
    /// iterations exceeds MARGIN × the move's cost; defaults 10 and 1.5).
    #[arg(long, default_value = "auto")]
    trigger: String,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// The JSON document of `hetlb advise`.
#[derive(Serialize)]
struct Document<'a> {
    topology: String,
    trigger: String,
    cost_model: CostModel,
    bytes_per_unit: u64,
    #[serde(flatten)]
    advice: &'a Advice,
}

/// Runs `hetlb advise`.
pub fn run(args: Args) -> Result<()> {
    let loads = parse_loads(&crate::input::joined(&args.loads), "--loads")?;
    // The error names `speeds`, the option without its dashes.
    let speeds = per_node_speeds(
        &parse_capacities(&crate::input::joined(&args.speeds), "--speeds")?,
        loads.len(),
    )
    .map_err(|e| anyhow!("--{e}"))?;
    let trigger: Trigger = args
        .trigger
        .parse()
        .map_err(|e| anyhow!("--trigger: {e}"))?;
    let named: Option<Vec<Algorithm>> = (args.algorithm != "all")
        .then(|| crate::input::parse_unique(&args.algorithm, "--algorithm", None))
        .transpose()?;
    let cube_rules = named
        .as_ref()
        .is_none_or(|l| l.iter().any(|a| a.needs_hypercube()));
    let (network, topology) = network(args.topology.as_deref(), loads.len(), cube_rules)?;
    let routings = args
        .routing
        .iter()
        .map(|r| r.parse::<Routing>().map_err(|e| anyhow!("--routing: {e}")))
        .collect::<Result<Vec<_>>>()?;
    let routings = crate::input::unique(routings, "--routing");
    let algorithms: Vec<Algorithm> = named.unwrap_or_else(|| {
        let runs = |a: &Algorithm| !a.needs_hypercube() || network.runs_hypercube_rules();
        Algorithm::all().filter(runs).collect()
    });
    let candidates: Vec<(Algorithm, Routing)> = algorithms
        .iter()
        .flat_map(|&a| routings.iter().map(move |&r| (a, r)))
        .collect();
    let mut question = Question::new(&loads, &speeds);
    question.bytes_per_unit = args.bytes_per_unit;
    question.model = CostModel {
        seconds_per_message: args.seconds_per_message,
        seconds_per_byte: args.seconds_per_byte,
    };
    question.trigger = trigger;
    // Each candidate's final loads are kept (8 bytes a node), and printed in JSON (about 12).
    let per_candidate = loads.len() as u128 * 8 + 64;
    let fixed = loads.len() as u128 * 64 + per_candidate * candidates.len() as u128;
    crate::limits::check(
        "--loads",
        &format!(
            "advising {} candidates on {} nodes",
            candidates.len(),
            loads.len()
        ),
        fixed,
    )?;
    if args.format == Format::Json {
        crate::limits::check_output(
            "--loads",
            "the final loads of every candidate",
            loads.len() as u128 * 12 * candidates.len() as u128,
        )?;
    }
    question.max_transfers = crate::limits::transfers_within(fixed);
    let advice = advise(&network, &candidates, &question).map_err(|e| anyhow!("{e}"))?;
    match args.format {
        Format::Json => print_json(&Document {
            topology,
            trigger: trigger.to_string(),
            cost_model: question.model,
            bytes_per_unit: args.bytes_per_unit,
            advice: &advice,
        }),
        Format::Csv => print_csv(
            &[
                "algorithm",
                "routing",
                "iteration_seconds_before",
                "iteration_seconds_after",
                "gain_per_iteration",
                "units_moved",
                "messages",
                "move_seconds",
                "net_gain",
                "moves",
                "chosen",
            ],
            advice.candidates.iter().enumerate().map(|(i, c)| {
                let p = &c.prediction;
                vec![
                    c.algorithm.to_string(),
                    c.routing.to_string(),
                    format!("{:e}", p.iteration_seconds_before),
                    format!("{:e}", p.iteration_seconds_after),
                    format!("{:e}", p.gain_per_iteration),
                    p.units_moved.to_string(),
                    p.messages.to_string(),
                    format!("{:e}", p.move_seconds),
                    format!("{:e}", p.net_gain(advice.horizon)),
                    c.moves.to_string(),
                    (advice.choice == Some(i)).to_string(),
                ]
            }),
        ),
        Format::Table => {
            print_table(&advice, &topology, trigger, &question.model);
            Ok(())
        }
    }
}

/// The network named by `--topology`, or the default for `nodes` nodes (`Network::default_for`).
fn network(spec: Option<&str>, nodes: usize, cube_rules: bool) -> Result<(Network, String)> {
    let Some(spec) = spec else {
        return Network::default_for(nodes, cube_rules)
            .map_err(|e| anyhow!("--loads: {e}; give --topology for other networks"));
    };
    let parsed: TopologySpec = spec.parse().map_err(|e| anyhow!("--topology: {e}"))?;
    let network = parsed
        .build_reading(None, Some(nodes), hetlb_core::text_file::MAX_FILE_BYTES)
        .map_err(|e| anyhow!("--topology: {e}"))?;
    if network.node_count() != nodes {
        bail!(
            "--loads: {nodes} loads given for a network of {} nodes ({parsed})",
            network.node_count()
        );
    }
    Ok((network, parsed.to_string()))
}

/// Seconds in the unit that reads best: s, ms or µs, three decimals.
fn ms(seconds: f64) -> String {
    match seconds.abs() {
        a if a >= 1.0 => format!("{} s", fixed(seconds, 3)),
        a if a >= 1e-3 || a == 0.0 => format!("{} ms", fixed(seconds * 1e3, 3)),
        _ => format!("{} µs", fixed(seconds * 1e6, 3)),
    }
}

fn print_table(advice: &Advice, topology: &str, trigger: Trigger, model: &CostModel) {
    crate::out!(
        "Predicted gain against predicted cost on {topology} (trigger {trigger}; α = {:e} s, \
         β = {:e} s/B); nothing moved",
        model.seconds_per_message,
        model.seconds_per_byte
    );
    let mut t = table([
        "algorithm",
        "routing",
        "iteration before",
        "after",
        "gain / iteration",
        "units moved",
        "messages",
        "move",
        &format!("net over {}", advice.horizon),
        "moves?",
    ]);
    for (i, c) in advice.candidates.iter().enumerate() {
        let p = &c.prediction;
        let verdict = match (c.moves, advice.choice == Some(i)) {
            (_, true) => "chosen",
            (true, false) => "yes",
            (false, false) => "no",
        };
        t.add_row(vec![
            c.algorithm.to_string(),
            c.routing.to_string(),
            ms(p.iteration_seconds_before),
            ms(p.iteration_seconds_after),
            ms(p.gain_per_iteration),
            p.units_moved.to_string(),
            p.messages.to_string(),
            ms(p.move_seconds),
            ms(p.net_gain(advice.horizon)),
            verdict.to_string(),
        ]);
    }
    crate::out!("{t}");
    match advice.choice {
        Some(i) => {
            let c = &advice.candidates[i];
            crate::out!(
                "Move with {} ({} routing): {} saved over {} iterations.",
                c.algorithm,
                c.routing,
                ms(c.prediction.net_gain(advice.horizon)),
                advice.horizon
            );
        }
        None => crate::out!(
            "Stay: no candidate's gain over {} iterations pays for its move.",
            advice.horizon
        ),
    }
}
