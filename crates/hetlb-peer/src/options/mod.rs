//! The balancer's options in one table: every option's name, values, default, bounds and
//! documentation live here and nowhere else. The faces read it — the CLI's flags of
//! `hetlb run iterative`, the C options string of `hetlb_balancer_create`, the Python
//! keywords of `hetlb.Balancer` — and set options by name, as Zoltan's `Zoltan_Set_Param`
//! does; an error names the option as the table spells it ([`ConfigError::Option`]), so each
//! face can print it in its own spelling (`--move-cost`, `move_cost=`, `move_cost`).
//!
//! | option | values | default |
//! |---|---|---|
//! | `topology` | a spec: `hypercube:3`, `ring:8`, `torus:2x4`, `grid:2x2x2`, `file:PATH`, …; `mpi` (the communicator's own); `geometric` (the regions' neighbours, at each call) | by the rank count: a hypercube on a power of two; otherwise `complete:N` for the hypercube rules and `auto`, a ring for the diffusion rules (which follow the geometry when items give positions) |
//! | `speeds` | `equal`, `measured`, `measured:WINDOW`, `fixed:C0,C1,…` | `equal` |
//! | `window` | reports a measured speed is the median of, ≥ 1 | `5` |
//! | `schedule` | `phased`, `overlap`, `pipeline` | `phased` |
//! | `timeout` | seconds of silence after which a peer is judged stopped | `10` |
//! | `entry_timeout` | seconds to wait for a peer that has not reached the call, `timeout` (as long as the call's timeout) or `none` | `timeout` |
//! | `procs_per_group` | `P` of `hybrid`, ≥ 1 | `2^⌊n/2⌋` |
//! | `max_rounds` | round limit of the diffusion rules, ≥ 1 | `100000` |
//! | `seed` | seed of `random-biasing` | `0` |
//! | `lambda` | `λ` of `gdem`, in (0, 1) | the network's |
//! | `trigger` | `always`, or `auto[:HORIZON[:MARGIN]]` | `always` |
//! | `move_cost` | `ALPHA,BETA`: seconds per message and per unit of load | `0,0` |
//! | `learn_cost` | `true` or `false` | `false` |
//! | `routing` | `direct` or `paper` | `direct` |
//! | `candidates` | rule `auto`'s candidates, comma-separated | by the network |
//! | `check_budget` | share of the iteration time the trigger's checks may cost, 0 to 1 | `0.01` |
//! | `count_bytes` | `true` or `false` | `true` |
//! | `trace` | a file to write the Trace Event JSON to (one per rank on MPI: `NAME.rankR.json`) | none |
//! | `trace_events` | the trace's event limit (past it counters are sampled, other events dropped), ≥ 16 | `1000000` |
//!
//! (This table is checked against [`OPTIONS`] by a test; `hetlb options` prints it with each
//! option's documentation.)
//!
//! # Example
//! ```
//! use hetlb_peer::options::Options;
//! use hetlb_peer::ConfigError;
//! let mut o = Options::default();
//! o.set("timeout", "2.5").unwrap();
//! o.set("speeds", "measured").unwrap();
//! assert_eq!(o.get("speeds").as_deref(), Some("measured:5"));
//! let e = o.set("timeout", "-1").unwrap_err();
//! assert!(matches!(e, ConfigError::Option { name: "timeout", .. }));
//! assert_eq!(e.to_string(), "timeout: -1 is not positive seconds of at most 1e9");
//! ```

mod table;
mod values;

pub use table::{OPTIONS, OptionInfo, TOPOLOGY_FROM_GEOMETRY, TOPOLOGY_FROM_GROUP};
pub use values::{
    EntryTimeout, MAX_SECONDS, Speeds, check_seconds, move_cost_text, parse_bool, parse_move_cost,
    parse_rules, parse_seconds, parse_whole,
};

use crate::error::ConfigError;
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use hetlb_core::topology::TopologySpec;
use hetlb_core::transmission::Schedule;
use std::time::Duration;

/// Where the ranks' network comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum TopologySource {
    /// The spec of `topology`, or the default for the rank count; the diffusion rules follow
    /// the geometry instead when no spec is named and the items give positions.
    #[default]
    Named,
    /// `topology=mpi`: the neighbourhood the application declared on the group's
    /// communicator (`MPI_Cart_create`, `MPI_Graph_create`,
    /// `MPI_Dist_graph_create_adjacent`), read when the balancer is built.
    Communicator,
    /// `topology=geometric`: at each call, the ranks whose regions are near (from the
    /// centroids of the items' positions; the default network when items give none).
    Geometry,
}

/// The default silence after which a peer is judged to have stopped answering.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The share of the iteration time that the trigger `auto`'s checks may cost by default.
pub const DEFAULT_CHECK_BUDGET: f64 = 0.01;

/// Every option of a balancer but its rule, typed, with the defaults of [`Options::default`].
/// Set one by name with [`Options::set`], read one with [`Options::get`]; the fields say what
/// each means, and [`OPTIONS`] lists them with their values and documentation.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Options {
    /// The ranks' network; `None`: chosen by the rank count (see [`OPTIONS`]).
    pub topology: Option<TopologySpec>,
    /// Where the ranks' network comes from: `topology` (or the default), the group's
    /// communicator (`topology=mpi`) or the items' geometry (`topology=geometric`).
    pub topology_source: TopologySource,
    /// Where the capacities the rule weighs come from.
    pub speeds: Speeds,
    /// The window of measured speeds when `speeds` is set to `measured` without one.
    pub window: usize,
    /// How items are put on the links (Rim, Jang & Kim 2003, §6).
    pub schedule: Schedule,
    /// Silence after which a peer taking part in a call is judged to have stopped.
    pub timeout: Duration,
    /// How long to wait for a peer that has not reached the call.
    pub entry_timeout: EntryTimeout,
    /// `P` of `hybrid`.
    pub procs_per_group: Option<usize>,
    /// Round limit of the diffusion rules.
    pub max_rounds: Option<u64>,
    /// Seed of `random-biasing`'s draws.
    pub seed: u64,
    /// `λ` of `gdem`.
    pub lambda: Option<f64>,
    /// When a call moves.
    pub trigger: Trigger,
    /// The move's cost the trigger weighs: seconds per message, and per *unit* of load in
    /// the field `seconds_per_byte` (the balancer predicts with one byte per unit).
    pub move_cost: CostModel,
    /// Whether the move's cost is refitted to the moves measured.
    pub learn_cost: bool,
    /// How the plan's units travel.
    pub routing: Routing,
    /// Rule `auto`'s candidates; `Some(empty)`: the default set for the network.
    pub candidates: Option<Vec<Algorithm>>,
    /// The share of the iteration time the trigger `auto`'s checks may cost.
    pub check_budget: f64,
    /// Whether to count the bytes of the items sent where nothing is serialised.
    pub count_bytes: bool,
    /// Where to write a trace of every call (Trace Event JSON); `None`: no trace.
    pub trace: Option<std::path::PathBuf>,
    /// The trace's event limit.
    pub trace_events: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            topology: None,
            topology_source: TopologySource::Named,
            speeds: Speeds::Equal,
            window: Speeds::DEFAULT_WINDOW,
            schedule: Schedule::Phased,
            timeout: DEFAULT_TIMEOUT,
            entry_timeout: EntryTimeout::Timeout,
            procs_per_group: None,
            max_rounds: None,
            seed: 0,
            lambda: None,
            trigger: Trigger::Always,
            move_cost: CostModel::FREE,
            learn_cost: false,
            routing: Routing::Direct,
            candidates: None,
            check_budget: DEFAULT_CHECK_BUDGET,
            count_bytes: true,
            trace: None,
            trace_events: hetlb_trace::DEFAULT_EVENT_LIMIT,
        }
    }
}

impl Options {
    /// Sets the option `name` (as [`OPTIONS`] spells it; `-` may stand for `_`) from its text.
    ///
    /// # Errors
    /// [`ConfigError::UnknownOption`] for a name not in the table; [`ConfigError::Option`]
    /// naming the option for a value that cannot be parsed or is out of bounds.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ConfigError> {
        let info = OptionInfo::find(name)?;
        (info.set)(self, value.trim())
            .and_then(|()| (info.check)(self))
            .map_err(|reason| ConfigError::option(info.name, reason))
    }

    /// The value of option `name` as text (`None` when unset or not an option).
    pub fn get(&self, name: &str) -> Option<String> {
        OptionInfo::find(name)
            .ok()
            .and_then(|info| (info.get)(self))
    }

    /// Sets options from `key=value` pairs separated by `;` (the C options string): spaces
    /// around keys and values are ignored, and so are empty pairs (`"a=1;;b=2;"`).
    ///
    /// # Errors
    /// [`ConfigError::Syntax`] for a pair without `=` or a key given twice; otherwise as
    /// [`Options::set`].
    pub fn set_pairs(&mut self, text: &str) -> Result<(), ConfigError> {
        for (key, value) in pairs(text)? {
            self.set(key, value)?;
        }
        Ok(())
    }

    /// Checks every option's bounds (the ones [`Options::set`] checks, for options set as
    /// fields).
    ///
    /// # Errors
    /// [`ConfigError::Option`] naming the first option out of bounds.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for info in &OPTIONS {
            (info.check)(self).map_err(|reason| ConfigError::option(info.name, reason))?;
        }
        Ok(())
    }
}

/// The `key=value` pairs of an options string, in order, trimmed; empty pairs skipped.
///
/// # Errors
/// [`ConfigError::Syntax`] for a pair without `=` or a key given twice.
pub fn pairs(text: &str) -> Result<Vec<(&str, &str)>, ConfigError> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for pair in text.split(';') {
        let pair = pair.trim();
        if pair.is_empty() {
            continue;
        }
        let Some((key, value)) = pair.split_once('=') else {
            return Err(ConfigError::Syntax(format!(
                "'{pair}' is not key=value (pairs are separated by ';')"
            )));
        };
        let (key, value) = (key.trim(), value.trim());
        if out.iter().any(|(k, _)| *k == key) {
            return Err(ConfigError::Syntax(format!("{key} is given twice")));
        }
        out.push((key, value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_reads_back_what_it_was_set_to() {
        for (name, value) in [
            ("topology", "ring:8"),
            ("speeds", "fixed:1,2.5"),
            ("window", "3"),
            ("schedule", "pipeline"),
            ("timeout", "2.5"),
            ("entry_timeout", "7"),
            ("procs_per_group", "4"),
            ("max_rounds", "50"),
            ("seed", "7"),
            ("lambda", "0.25"),
            ("trigger", "auto:20:1.5"),
            ("move_cost", "0.5,0.25"),
            ("learn_cost", "true"),
            ("routing", "paper"),
            ("candidates", "cwa,dishet"),
            ("check_budget", "0.5"),
            ("count_bytes", "false"),
        ] {
            let mut o = Options::default();
            o.set(name, value).unwrap();
            assert_eq!(o.get(name).as_deref(), Some(value), "{name}");
            assert_ne!(o, Options::default(), "{name}");
        }
        let mut o = Options::default();
        o.set("entry_timeout", "none").unwrap();
        assert_eq!(o.entry_timeout, EntryTimeout::Never);
        o.set("move-cost", "1,2").unwrap();
        assert_eq!(o.move_cost.seconds_per_byte, 2.0);
    }

    #[test]
    fn the_window_follows_measured_speeds_in_either_order() {
        let mut a = Options::default();
        a.set("window", "3").unwrap();
        a.set("speeds", "measured").unwrap();
        let mut b = Options::default();
        b.set("speeds", "measured").unwrap();
        b.set("window", "3").unwrap();
        assert_eq!(a.speeds, Speeds::Measured { window: 3 });
        assert_eq!(a, b);
    }

    #[test]
    fn bad_values_name_their_option() {
        for (name, value, needle) in [
            ("timeout", "-1", "positive seconds"),
            ("timeout", "nan", "positive seconds"),
            ("timeout", "2e9", "at most 1e9"),
            ("timeout", "soon", "not a number"),
            ("entry_timeout", "0", "positive seconds"),
            ("speeds", "fast", "not a source of speeds"),
            ("speeds", "fixed:1,0", "capacity 2"),
            ("speeds", "measured:0", "window"),
            ("window", "0", "at least 1"),
            ("schedule", "sometimes", "phased"),
            (
                "schedule",
                "pipeline-per-processor",
                "transmission times only",
            ),
            ("topology", "ring:x", "ring"),
            ("seed", "-3", "whole number"),
            ("lambda", "inf", "(0, 1)"),
            ("lambda", "1", "(0, 1)"),
            ("trigger", "soon", "not a trigger"),
            ("trigger", "auto:0", "horizon"),
            ("move_cost", "1", "ALPHA,BETA"),
            ("move_cost", "-1,0", "not negative"),
            ("learn_cost", "maybe", "true or false"),
            ("routing", "fast", "routing"),
            ("candidates", "cwa,nope", "nope"),
            ("check_budget", "2", "0 to 1"),
            ("procs_per_group", "0", "at least 1"),
            ("max_rounds", "0", "at least 1"),
        ] {
            let e = Options::default().set(name, value).unwrap_err();
            match &e {
                ConfigError::Option { name: n, .. } => assert_eq!(*n, name),
                other => panic!("{name}={value}: {other:?}"),
            }
            let text = e.to_string();
            assert!(text.starts_with(&format!("{name}: ")), "{text}");
            assert!(text.contains(needle), "{name}={value}: {text}");
        }
        let e = Options::default().set("colour", "blue").unwrap_err();
        assert!(matches!(e, ConfigError::UnknownOption { .. }));
        assert!(e.to_string().contains("unknown option 'colour'"), "{e}");
        assert!(e.to_string().contains("timeout"), "{e}");
    }

    #[test]
    fn option_strings_are_pairs() {
        let mut o = Options::default();
        o.set_pairs(" schedule = pipeline ;; speeds=fixed:1,2.5 ;")
            .unwrap();
        assert_eq!(o.schedule, Schedule::Pipeline);
        assert!(matches!(
            o.set_pairs("timeout"),
            Err(ConfigError::Syntax(m)) if m.contains("not key=value")
        ));
        assert!(matches!(
            o.set_pairs("timeout=1;timeout=2"),
            Err(ConfigError::Syntax(m)) if m.contains("twice")
        ));
        assert!(o.set_pairs("").is_ok());
    }

    #[test]
    fn the_module_table_lists_every_option_with_its_default() {
        let doc = include_str!("mod.rs");
        for info in &OPTIONS {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("//! | `{}` |", info.name)))
                .unwrap_or_else(|| panic!("{} is not in the module's table", info.name));
            if let Some(d) = info.default_value() {
                assert!(
                    row.ends_with(&format!("| `{d}` |")),
                    "{}: the table says {row}, the default is {d}",
                    info.name
                );
            }
        }
        let rows = doc.lines().filter(|l| l.starts_with("//! | `")).count();
        assert_eq!(rows, OPTIONS.len());
    }

    #[test]
    fn defaults_pass_their_own_checks() {
        Options::default().validate().unwrap();
        let mut o = Options {
            timeout: Duration::ZERO,
            ..Options::default()
        };
        assert!(matches!(
            o.validate(),
            Err(ConfigError::Option {
                name: "timeout",
                ..
            })
        ));
        o.timeout = DEFAULT_TIMEOUT;
        o.check_budget = -1.0;
        assert!(o.validate().is_err());
    }
}
