//! Scenarios: a whole experiment in one TOML file.
//!
//! ```toml
//! name = "mirtaheri-no-balancing"      # optional
//! seed = 1                             # optional, default 0
//! end_time = 10.0                      # optional: stop there (needed for unlimited arrivals)
//!
//! [nodes]
//! count = 6
//! rate = 500.0                         # tasks/s, or `rates = [...]` one per node
//! service = "deterministic"            # or "exponential" (Poisson completions)
//! initial = 300                        # or `initial_loads = [...]`
//!
//! [topology]                           # or one line: topology = "ring:6"
//! kind = "graph"                       # "graph", "ring", "complete", "hypercube", "torus"
//! edges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [4, 5]]
//! # spec = "torus:2x3"                 # instead of `kind`: any core topology spec (path:N,
//! #                                    # ring:N, mesh:RxC, torus:RxC, kary:K:N, star:N,
//! #                                    # complete:N, hypercube:D, random:N:P[:SEED],
//! #                                    # file:PATH relative to the scenario)
//!
//! [links]                              # optional; default: instant links
//! rate = 100.0                         # tasks/s per link, `inf` for instant
//! delay = 0.0                          # seconds (the mean if exponential)
//! delay_distribution = "deterministic" # or "exponential"
//! # [[links.overrides]]
//! # between = [4, 5]
//! # rate = 50.0
//!
//! [[injections]]                       # one-shot external load
//! node = 0
//! time = 0.1
//! tasks = 1000
//!
//! # [arrivals]                         # Poisson arrivals at every node
//! # rate = 0.55                        # or `rates = [...]`
//! # per_node = 1000                    # optional limit per node
//!
//! [policy]
//! kind = "delay-aware"                 # "none", "delay-aware", "hypercube"
//! compensate = true                    # delay-aware: eq. 25 (false: k = 1)
//! # carry_out = "centre"               # delay-aware: the centre's own transfers, or
//! #                                    # "neighbourhood": the whole plan (Mirtaheri & Grandinetti 2017 §4, L_51(4))
//! # status_interval = 0.5             # delay-aware: neighbours report every 0.5 s
//! # algorithm = "oem"                  # hypercube: dem, oem, dem-improved, cwa, ...
//! # threshold = 4                      # hypercube: overload threshold in tasks
//! # kind = "diffusion"                 # periodic rounds of a core diffusion rule (Neelakantan 2012):
//! # algorithm = "dishet"               # dishet, dishet-tight, diffusion, random-biasing, dynamic-biasing, gdem
//! # interval = 0.5                     # seconds between rounds (the first at 0)
//! # lambda = 0.5                       # gdem only: the exchange parameter, in (0, 1)
//!
//! [output]                             # optional
//! series = true                        # record queue lengths (default true)
//! series_interval = 0.0                # minimum seconds between samples of a node
//! check_conservation = false           # recount every task after every event
//! ```
//!
//! Node ids are 0-based. Every table rejects unknown fields; every error names its field and
//! line ([`ScenarioError`]). Graphs follow the core's rules, as in `hetlb balance`: no self
//! loop, no duplicate edge, connected. Counts are bounded before anything is allocated (at
//! most [`MAX_NODES`] nodes, task totals that fit in 63 bits), rates lie in
//! [`MIN_RATE`]`..=`[`MAX_RATE`] and times below [`MAX_TIME`], so that every time the run
//! computes is finite; [`Scenario::memory_estimate`] tells a caller what a run will hold.

mod error;
mod file;

pub use error::ScenarioError;

use crate::engine::{Arrivals, Engine, Injection, SeriesOptions, Setup, SimError};
use crate::model::{LinkModel, LinkParams, Links, Nodes};
use crate::network::{LegacyKind, legacy_network};
use crate::policy::{
    AnyPolicy, CarryOut, DelayAware, DiffusionPolicy, DiffusionSettings, HypercubeThreshold,
    NoBalancing,
};
use crate::report::Report;
use file::{File, PolicyKind, TopologyKind};
use hetlb_core::Algorithm;
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::topology::{Graph, Network, Topology, TopologySpec};
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The most nodes a scenario may have (the core's graph limit, 2^24).
pub const MAX_NODES: usize = hetlb_core::topology::MAX_NODES;
/// The smallest node, arrival or link rate, in tasks per second.
pub const MIN_RATE: f64 = 1e-9;
/// The largest finite node, arrival or link rate, in tasks per second.
pub const MAX_RATE: f64 = 1e15;
/// The largest time or delay, in seconds.
pub const MAX_TIME: f64 = 1e15;
/// The most tasks a scenario may involve in all (initial, injected, arrived).
pub const MAX_TASKS: u64 = 1 << 62;
/// The most periodic rounds a diffusion scenario may need, or status reports a delay-aware
/// one: its horizon (the end time, or the last injection or arrival plus every task executed
/// by the slowest node and carried by the slowest link) divided by `policy.interval` or
/// `policy.status_interval`.
pub const MAX_ROUNDS: f64 = 1e7;

/// The balancing policy of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum PolicySpec {
    /// No balancing.
    None,
    /// The one-shot delay-aware policy (Mirtaheri & Grandinetti 2017).
    DelayAware {
        /// With the compensating factor or `k = 1`.
        compensation: Compensation,
        /// Whose transfers of the plan are carried out.
        carry: CarryOut,
    },
    /// Threshold-triggered hypercube balancing (Rim, Jang & Kim 2003 §4).
    Hypercube {
        /// The core algorithm.
        algorithm: Algorithm,
        /// Overload threshold in tasks.
        threshold: u64,
    },
    /// Periodic rounds of a core diffusion rule, each node on its own and its neighbours'
    /// loads (Neelakantan 2012); capacities are the node rates.
    Diffusion(DiffusionSettings),
}

impl PolicySpec {
    /// A fresh policy for one run, randomised rounding (`random-biasing`) seeded with 0.
    pub fn build(&self) -> AnyPolicy {
        self.build_seeded(0)
    }

    /// A fresh policy for one run; `seed` seeds randomised rounding (`random-biasing`).
    pub fn build_seeded(&self, seed: u64) -> AnyPolicy {
        match *self {
            PolicySpec::None => AnyPolicy::None(NoBalancing),
            PolicySpec::DelayAware {
                compensation,
                carry,
            } => AnyPolicy::DelayAware(DelayAware::new(compensation).carry_out(carry)),
            PolicySpec::Hypercube {
                algorithm,
                threshold,
            } => AnyPolicy::Hypercube(HypercubeThreshold::new(algorithm, threshold)),
            PolicySpec::Diffusion(settings) => {
                AnyPolicy::Diffusion(Box::new(DiffusionPolicy::new(settings, seed)))
            }
        }
    }
}

/// A validated scenario, ready to run any number of times.
///
/// # Example
/// ```
/// use hetlb_sim::scenario::{PolicySpec, Scenario};
/// let mut s = Scenario::from_toml(r#"
///     [nodes]
///     count = 3
///     rate = 100.0
///     initial = 100
///     [topology]
///     kind = "complete"
/// "#).unwrap();
/// assert!((s.run().unwrap().makespan - 1.0).abs() < 1e-9);
/// s.policy = PolicySpec::None;
/// s.setup.seed = 7;
/// assert_eq!(s.run().unwrap().seed, 7);
/// ```
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Name, if given.
    pub name: Option<String>,
    /// Description, if given.
    pub description: Option<String>,
    /// The nodes.
    pub nodes: Nodes,
    /// The network and its links.
    pub links: Links,
    /// Initial loads, injections, arrivals, seed, end time, recording.
    pub setup: Setup,
    /// The policy.
    pub policy: PolicySpec,
}

fn span<T>(s: &Spanned<T>) -> Option<std::ops::Range<usize>> {
    Some(s.span())
}

impl Scenario {
    /// Reads and validates a scenario file.
    ///
    /// # Errors
    /// [`ScenarioError`] naming the file for I/O errors, or the field for anything else.
    pub fn from_path(path: &Path) -> Result<Self, ScenarioError> {
        Self::from_path_within(path, u128::MAX)
    }

    /// Reads and validates a scenario file, refusing one whose network, links and per-node
    /// state would need more than `max_bytes` before they are built (the error names
    /// `nodes.count` or the topology and gives the estimate).
    ///
    /// # Errors
    /// As [`Scenario::from_path`], plus the memory refusal.
    pub fn from_path_within(path: &Path, max_bytes: u128) -> Result<Self, ScenarioError> {
        let text = read_bounded(path).map_err(|e| ScenarioError {
            field: "file".to_string(),
            line: None,
            message: format!("cannot read it: {e}"),
        })?;
        let file: File = toml::from_str(&text).map_err(|e| ScenarioError::from_toml(&text, &e))?;
        Validator {
            source: &text,
            dir: Some(path.parent().unwrap_or(Path::new("")).to_path_buf()),
            max_bytes,
        }
        .scenario(file)
    }

    /// Parses and validates a scenario.
    ///
    /// # Errors
    /// [`ScenarioError`]: unknown or missing fields, wrong types, zero or negative rates,
    /// injections into unknown nodes or before time 0, an end time before the last
    /// injection, and so on.
    pub fn from_toml(source: &str) -> Result<Self, ScenarioError> {
        Self::from_toml_within(source, u128::MAX)
    }

    /// Parses and validates a scenario, refusing it before building its network and links
    /// when they would need more than `max_bytes` (see [`Scenario::from_path_within`]).
    ///
    /// # Errors
    /// As [`Scenario::from_toml`], plus the memory refusal.
    ///
    /// # Example
    /// ```
    /// use hetlb_sim::Scenario;
    /// let big = "topology = \"hypercube:24\"\n[nodes]\ncount = 16777216\nrate = 1.0\n";
    /// let e = Scenario::from_toml_within(big, 8 << 30).unwrap_err();
    /// assert_eq!(e.field, "topology");
    /// assert!(e.message.contains("of memory"), "{e}");
    /// ```
    pub fn from_toml_within(source: &str, max_bytes: u128) -> Result<Self, ScenarioError> {
        let file: File =
            toml::from_str(source).map_err(|e| ScenarioError::from_toml(source, &e))?;
        Validator {
            source,
            dir: None,
            max_bytes,
        }
        .scenario(file)
    }

    /// An estimate of the bytes a run of this scenario holds at its peak: every task it can
    /// hold at once (each is a queue entry), the queue-length samples when they are recorded
    /// (about two per task), and per node and link state.
    ///
    /// # Example
    /// ```
    /// use hetlb_sim::Scenario;
    /// let s = Scenario::from_toml(
    ///     "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\ninitial = 1000000\n",
    /// ).unwrap();
    /// assert!(s.memory_estimate() > 4_000_000 * 16);
    /// assert!(s.memory_estimate_without_series() < s.memory_estimate());
    /// ```
    pub fn memory_estimate(&self) -> u128 {
        self.estimate(self.setup.series.enabled)
    }

    /// [`Scenario::memory_estimate`] of a run that records no queue lengths (`[output] series
    /// = false`), as a prediction for real workers runs it.
    pub fn memory_estimate_without_series(&self) -> u128 {
        self.estimate(false)
    }

    fn estimate(&self, series: bool) -> u128 {
        let setup = &self.setup;
        let mut tasks: u128 = setup.initial.iter().map(|&w| u128::from(w)).sum();
        tasks += setup
            .injections
            .iter()
            .map(|i| u128::from(i.tasks))
            .sum::<u128>();
        if let Some(a) = &setup.arrivals {
            tasks += a
                .rates
                .iter()
                .filter(|&&r| r > 0.0)
                .map(|&r| {
                    let by_time = setup
                        .end_time
                        .map_or(u128::MAX, |t| (r * t * 1.1 + 10.0).min(1e30) as u128);
                    a.per_node.map_or(by_time, |k| u128::from(k).min(by_time))
                })
                .fold(0u128, u128::saturating_add);
        }
        let per_task = if series { 48 } else { 16 };
        let nodes = crate::model::NodeModel::node_count(&self.nodes) as u128;
        let links = self.links.table().link_count() as u128;
        tasks
            .saturating_mul(per_task)
            .saturating_add(nodes * 400 + links * 64)
    }

    /// The engine of one run with the scenario's own seed, ready to run: its nodes, links,
    /// policy and setup copied, every node's state allocated (what a run costs before its
    /// first event; [`Engine::run`] is the event loop).
    ///
    /// # Errors
    /// [`SimError::Setup`] if the parts do not agree (the scenario was validated, so this is
    /// rare).
    pub fn engine(&self) -> Result<Engine<Nodes, Links, AnyPolicy>, SimError> {
        Engine::new(
            self.nodes.clone(),
            self.links.clone(),
            self.policy.build_seeded(self.setup.seed),
            self.setup.clone(),
        )
    }

    /// Runs the scenario once with its own seed.
    ///
    /// # Errors
    /// [`SimError`] if the policy fails (the scenario was validated, so this is rare).
    pub fn run(&self) -> Result<Report, SimError> {
        self.engine()?.run()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.links.network().node_count()
    }
}

struct Validator<'a> {
    source: &'a str,
    /// The scenario's directory, for `file:` topologies.
    dir: Option<PathBuf>,
    /// The most bytes the network, links and per-node state may need.
    max_bytes: u128,
}

/// Bytes a run holds per node (queues, state, report) and per directed link (its model and
/// state), as [`Scenario::memory_estimate`] counts them.
const NODE_BYTES: u128 = 400;
/// See [`NODE_BYTES`].
const ARC_BYTES: u128 = 64;

/// `1.5 GiB`, `300 MiB`, …
fn human(bytes: u128) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else {
        format!("{:.0} MiB", (b / (1u64 << 20) as f64).ceil())
    }
}

impl Validator<'_> {
    fn err<T>(
        &self,
        field: impl Into<String>,
        span: Option<std::ops::Range<usize>>,
        message: impl Into<String>,
    ) -> Result<T, ScenarioError> {
        Err(ScenarioError::at(self.source, field, span, message))
    }

    /// A rate in `MIN_RATE..=MAX_RATE` (or `inf` where allowed).
    fn positive(
        &self,
        field: &str,
        v: &Spanned<f64>,
        allow_inf: bool,
    ) -> Result<f64, ScenarioError> {
        self.rate(field, *v.get_ref(), span(v), allow_inf)
    }

    fn rate(
        &self,
        field: &str,
        x: f64,
        at: Option<std::ops::Range<usize>>,
        allow_inf: bool,
    ) -> Result<f64, ScenarioError> {
        if (x.is_infinite() && x > 0.0 && allow_inf) || (MIN_RATE..=MAX_RATE).contains(&x) {
            Ok(x)
        } else if x > 0.0 && x.is_finite() {
            self.err(
                field,
                at,
                format!(
                    "{} is out of range: rates lie between {MIN_RATE:e} and {MAX_RATE:e} \
                     tasks/s, so that every time of the run stays finite",
                    number(x)
                ),
            )
        } else if allow_inf {
            self.err(field, at, format!("{x} must be positive (inf for instant)"))
        } else {
            self.err(field, at, format!("{x} must be positive and finite"))
        }
    }

    /// A time in seconds in `0..=MAX_TIME` (`min_exclusive`: above 0).
    fn time(&self, field: &str, v: &Spanned<f64>, above_zero: bool) -> Result<f64, ScenarioError> {
        let x = *v.get_ref();
        if x > MAX_TIME {
            return self.err(
                field,
                span(v),
                format!(
                    "{} is out of range: at most {MAX_TIME:e} seconds",
                    number(x)
                ),
            );
        }
        match (above_zero, x > 0.0, x >= 0.0) {
            (true, true, _) | (false, _, true) => Ok(x),
            (true, ..) => self.err(field, span(v), format!("{x} must be positive and finite")),
            (false, ..) => self.err(
                field,
                span(v),
                format!("{x} must be finite and non-negative"),
            ),
        }
    }

    /// Rejects fields given for a `kind` they do not belong to.
    fn only<K: std::fmt::Debug>(
        &self,
        table: &str,
        fields: &[(&str, Option<std::ops::Range<usize>>, bool)],
        kind: &Spanned<K>,
    ) -> Result<(), ScenarioError> {
        for (name, given, allowed) in fields {
            if let (Some(at), false) = (given, allowed) {
                return self.err(
                    format!("{table}.{name}"),
                    Some(at.clone()),
                    format!(
                        "not used by kind \"{}\"",
                        kebab(&format!("{:?}", kind.get_ref()))
                    ),
                );
            }
        }
        Ok(())
    }

    fn non_negative(&self, field: &str, v: &Spanned<f64>) -> Result<f64, ScenarioError> {
        self.time(field, v, false)
    }

    /// Refuses `bytes` above the limit, naming `field`.
    fn fits(
        &self,
        field: &str,
        at: Option<std::ops::Range<usize>>,
        bytes: u128,
    ) -> Result<(), ScenarioError> {
        if bytes > self.max_bytes {
            return self.err(
                field,
                at,
                format!(
                    "the run's network, links and nodes need about {} of memory, above the \
                     limit of {}",
                    human(bytes),
                    human(self.max_bytes)
                ),
            );
        }
        Ok(())
    }

    /// The nodes and directed links of the `[topology]` given as a spec or a generated
    /// `kind`, without building it (`None` for files and explicit edge lists, which are
    /// bounded by the file's size).
    fn spec_size(&self, t: &Spanned<file::TopologyFile>) -> Option<(u128, u128)> {
        let t = t.get_ref();
        let text = t
            .inline_spec
            .clone()
            .or_else(|| t.spec.as_ref().map(|s| s.get_ref().clone()));
        if let Some(text) = text {
            return text.parse::<TopologySpec>().ok()?.size_estimate();
        }
        None
    }

    /// The network of `[topology]`: a core spec (`topology = "ring:6"` or `spec = …`), or the
    /// older `kind` form. Either way the core's graph rules apply.
    fn topology(
        &self,
        t: &Spanned<file::TopologyFile>,
        n: usize,
    ) -> Result<Network, ScenarioError> {
        let whole = span(t);
        let t = t.get_ref();
        let spec = match (&t.inline_spec, &t.spec) {
            (Some(text), _) => Some((text.clone(), whole.clone())),
            (None, Some(s)) => Some((s.get_ref().clone(), span(s))),
            (None, None) => None,
        };
        if let Some((text, at)) = spec {
            return self.spec_network(t, &text, at, n);
        }
        let Some(kind) = &t.kind else {
            return self.err(
                "topology",
                whole,
                "missing: give a spec (topology = \"ring:6\") or `kind`",
            );
        };
        self.kind_network(t, kind, n)
    }

    /// The network of a core spec `text` (at `at`) for `n` nodes: given alone, its graph file
    /// read beside the scenario.
    fn spec_network(
        &self,
        t: &file::TopologyFile,
        text: &str,
        at: Option<std::ops::Range<usize>>,
        n: usize,
    ) -> Result<Network, ScenarioError> {
        for (name, given) in [
            ("kind", t.kind.as_ref().and_then(span)),
            ("edges", t.edges.as_ref().and_then(span)),
            ("rows", t.rows.as_ref().and_then(span)),
            ("cols", t.cols.as_ref().and_then(span)),
        ] {
            if given.is_some() {
                return self.err(
                    format!("topology.{name}"),
                    given,
                    "give either a topology spec or `kind` and its fields, not both",
                );
            }
        }
        let field = if t.inline_spec.is_some() {
            "topology"
        } else {
            "topology.spec"
        };
        let parsed: TopologySpec = text.parse().or_else(|e: hetlb_core::topology::SpecError| {
            self.err(field, at.clone(), e.to_string())
        })?;
        let network = match &parsed {
            TopologySpec::File(path) => {
                let Some(dir) = &self.dir else {
                    return self.err(
                        field,
                        at,
                        "a file: topology is read relative to the scenario file; load the \
                         scenario with Scenario::from_path",
                    );
                };
                let full = dir.join(path);
                let text = read_bounded(&full).or_else(|e| {
                    self.err(field, at.clone(), format!("cannot read '{path}': {e}"))
                })?;
                Network::from_graph(
                    Graph::parse(&text, Some(n))
                        .or_else(|e| self.err(field, at.clone(), format!("{path}: {e}")))?,
                )
            }
            _ => parsed
                .build()
                .or_else(|e| self.err(field, at.clone(), format!("{parsed}: {e}")))?,
        };
        if network.node_count() != n {
            return self.err(
                field,
                at,
                format!(
                    "{parsed} has {} nodes but nodes.count is {n}",
                    network.node_count()
                ),
            );
        }
        Ok(network)
    }

    /// The network of the older form, `kind` and its fields, for `n` nodes.
    fn kind_network(
        &self,
        t: &file::TopologyFile,
        kind_spanned: &Spanned<TopologyKind>,
        n: usize,
    ) -> Result<Network, ScenarioError> {
        let kind = *kind_spanned.get_ref();
        self.only(
            "topology",
            &[
                (
                    "edges",
                    t.edges.as_ref().and_then(span),
                    kind == TopologyKind::Graph,
                ),
                (
                    "rows",
                    t.rows.as_ref().and_then(span),
                    kind == TopologyKind::Torus,
                ),
                (
                    "cols",
                    t.cols.as_ref().and_then(span),
                    kind == TopologyKind::Torus,
                ),
            ],
            kind_spanned,
        )?;
        let legacy = |k: LegacyKind| {
            legacy_network(k, n)
                .or_else(|e| self.err("topology.kind", span(kind_spanned), e.to_string()))
        };
        match kind {
            TopologyKind::Graph => {
                let Some(edges) = &t.edges else {
                    return self.err(
                        "topology.edges",
                        span(kind_spanned),
                        "missing: a graph needs `edges`",
                    );
                };
                let graph = Graph::from_edges(n, edges.get_ref().iter().copied())
                    .or_else(|e| self.err("topology.edges", span(edges), e.to_string()))?;
                Ok(Network::from_graph(graph))
            }
            TopologyKind::Ring => legacy(LegacyKind::Ring),
            TopologyKind::Complete => legacy(LegacyKind::Complete),
            TopologyKind::Hypercube => legacy(LegacyKind::Hypercube),
            TopologyKind::Torus => {
                let (Some(rows), Some(cols)) = (&t.rows, &t.cols) else {
                    return self.err(
                        "topology.rows",
                        span(kind_spanned),
                        "missing: a torus needs `rows` and `cols`",
                    );
                };
                let (r, c) = (*rows.get_ref(), *cols.get_ref());
                if r.checked_mul(c) != Some(n) {
                    return self.err(
                        "topology.rows",
                        span(rows),
                        format!("a {r} x {c} torus does not have {n} nodes"),
                    );
                }
                TopologySpec::Torus(r, c)
                    .build()
                    .or_else(|e| self.err("topology.rows", span(rows), e.to_string()))
            }
        }
    }

    /// `kind = "diffusion"`: `algorithm` (one of the five diffusion rules), `interval`, and
    /// `lambda` for `gdem`.
    fn diffusion(&self, p: &file::PolicyFile) -> Result<PolicySpec, ScenarioError> {
        let (Some(algorithm), Some(interval)) = (&p.algorithm, &p.interval) else {
            let missing = if p.algorithm.is_none() {
                "algorithm"
            } else {
                "interval"
            };
            return self.err(
                format!("policy.{missing}"),
                span(&p.kind),
                "missing: diffusion needs `algorithm` (dishet, dishet-tight, diffusion, random-biasing, \
                 dynamic-biasing or gdem) and `interval` (seconds between rounds)",
            );
        };
        let expected =
            "expected dishet, dishet-tight, diffusion, random-biasing, dynamic-biasing or gdem";
        let alg: Algorithm = algorithm
            .get_ref()
            .parse()
            .ok()
            .filter(|a| Algorithm::DIFFUSION.contains(a))
            .map_or_else(
                || {
                    self.err(
                        "policy.algorithm",
                        span(algorithm),
                        format!(
                            "'{}' is not a diffusion algorithm ({expected})",
                            algorithm.get_ref()
                        ),
                    )
                },
                Ok,
            )?;
        let iv = self.time("policy.interval", interval, true)?;
        let lambda = match &p.lambda {
            None => None,
            Some(l) => {
                let x = *l.get_ref();
                if alg != Algorithm::Gdem {
                    return self.err(
                        "policy.lambda",
                        span(l),
                        format!("only gdem takes λ, not {alg}"),
                    );
                }
                if !(x > 0.0 && x < 1.0) {
                    return self.err(
                        "policy.lambda",
                        span(l),
                        format!("{x} must lie strictly between 0 and 1"),
                    );
                }
                Some(x)
            }
        };
        DiffusionSettings::new(alg, iv, lambda)
            .map(PolicySpec::Diffusion)
            .or_else(|e| self.err("policy", span(&p.kind), e.to_string()))
    }

    fn scenario(&self, f: File) -> Result<Scenario, ScenarioError> {
        let n = *f.nodes.count.get_ref();
        let (nodes, initial, mut tasks_total) = self.nodes(&f.nodes)?;
        let network = self.network(&f.nodes.count, &f.topology)?;
        let is_cube = matches!(network, Network::Hypercube(_));
        let links = self.links(f.links, network)?;
        let injections = self.injections(&f.injections, n, &mut tasks_total)?;
        let end_time = self.end_time(f.end_time.as_ref(), &injections)?;
        let arrivals = match &f.arrivals {
            None => None,
            Some(a) => Some(self.arrivals(a, n, end_time, tasks_total)?),
        };
        let (policy, status_interval) = match &f.policy {
            None => (PolicySpec::None, None),
            Some(p) => self.policy(p, is_cube)?,
        };
        if let (PolicySpec::Diffusion(settings), Some(p)) = (&policy, &f.policy) {
            let rounds = round_estimate(
                &nodes,
                &links,
                &injections,
                arrivals.as_ref(),
                end_time,
                settings.interval(),
                tasks_total,
            );
            if rounds > MAX_ROUNDS {
                return self.err(
                    "policy.interval",
                    p.interval.as_ref().and_then(span),
                    format!(
                        "{} s between rounds could need about {rounds:.1e} rounds before the work \
                         is done (at most {MAX_ROUNDS:e}); choose a longer interval or an end_time",
                        settings.interval()
                    ),
                );
            }
        }
        if let (Some(iv), Some(p)) = (status_interval, &f.policy) {
            // Every report refreshes every node's: as costly as a round, as bounded.
            let reports = round_estimate(
                &nodes,
                &links,
                &injections,
                arrivals.as_ref(),
                end_time,
                iv,
                tasks_total,
            );
            if reports > MAX_ROUNDS {
                return self.err(
                    "policy.status_interval",
                    p.status_interval.as_ref().and_then(span),
                    format!(
                        "{iv} s between status reports could need about {reports:.1e} reports \
                         before the work is done (at most {MAX_ROUNDS:e}); choose a longer \
                         interval or an end_time"
                    ),
                );
            }
        }
        let (series, check_conservation) = self.output(f.output.as_ref())?;
        Ok(Scenario {
            name: f.name,
            description: f.description,
            nodes,
            links,
            setup: Setup {
                initial,
                injections,
                arrivals,
                seed: f.seed.unwrap_or(0),
                end_time,
                status_interval,
                series,
                check_conservation,
            },
            policy,
        })
    }

    /// `[nodes]`: the nodes, their initial loads and the tasks those add up to.
    fn nodes(&self, f: &file::NodesFile) -> Result<(Nodes, Vec<u64>, u64), ScenarioError> {
        let n = *f.count.get_ref();
        if n == 0 || n > MAX_NODES {
            return self.err(
                "nodes.count",
                span(&f.count),
                format!("{n} is out of range: from 1 to {MAX_NODES} nodes"),
            );
        }
        let rates = match self.rates("nodes", f.rate.as_ref(), f.rates.as_ref(), n, false)? {
            Some(rates) => rates,
            None if f.rate.is_some() => {
                return self.err(
                    "nodes.rates",
                    f.rates.as_ref().and_then(span),
                    "give either `rate` or `rates`, not both",
                );
            }
            None => {
                return self.err(
                    "nodes.rate",
                    span(&f.count),
                    "missing: give `rate` (tasks/s for every node) or `rates`",
                );
            }
        };
        let initial = match (f.initial, &f.initial_loads) {
            (Some(_), Some(l)) => {
                return self.err(
                    "nodes.initial_loads",
                    span(l),
                    "give either `initial` or `initial_loads`, not both",
                );
            }
            (Some(w), None) => vec![w; n],
            (None, Some(l)) => {
                if l.get_ref().len() != n {
                    return self.err(
                        "nodes.initial_loads",
                        span(l),
                        format!("{} loads for {n} nodes", l.get_ref().len()),
                    );
                }
                l.get_ref().clone()
            }
            (None, None) => vec![0; n],
        };
        let total = initial
            .iter()
            .try_fold(0u64, |a, &w| a.checked_add(w))
            .filter(|&t| t <= MAX_TASKS);
        let Some(total) = total else {
            return self.err(
                "nodes.initial",
                None,
                "the initial loads add up to more than 2^62 tasks",
            );
        };
        Ok((
            Nodes::new(rates, f.service.unwrap_or_default()),
            initial,
            total,
        ))
    }

    /// The rates of `table` (`nodes` or `arrivals`): `rate` for every node or `rates`, one per
    /// node (0 allowed among them with `zero`); `None` unless exactly one of the two is given.
    fn rates(
        &self,
        table: &str,
        rate: Option<&Spanned<f64>>,
        rates: Option<&Spanned<Vec<f64>>>,
        n: usize,
        zero: bool,
    ) -> Result<Option<Vec<f64>>, ScenarioError> {
        match (rate, rates) {
            (Some(r), None) => Ok(Some(vec![
                self.positive(&format!("{table}.rate"), r, false)?;
                n
            ])),
            (None, Some(rs)) => {
                if rs.get_ref().len() != n {
                    return self.err(
                        format!("{table}.rates"),
                        span(rs),
                        format!("{} rates for {n} nodes", rs.get_ref().len()),
                    );
                }
                for (i, &x) in rs.get_ref().iter().enumerate() {
                    if !(zero && x == 0.0) {
                        self.rate(&format!("{table}.rates[{i}]"), x, span(rs), false)?;
                    }
                }
                Ok(Some(rs.get_ref().clone()))
            }
            _ => Ok(None),
        }
    }

    /// The network of `[topology]` for `count` nodes, refused before it is built when it, its
    /// links and the nodes would not fit.
    fn network(
        &self,
        count: &Spanned<usize>,
        topology: &Spanned<file::TopologyFile>,
    ) -> Result<Network, ScenarioError> {
        let n = *count.get_ref();
        let bytes = |arcs: u128| {
            (n as u128)
                .saturating_mul(NODE_BYTES)
                .saturating_add(arcs.saturating_mul(ARC_BYTES))
        };
        self.fits("nodes.count", span(count), bytes(0))?;
        if let Some((_, arcs)) = self.spec_size(topology) {
            self.fits("topology", span(topology), bytes(arcs))?;
        }
        let network = self.topology(topology, n)?;
        let arcs = (0..n).map(|i| network.degree(i) as u128).sum::<u128>();
        self.fits("topology", span(topology), bytes(arcs))?;
        Ok(network)
    }

    /// `[links]` over `network`: the default link and the overrides.
    fn links(&self, f: Option<file::LinksFile>, network: Network) -> Result<Links, ScenarioError> {
        let mut default = LinkParams::INSTANT;
        let mut overrides = Vec::new();
        if let Some(l) = f {
            if let Some(r) = &l.rate {
                default.rate = self.positive("links.rate", r, true)?;
            }
            if let Some(d) = &l.delay {
                default.delay = self.non_negative("links.delay", d)?;
            }
            default.distribution = l.delay_distribution.unwrap_or_default();
            for (i, o) in l.overrides.iter().enumerate() {
                let mut p = default;
                if let Some(r) = &o.rate {
                    p.rate = self.positive(&format!("links.overrides[{i}].rate"), r, true)?;
                }
                if let Some(d) = &o.delay {
                    p.delay = self.non_negative(&format!("links.overrides[{i}].delay"), d)?;
                }
                overrides.push((i, o.between.clone(), p));
            }
        }
        let mut links = Links::uniform(network, default);
        for (i, between, p) in overrides {
            let (a, b) = *between.get_ref();
            if !links.set(a, b, p) {
                return self.err(
                    format!("links.overrides[{i}].between"),
                    span(&between),
                    format!("there is no link between nodes {a} and {b}"),
                );
            }
        }
        Ok(links)
    }

    /// `[[injections]]` on `n` nodes, their tasks added to `tasks_total`.
    fn injections(
        &self,
        f: &[file::InjectionFile],
        n: usize,
        tasks_total: &mut u64,
    ) -> Result<Vec<Injection>, ScenarioError> {
        let mut injections = Vec::with_capacity(f.len());
        for (i, inj) in f.iter().enumerate() {
            let node = *inj.node.get_ref();
            if node >= n {
                return self.err(
                    format!("injections[{i}].node"),
                    span(&inj.node),
                    format!("node {node} does not exist (nodes are 0..{})", n - 1),
                );
            }
            let time = self.time(&format!("injections[{i}].time"), &inj.time, false)?;
            *tasks_total = match tasks_total.checked_add(*inj.tasks.get_ref()) {
                Some(t) if t <= MAX_TASKS => t,
                _ => {
                    return self.err(
                        format!("injections[{i}].tasks"),
                        span(&inj.tasks),
                        "the tasks of the scenario add up to more than 2^62",
                    );
                }
            };
            injections.push(Injection {
                node,
                time,
                tasks: *inj.tasks.get_ref(),
            });
        }
        Ok(injections)
    }

    /// `end_time`, which must come after every injection.
    fn end_time(
        &self,
        f: Option<&Spanned<f64>>,
        injections: &[Injection],
    ) -> Result<Option<f64>, ScenarioError> {
        let Some(e) = f else {
            return Ok(None);
        };
        let t = self.time("end_time", e, true)?;
        if let Some((i, last)) = injections
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.time.total_cmp(&b.1.time))
            && last.time > t
        {
            return self.err(
                "end_time",
                span(e),
                format!(
                    "{t} is before injection {i} at {}; the run must reach every injection",
                    last.time
                ),
            );
        }
        Ok(Some(t))
    }

    /// `[arrivals]` on `n` nodes, bounded by `per_node` or `end_time`, with `tasks_total`
    /// tasks already in the scenario.
    fn arrivals(
        &self,
        a: &Spanned<file::ArrivalsFile>,
        n: usize,
        end_time: Option<f64>,
        tasks_total: u64,
    ) -> Result<Arrivals, ScenarioError> {
        let a_span = span(a);
        let a = a.get_ref();
        let Some(rates) = self.rates("arrivals", a.rate.as_ref(), a.rates.as_ref(), n, true)?
        else {
            return self.err(
                "arrivals.rate",
                a_span,
                "give exactly one of `rate` and `rates`",
            );
        };
        if a.per_node.is_none() && end_time.is_none() {
            return self.err(
                "arrivals.per_node",
                a_span,
                "unlimited arrivals need `per_node` or a top-level `end_time`",
            );
        }
        if let Some(k) = a.per_node
            && u64::try_from(n)
                .ok()
                .and_then(|n| n.checked_mul(k))
                .and_then(|t| t.checked_add(tasks_total))
                .is_none_or(|t| t > MAX_TASKS)
        {
            return self.err(
                "arrivals.per_node",
                a_span,
                format!("{k} tasks on each of {n} nodes add up to more than 2^62"),
            );
        }
        Ok(Arrivals {
            rates,
            per_node: a.per_node,
        })
    }

    /// `[policy]` on a network that is a hypercube or not: the policy and the delay-aware
    /// policy's status interval.
    fn policy(
        &self,
        p: &file::PolicyFile,
        is_cube: bool,
    ) -> Result<(PolicySpec, Option<f64>), ScenarioError> {
        let kind = *p.kind.get_ref();
        let delay_aware = kind == PolicyKind::DelayAware;
        let hypercube = kind == PolicyKind::Hypercube;
        let diffusion = kind == PolicyKind::Diffusion;
        let fields = [
            (
                "compensate",
                p.compensate.as_ref().and_then(span),
                delay_aware,
            ),
            (
                "carry_out",
                p.carry_out.as_ref().and_then(span),
                delay_aware,
            ),
            (
                "status_interval",
                p.status_interval.as_ref().and_then(span),
                delay_aware,
            ),
            (
                "algorithm",
                p.algorithm.as_ref().and_then(span),
                hypercube || diffusion,
            ),
            ("threshold", p.threshold.as_ref().and_then(span), hypercube),
            ("interval", p.interval.as_ref().and_then(span), diffusion),
            ("lambda", p.lambda.as_ref().and_then(span), diffusion),
        ];
        self.only("policy", &fields, &p.kind)?;
        Ok(match kind {
            PolicyKind::None => (PolicySpec::None, None),
            PolicyKind::Diffusion => (self.diffusion(p)?, None),
            PolicyKind::DelayAware => self.delay_aware(p)?,
            PolicyKind::Hypercube => (self.hypercube(p, is_cube)?, None),
        })
    }

    /// `kind = "delay-aware"`: `compensate`, `carry_out` and `status_interval`.
    fn delay_aware(
        &self,
        p: &file::PolicyFile,
    ) -> Result<(PolicySpec, Option<f64>), ScenarioError> {
        let status_interval = match &p.status_interval {
            Some(iv) => Some(self.positive("policy.status_interval", iv, false)?),
            None => None,
        };
        let compensate = p.compensate.as_ref().is_none_or(|c| *c.get_ref());
        let spec = PolicySpec::DelayAware {
            compensation: if compensate {
                Compensation::Factor
            } else {
                Compensation::None
            },
            carry: p
                .carry_out
                .as_ref()
                .map(|c| *c.get_ref())
                .unwrap_or_default(),
        };
        Ok((spec, status_interval))
    }

    /// `kind = "hypercube"`: `algorithm` and `threshold`, on a hypercube.
    fn hypercube(&self, p: &file::PolicyFile, is_cube: bool) -> Result<PolicySpec, ScenarioError> {
        let (Some(algorithm), Some(threshold)) = (&p.algorithm, &p.threshold) else {
            let missing = if p.algorithm.is_none() {
                "algorithm"
            } else {
                "threshold"
            };
            return self.err(
                format!("policy.{missing}"),
                span(&p.kind),
                "missing: hypercube balancing needs `algorithm` and `threshold`",
            );
        };
        let alg: Algorithm = algorithm
            .get_ref()
            .parse()
            .or_else(|e| self.err("policy.algorithm", span(algorithm), format!("{e}")))?;
        if !is_cube {
            return self.err(
                "policy.kind",
                span(&p.kind),
                "hypercube balancing needs a hypercube topology \
                 (`topology = \"hypercube:D\"` or `kind = \"hypercube\"`)",
            );
        }
        if *threshold.get_ref() == 0 {
            return self.err(
                "policy.threshold",
                span(threshold),
                "must be at least 1 task",
            );
        }
        Ok(PolicySpec::Hypercube {
            algorithm: alg,
            threshold: *threshold.get_ref(),
        })
    }

    /// `[output]`: the time series and the conservation check.
    fn output(&self, f: Option<&file::OutputFile>) -> Result<(SeriesOptions, bool), ScenarioError> {
        let mut series = SeriesOptions {
            enabled: true,
            interval: 0.0,
        };
        let mut check_conservation = false;
        if let Some(o) = f {
            series.enabled = o.series.unwrap_or(true);
            if let Some(iv) = &o.series_interval {
                series.interval = self.non_negative("output.series_interval", iv)?;
            }
            check_conservation = o.check_conservation.unwrap_or(false);
        }
        Ok((series, check_conservation))
    }
}

/// An upper estimate of the rounds a periodic policy runs: the horizon (the end time, or the
/// last injection or arrival plus every task executed by the slowest node and carried by the
/// slowest link) divided by the interval.
fn round_estimate(
    nodes: &Nodes,
    links: &Links,
    injections: &[Injection],
    arrivals: Option<&Arrivals>,
    end_time: Option<f64>,
    interval: f64,
    tasks: u64,
) -> f64 {
    use crate::model::NodeModel;
    let horizon = end_time.unwrap_or_else(|| {
        let slowest_node = (0..nodes.node_count())
            .map(|i| nodes.rate(i))
            .fold(f64::INFINITY, f64::min);
        let table = links.table();
        let (slowest_link, longest_delay) = (0..table.link_count())
            .fold((f64::INFINITY, 0.0f64), |(r, d), l| {
                (r.min(links.rate(l)), d.max(links.mean_delay(l)))
            });
        let last_injection = injections.iter().map(|i| i.time).fold(0.0, f64::max);
        let arrivals_end = arrivals.map_or(0.0, |a| {
            let slowest = a
                .rates
                .iter()
                .copied()
                .filter(|&r| r > 0.0)
                .fold(f64::INFINITY, f64::min);
            a.per_node.map_or(0.0, |k| {
                if slowest.is_finite() {
                    k as f64 / slowest
                } else {
                    0.0
                }
            })
        });
        let carry = if slowest_link.is_finite() {
            tasks as f64 / slowest_link
        } else {
            0.0
        };
        last_injection.max(arrivals_end) + tasks as f64 / slowest_node + carry + longest_delay
    });
    horizon / interval
}

/// The largest scenario or graph file read, in bytes (1 GiB): a larger one, or a device that
/// never ends (`/dev/zero`), is refused instead of filling the memory.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Reads a regular text file of at most [`MAX_FILE_BYTES`] with the one bounded reader.
fn read_bounded(path: &Path) -> std::io::Result<String> {
    hetlb_core::text_file::read_text(path, MAX_FILE_BYTES).map_err(|e| match e {
        hetlb_core::text_file::ReadError::Io(io) => io,
        other => std::io::Error::other(other.to_string()),
    })
}

/// `x` as written by a person: `1e-308`, not three hundred zeros.
fn number(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e16).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `DelayAware` → `delay-aware`.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push('-');
        }
        out.extend(c.to_lowercase());
    }
    out
}
