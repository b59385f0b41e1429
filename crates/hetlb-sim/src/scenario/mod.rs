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
//! [topology]
//! kind = "graph"                       # "graph", "ring", "complete", "hypercube", "torus"
//! edges = [[0, 1], [1, 2], [2, 3], [3, 4], [4, 0], [4, 5]]
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
//! # status_interval = 0.5             # delay-aware: neighbours report every 0.5 s
//! # algorithm = "oem"                  # hypercube: dem, oem, dem-improved, cwa, ...
//! # threshold = 4                      # hypercube: overload threshold in tasks
//!
//! [output]                             # optional
//! series = true                        # record queue lengths (default true)
//! series_interval = 0.0                # minimum seconds between samples of a node
//! check_conservation = false           # recount every task after every event
//! ```
//!
//! Node ids are 0-based. Every table rejects unknown fields; every error names its field and
//! line ([`ScenarioError`]).

mod error;
mod file;

pub use error::ScenarioError;

use crate::engine::{Arrivals, Engine, Injection, SeriesOptions, Setup, SimError};
use crate::model::{LinkModel, LinkParams, Links, Nodes};
use crate::network::Network;
use crate::policy::{AnyPolicy, DelayAware, HypercubeThreshold, NoBalancing};
use crate::report::Report;
use file::{File, PolicyKind, TopologyKind};
use hetlb_core::Algorithm;
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::topology::Topology;
use std::path::Path;
use toml::Spanned;

/// The balancing policy of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum PolicySpec {
    /// No balancing.
    None,
    /// The one-shot delay-aware policy (003_…).
    DelayAware {
        /// With the compensating factor or `k = 1`.
        compensation: Compensation,
    },
    /// Threshold-triggered hypercube balancing (004_… §4).
    Hypercube {
        /// The core algorithm.
        algorithm: Algorithm,
        /// Overload threshold in tasks.
        threshold: u64,
    },
}

impl PolicySpec {
    /// A fresh policy for one run.
    pub fn build(&self) -> AnyPolicy {
        match *self {
            PolicySpec::None => AnyPolicy::None(NoBalancing),
            PolicySpec::DelayAware { compensation } => {
                AnyPolicy::DelayAware(DelayAware::new(compensation))
            }
            PolicySpec::Hypercube {
                algorithm,
                threshold,
            } => AnyPolicy::Hypercube(HypercubeThreshold::new(algorithm, threshold)),
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
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
            field: "file".to_string(),
            line: None,
            message: format!("cannot read it: {e}"),
        })?;
        Self::from_toml(&text)
    }

    /// Parses and validates a scenario.
    ///
    /// # Errors
    /// [`ScenarioError`]: unknown or missing fields, wrong types, zero or negative rates,
    /// injections into unknown nodes or before time 0, an end time before the last
    /// injection, and so on.
    pub fn from_toml(source: &str) -> Result<Self, ScenarioError> {
        let file: File =
            toml::from_str(source).map_err(|e| ScenarioError::from_toml(source, &e))?;
        Validator { source }.scenario(file)
    }

    /// Runs the scenario once with its own seed.
    ///
    /// # Errors
    /// [`SimError`] if the policy fails (the scenario was validated, so this is rare).
    pub fn run(&self) -> Result<Report, SimError> {
        Engine::new(
            self.nodes.clone(),
            self.links.clone(),
            self.policy.build(),
            self.setup.clone(),
        )?
        .run()
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.links.network().node_count()
    }
}

struct Validator<'a> {
    source: &'a str,
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

    fn positive(
        &self,
        field: &str,
        v: &Spanned<f64>,
        allow_inf: bool,
    ) -> Result<f64, ScenarioError> {
        let x = *v.get_ref();
        let ok = x > 0.0 && (x.is_finite() || allow_inf) && !x.is_nan();
        if ok {
            Ok(x)
        } else if allow_inf {
            self.err(
                field,
                span(v),
                format!("{x} must be positive (inf for instant)"),
            )
        } else {
            self.err(field, span(v), format!("{x} must be positive and finite"))
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
        let x = *v.get_ref();
        if x.is_finite() && x >= 0.0 {
            Ok(x)
        } else {
            self.err(
                field,
                span(v),
                format!("{x} must be finite and non-negative"),
            )
        }
    }

    fn scenario(&self, f: File) -> Result<Scenario, ScenarioError> {
        // Nodes.
        let n = *f.nodes.count.get_ref();
        if n == 0 {
            return self.err(
                "nodes.count",
                span(&f.nodes.count),
                "at least one node is needed",
            );
        }
        let rates = match (&f.nodes.rate, &f.nodes.rates) {
            (Some(r), None) => vec![self.positive("nodes.rate", r, false)?; n],
            (None, Some(rs)) => {
                if rs.get_ref().len() != n {
                    return self.err(
                        "nodes.rates",
                        span(rs),
                        format!("{} rates for {n} nodes", rs.get_ref().len()),
                    );
                }
                for (i, &x) in rs.get_ref().iter().enumerate() {
                    if !(x.is_finite() && x > 0.0) {
                        return self.err(
                            format!("nodes.rates[{i}]"),
                            span(rs),
                            format!("{x} must be positive and finite"),
                        );
                    }
                }
                rs.get_ref().clone()
            }
            (Some(_), Some(rs)) => {
                return self.err(
                    "nodes.rates",
                    span(rs),
                    "give either `rate` or `rates`, not both",
                );
            }
            (None, None) => {
                return self.err(
                    "nodes.rate",
                    span(&f.nodes.count),
                    "missing: give `rate` (tasks/s for every node) or `rates`",
                );
            }
        };
        let initial = match (f.nodes.initial, &f.nodes.initial_loads) {
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
        if initial
            .iter()
            .try_fold(0u64, |a, &w| a.checked_add(w))
            .is_none()
        {
            return self.err(
                "nodes.initial",
                None,
                "the initial loads add up to more than 2^64",
            );
        }
        let nodes = Nodes::new(rates, f.nodes.service.unwrap_or_default());

        // Topology.
        let t = &f.topology;
        let kind = *t.kind.get_ref();
        let kind_of_topology = kind;
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
            &t.kind,
        )?;
        let network = match kind {
            TopologyKind::Graph => {
                let Some(edges) = &t.edges else {
                    return self.err(
                        "topology.edges",
                        span(&t.kind),
                        "missing: a graph needs `edges`",
                    );
                };
                Network::from_edges(n, edges.get_ref())
                    .or_else(|e| self.err("topology.edges", span(edges), e.to_string()))?
            }
            TopologyKind::Ring => Network::ring(n),
            TopologyKind::Complete => Network::complete(n),
            TopologyKind::Hypercube => Network::hypercube(n)
                .or_else(|e| self.err("topology.kind", span(&t.kind), e.to_string()))?,
            TopologyKind::Torus => {
                let (Some(rows), Some(cols)) = (&t.rows, &t.cols) else {
                    return self.err(
                        "topology.rows",
                        span(&t.kind),
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
                Network::torus(r, c)
            }
        };

        // Links.
        let mut default = LinkParams::INSTANT;
        let mut overrides = Vec::new();
        if let Some(l) = f.links {
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

        // Injections and end time.
        let mut injections = Vec::with_capacity(f.injections.len());
        for (i, inj) in f.injections.iter().enumerate() {
            let node = *inj.node.get_ref();
            if node >= n {
                return self.err(
                    format!("injections[{i}].node"),
                    span(&inj.node),
                    format!("node {node} does not exist (nodes are 0..{})", n - 1),
                );
            }
            let time = *inj.time.get_ref();
            if !(time.is_finite() && time >= 0.0) {
                return self.err(
                    format!("injections[{i}].time"),
                    span(&inj.time),
                    format!("{time} must be finite and not before 0"),
                );
            }
            injections.push(Injection {
                node,
                time,
                tasks: inj.tasks,
            });
        }
        let end_time = match &f.end_time {
            None => None,
            Some(e) => {
                let t = self.positive("end_time", e, false)?;
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
                Some(t)
            }
        };

        // Arrivals.
        let arrivals = match &f.arrivals {
            None => None,
            Some(a) => {
                let a_span = span(a);
                let a = a.get_ref();
                let rates = match (&a.rate, &a.rates) {
                    (Some(r), None) => vec![self.positive("arrivals.rate", r, false)?; n],
                    (None, Some(rs)) => {
                        if rs.get_ref().len() != n
                            || rs.get_ref().iter().any(|x| !(x.is_finite() && *x >= 0.0))
                        {
                            return self.err(
                                "arrivals.rates",
                                span(rs),
                                format!("need {n} finite non-negative rates"),
                            );
                        }
                        rs.get_ref().clone()
                    }
                    _ => {
                        return self.err(
                            "arrivals.rate",
                            a_span,
                            "give exactly one of `rate` and `rates`",
                        );
                    }
                };
                if a.per_node.is_none() && end_time.is_none() {
                    return self.err(
                        "arrivals.per_node",
                        a_span,
                        "unlimited arrivals need `per_node` or a top-level `end_time`",
                    );
                }
                Some(Arrivals {
                    rates,
                    per_node: a.per_node,
                })
            }
        };

        // Policy.
        let mut status_interval = None;
        let policy = match &f.policy {
            None => PolicySpec::None,
            Some(p) => {
                let kind = *p.kind.get_ref();
                self.only(
                    "policy",
                    &[
                        (
                            "compensate",
                            p.compensate.as_ref().and_then(span),
                            kind == PolicyKind::DelayAware,
                        ),
                        (
                            "status_interval",
                            p.status_interval.as_ref().and_then(span),
                            kind == PolicyKind::DelayAware,
                        ),
                        (
                            "algorithm",
                            p.algorithm.as_ref().and_then(span),
                            kind == PolicyKind::Hypercube,
                        ),
                        (
                            "threshold",
                            p.threshold.as_ref().and_then(span),
                            kind == PolicyKind::Hypercube,
                        ),
                    ],
                    &p.kind,
                )?;
                match kind {
                    PolicyKind::None => PolicySpec::None,
                    PolicyKind::DelayAware => {
                        if let Some(iv) = &p.status_interval {
                            status_interval =
                                Some(self.positive("policy.status_interval", iv, false)?);
                        }
                        let compensate = p.compensate.as_ref().is_none_or(|c| *c.get_ref());
                        PolicySpec::DelayAware {
                            compensation: if compensate {
                                Compensation::Factor
                            } else {
                                Compensation::None
                            },
                        }
                    }
                    PolicyKind::Hypercube => {
                        let (Some(algorithm), Some(threshold)) = (&p.algorithm, &p.threshold)
                        else {
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
                        let alg: Algorithm = algorithm.get_ref().parse().or_else(|e| {
                            self.err("policy.algorithm", span(algorithm), format!("{e}"))
                        })?;
                        if kind_of_topology != TopologyKind::Hypercube {
                            return self.err(
                                "policy.kind",
                                span(&p.kind),
                                "hypercube balancing needs `topology.kind = \"hypercube\"`",
                            );
                        }
                        if *threshold.get_ref() == 0 {
                            return self.err(
                                "policy.threshold",
                                span(threshold),
                                "must be at least 1 task",
                            );
                        }
                        PolicySpec::Hypercube {
                            algorithm: alg,
                            threshold: *threshold.get_ref(),
                        }
                    }
                }
            }
        };

        // Output.
        let mut series = SeriesOptions {
            enabled: true,
            interval: 0.0,
        };
        let mut check_conservation = false;
        if let Some(o) = &f.output {
            series.enabled = o.series.unwrap_or(true);
            if let Some(iv) = &o.series_interval {
                series.interval = self.non_negative("output.series_interval", iv)?;
            }
            check_conservation = o.check_conservation.unwrap_or(false);
        }

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
