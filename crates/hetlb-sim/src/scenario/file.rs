//! The scenario file as written: every table with `deny_unknown_fields`, values that need a
//! semantic check kept with their position.

use crate::model::Distribution;
use serde::Deserialize;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct File {
    pub name: Option<String>,
    pub description: Option<String>,
    pub seed: Option<u64>,
    pub end_time: Option<Spanned<f64>>,
    pub nodes: NodesFile,
    pub topology: TopologyFile,
    pub links: Option<LinksFile>,
    #[serde(default)]
    pub injections: Vec<InjectionFile>,
    pub arrivals: Option<Spanned<ArrivalsFile>>,
    pub policy: Option<PolicyFile>,
    pub output: Option<OutputFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodesFile {
    pub count: Spanned<usize>,
    pub rate: Option<Spanned<f64>>,
    pub rates: Option<Spanned<Vec<f64>>>,
    pub service: Option<Distribution>,
    pub initial: Option<u64>,
    pub initial_loads: Option<Spanned<Vec<u64>>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TopologyKind {
    Graph,
    Ring,
    Complete,
    Hypercube,
    Torus,
}

/// `kind` plus the fields of every kind; the validator rejects fields that do not belong to
/// the kind (an internally tagged enum would lose the positions).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TopologyFile {
    pub kind: Spanned<TopologyKind>,
    pub edges: Option<Spanned<Vec<(usize, usize)>>>,
    pub rows: Option<Spanned<usize>>,
    pub cols: Option<Spanned<usize>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinksFile {
    pub rate: Option<Spanned<f64>>,
    pub delay: Option<Spanned<f64>>,
    pub delay_distribution: Option<Distribution>,
    #[serde(default)]
    pub overrides: Vec<LinkOverrideFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LinkOverrideFile {
    pub between: Spanned<(usize, usize)>,
    pub rate: Option<Spanned<f64>>,
    pub delay: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct InjectionFile {
    pub node: Spanned<usize>,
    pub time: Spanned<f64>,
    pub tasks: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArrivalsFile {
    pub rate: Option<Spanned<f64>>,
    pub rates: Option<Spanned<Vec<f64>>>,
    pub per_node: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PolicyKind {
    None,
    DelayAware,
    Hypercube,
}

/// `kind` plus the fields of every kind, as for [`TopologyFile`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    pub kind: Spanned<PolicyKind>,
    pub compensate: Option<Spanned<bool>>,
    pub status_interval: Option<Spanned<f64>>,
    pub algorithm: Option<Spanned<String>>,
    pub threshold: Option<Spanned<u64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OutputFile {
    pub series: Option<bool>,
    pub series_interval: Option<Spanned<f64>>,
    pub check_conservation: Option<bool>,
}
