//! The table itself: for every option, how to set it from text, read it back and check it.

use super::values::{
    EntryTimeout, Speeds, check_seconds, move_cost_text, parse_bool, parse_move_cost, parse_rules,
    parse_seconds, parse_whole,
};
use super::{Options, TopologySource};
use crate::error::ConfigError;
use hetlb_core::transmission::Schedule;
use std::time::Duration;

/// One option of the table: its name, its values and documentation, and how it is set,
/// read and checked.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct OptionInfo {
    /// The name every face uses (the CLI writes `_` as `-`).
    pub name: &'static str,
    /// The values it takes, in words.
    pub values: &'static str,
    /// What it does.
    pub doc: &'static str,
    pub(super) set: fn(&mut Options, &str) -> Result<(), String>,
    pub(super) get: fn(&Options) -> Option<String>,
    pub(super) check: fn(&Options) -> Result<(), String>,
}

impl std::fmt::Debug for OptionInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionInfo")
            .field("name", &self.name)
            .field("default", &self.default_value())
            .finish_non_exhaustive()
    }
}

impl OptionInfo {
    /// The option called `name` (`-` may stand for `_`).
    ///
    /// # Errors
    /// [`ConfigError::UnknownOption`] listing the known names.
    pub fn find(name: &str) -> Result<&'static OptionInfo, ConfigError> {
        let wanted = name.trim().replace('-', "_");
        OPTIONS
            .iter()
            .find(|o| o.name == wanted)
            .ok_or_else(|| ConfigError::UnknownOption {
                name: name.trim().to_string(),
                known: OPTIONS
                    .iter()
                    .map(|o| o.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The default value as text (`None` where the default depends on the group or the rule,
    /// as [`OptionInfo::doc`] says).
    pub fn default_value(&self) -> Option<String> {
        (self.get)(&Options::default())
    }

    /// The value in `options` as text (`None` when unset).
    pub fn value(&self, options: &Options) -> Option<String> {
        (self.get)(options)
    }
}

fn ok(_: &Options) -> Result<(), String> {
    Ok(())
}

fn seconds_text(d: Duration) -> String {
    d.as_secs_f64().to_string()
}

fn check_share(share: f64) -> Result<(), String> {
    if share.is_finite() && (0.0..=1.0).contains(&share) {
        Ok(())
    } else {
        Err(format!("{share} is not a share from 0 to 1"))
    }
}

fn parse_number(value: &str) -> Result<f64, String> {
    value
        .parse::<f64>()
        .map_err(|_| format!("'{value}' is not a number"))
}

/// The value of `topology` that takes the communicator's own neighbourhood.
pub const TOPOLOGY_FROM_GROUP: &str = "mpi";

/// The value of `topology` that follows the items' geometry at each call.
pub const TOPOLOGY_FROM_GEOMETRY: &str = "geometric";

/// Every option, in the order the documentation lists them.
pub static OPTIONS: [OptionInfo; 19] = [
    OptionInfo {
        name: "topology",
        values: "a spec: hypercube:D, ring:N, torus:RxC, mesh:RxC, grid:AxB[xC], complete:N, random:N:P[:SEED], file:PATH, ...; mpi; geometric",
        doc: "The ranks' network, with as many nodes as ranks. mpi: the neighbourhood the \
              application declared on its communicator (MPI_Cart_create, MPI_Graph_create or \
              MPI_Dist_graph_create_adjacent), so that load moves only between neighbouring \
              subdomains. geometric: at each call, the ranks whose regions are near, from \
              the centroids of the items' positions (diffusion rules). Default: a hypercube \
              when the rank count is a power of two; otherwise complete:N for the hypercube \
              rules and auto (they run embedded in a cube) and a ring for the diffusion \
              rules; the diffusion rules follow the geometry when items give positions.",
        set: |o, v| {
            (o.topology_source, o.topology) = match v.trim() {
                TOPOLOGY_FROM_GROUP => (TopologySource::Communicator, None),
                TOPOLOGY_FROM_GEOMETRY => (TopologySource::Geometry, None),
                spec => {
                    let parsed = spec
                        .parse()
                        .map_err(|e: hetlb_core::topology::SpecError| e.to_string())?;
                    (TopologySource::Named, Some(parsed))
                }
            };
            Ok(())
        },
        get: |o| match o.topology_source {
            TopologySource::Communicator => Some(TOPOLOGY_FROM_GROUP.to_string()),
            TopologySource::Geometry => Some(TOPOLOGY_FROM_GEOMETRY.to_string()),
            _ => o.topology.as_ref().map(ToString::to_string),
        },
        check: ok,
    },
    OptionInfo {
        name: "speeds",
        values: "equal, measured, measured:WINDOW or fixed:C0,C1,... (one capacity per rank)",
        doc: "Where the capacities the rule weighs come from: equal, given, or measured from \
              what the application reports (Balancer::record: units and seconds), the median \
              rate of the last WINDOW reports.",
        set: |o, v| {
            o.speeds = match v.parse::<Speeds>()? {
                Speeds::Measured { .. } if !v.contains(':') => {
                    Speeds::Measured { window: o.window }
                }
                s => s,
            };
            if let Speeds::Measured { window } = o.speeds {
                o.window = window;
            }
            Ok(())
        },
        get: |o| Some(o.speeds.to_string()),
        check: |o| o.speeds.check(),
    },
    OptionInfo {
        name: "window",
        values: "a whole number >= 1",
        doc: "Reports a measured speed is the median of (speeds=measured).",
        set: |o, v| {
            o.window = parse_whole(v, 1usize)?;
            if let Speeds::Measured { window } = &mut o.speeds {
                *window = o.window;
            }
            Ok(())
        },
        get: |o| Some(o.window.to_string()),
        check: |o| match o.window {
            0 => Err("the measuring window must hold at least one report".into()),
            _ => Ok(()),
        },
    },
    OptionInfo {
        name: "schedule",
        values: "phased, overlap or pipeline",
        doc: "How items are put on the links (Rim, Jang & Kim 2003, §6): a phase at a time; \
              also as soon as the rank holds a transfer's units; or as soon as it holds any.",
        set: |o, v| {
            o.schedule = v
                .parse()
                .map_err(|e: hetlb_core::transmission::UnknownSchedule| e.to_string())?;
            Ok(())
        },
        get: |o| Some(o.schedule.to_string()),
        check: |o| match o.schedule {
            Schedule::PipelinePerProcessor => Err(
                "pipeline-per-processor models the literal reading of Rim et al.'s pseudo-code \
                 for transmission times only; move items with phased, overlap or pipeline"
                    .into(),
            ),
            _ => Ok(()),
        },
    },
    OptionInfo {
        name: "timeout",
        values: "seconds > 0, at most 1e9",
        doc: "Silence after which a peer taking part in a call is judged to have stopped. A \
              peer proves it is alive while it waits in the call; a peer that has not reached \
              the call yet is busy, not silent (see entry_timeout).",
        set: |o, v| {
            o.timeout = parse_seconds(v)?;
            Ok(())
        },
        get: |o| Some(seconds_text(o.timeout)),
        check: |o| check_seconds(o.timeout.as_secs_f64()),
    },
    OptionInfo {
        name: "entry_timeout",
        values: "seconds > 0, at most 1e9; timeout (as long as the call's timeout); or none",
        doc: "How long a rank that has reached a collective call waits for a peer that has \
              not, before it names it: every rank that reached the call then returns an error \
              naming the peer, and the peer, when it arrives, finds the call given up. A peer \
              merely slow to arrive is named too: raise it, or none (no limit), where ranks \
              may reach a call far apart.",
        set: |o, v| {
            o.entry_timeout = v.parse()?;
            Ok(())
        },
        get: |o| Some(o.entry_timeout.to_string()),
        check: |o| match o.entry_timeout {
            EntryTimeout::After(d) => check_seconds(d.as_secs_f64()),
            _ => Ok(()),
        },
    },
    OptionInfo {
        name: "procs_per_group",
        values: "a whole number >= 1",
        doc: "P of hybrid: OEM within groups of P ranks, then cube walking. Default 2^floor(n/2) \
              on 2^n ranks. Only hybrid has groups.",
        set: |o, v| {
            o.procs_per_group = Some(parse_whole(v, 1usize)?);
            Ok(())
        },
        get: |o| o.procs_per_group.map(|p| p.to_string()),
        check: |o| match o.procs_per_group {
            Some(0) => Err("a group holds at least one rank".into()),
            _ => Ok(()),
        },
    },
    OptionInfo {
        name: "max_rounds",
        values: "a whole number >= 1",
        doc: "Round limit of the diffusion rules (default 100000, as hetlb balance).",
        set: |o, v| {
            o.max_rounds = Some(parse_whole(v, 1u64)?);
            Ok(())
        },
        get: |o| o.max_rounds.map(|r| r.to_string()),
        check: |o| match o.max_rounds {
            Some(0) => Err("at least one round".into()),
            _ => Ok(()),
        },
    },
    OptionInfo {
        name: "seed",
        values: "a whole number",
        doc: "Seed of random-biasing's draws.",
        set: |o, v| {
            o.seed = parse_whole(v, 0u64)?;
            Ok(())
        },
        get: |o| Some(o.seed.to_string()),
        check: ok,
    },
    OptionInfo {
        name: "lambda",
        values: "a number in (0, 1)",
        doc: "λ of gdem (default: the network's optimal, or 1/2). Only gdem has one.",
        set: |o, v| {
            o.lambda = Some(parse_number(v)?);
            Ok(())
        },
        get: |o| o.lambda.map(|l| l.to_string()),
        check: |o| match o.lambda {
            Some(l) if !(l.is_finite() && l > 0.0 && l < 1.0) => {
                Err(format!("{l} is not in (0, 1)"))
            }
            _ => Ok(()),
        },
    },
    OptionInfo {
        name: "trigger",
        values: "always, or auto[:HORIZON[:MARGIN]]",
        doc: "When a call moves: always, or only when the gain predicted over HORIZON \
              iterations (default 10) exceeds MARGIN (default 1.5) times the move's predicted \
              cost. auto needs measured speeds: the gain is in seconds.",
        set: |o, v| {
            o.trigger = v.parse()?;
            Ok(())
        },
        get: |o| Some(o.trigger.to_string()),
        check: ok,
    },
    OptionInfo {
        name: "move_cost",
        values: "ALPHA,BETA (seconds, finite, >= 0)",
        doc: "The cost of moving that the trigger weighs: seconds per message and per unit of \
              load (Hockney's α and β with units in place of bytes). Default free: auto moves \
              whenever the predicted gain is positive.",
        set: |o, v| {
            o.move_cost = parse_move_cost(v)?;
            Ok(())
        },
        get: |o| Some(move_cost_text(&o.move_cost)),
        check: |o| o.move_cost.validate().map_err(|e| e.to_string()),
    },
    OptionInfo {
        name: "learn_cost",
        values: "true or false",
        doc: "Refit move_cost after every committed move to the moves measured so far \
              (move_cost is the prior until the first, replaced by a short probe); every \
              rank uses rank 0's model.",
        set: |o, v| {
            o.learn_cost = parse_bool(v)?;
            Ok(())
        },
        get: |o| Some(o.learn_cost.to_string()),
        check: ok,
    },
    OptionInfo {
        name: "routing",
        values: "direct or paper",
        doc: "How the plan's units travel: each unit once, straight to the rank where the plan \
              ends it (the default: the fewest bytes on the wire), or hop by hop as the rule \
              moves them (paper: the papers' transmission, to reproduce their costs).",
        set: |o, v| {
            o.routing = v.parse()?;
            Ok(())
        },
        get: |o| Some(o.routing.to_string()),
        check: ok,
    },
    OptionInfo {
        name: "candidates",
        values: "rule names, comma-separated",
        doc: "Rule auto's candidates (default: cwa, dem-hetero, oem, dishet on a hypercube or \
              the complete network; dishet, gdem elsewhere). Only rule auto has candidates.",
        set: |o, v| {
            o.candidates = Some(parse_rules(v)?);
            Ok(())
        },
        get: |o| {
            o.candidates
                .as_ref()
                .filter(|c| !c.is_empty())
                .map(|c| c.iter().map(|a| a.name()).collect::<Vec<_>>().join(","))
        },
        check: ok,
    },
    OptionInfo {
        name: "check_budget",
        values: "a share from 0 to 1",
        doc: "With trigger auto: the share of the application's iteration time that checking \
              may cost (0 checks at every call). After a check that did not move, the interval \
              between checks doubles up to what the budget allows.",
        set: |o, v| {
            o.check_budget = parse_number(v)?;
            Ok(())
        },
        get: |o| Some(o.check_budget.to_string()),
        check: |o| check_share(o.check_budget),
    },
    OptionInfo {
        name: "count_bytes",
        values: "true or false",
        doc: "Where nothing is serialised (threads), count the bytes the items sent would take \
              on the wire, for reports (one serialisation pass over the items sent, no copy).",
        set: |o, v| {
            o.count_bytes = parse_bool(v)?;
            Ok(())
        },
        get: |o| Some(o.count_bytes.to_string()),
        check: ok,
    },
    OptionInfo {
        name: "trace",
        values: "a file path (empty: no trace)",
        doc: "Write a trace of every call in the Trace Event format (open it in \
              ui.perfetto.dev or chrome://tracing): spans for the steps reported by record \
              and for each call's phases, counters of load, speed and imbalance, an arrow per \
              transfer, instants for decisions held back and faults. Ranks in one process \
              share the file; on MPI each rank writes NAME.rankR.json (merge them with hetlb \
              trace merge). The file is created when the balancer is, and written when the \
              last balancer sharing it is dropped.",
        set: |o, v| {
            o.trace = (!v.trim().is_empty()).then(|| std::path::PathBuf::from(v.trim()));
            Ok(())
        },
        get: |o| o.trace.as_ref().map(|p| p.display().to_string()),
        check: ok,
    },
    OptionInfo {
        name: "trace_events",
        values: "a whole number >= 16",
        doc: "The trace's event limit: past it, counter samples are thinned and other events \
              dropped, as the file's otherData states.",
        set: |o, v| {
            o.trace_events = parse_whole(v, 16usize)?;
            Ok(())
        },
        get: |o| Some(o.trace_events.to_string()),
        check: |o| match o.trace_events {
            0..16 => Err("a trace holds at least 16 events".into()),
            _ => Ok(()),
        },
    },
];
