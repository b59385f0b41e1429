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
    pub topology: Spanned<TopologyFile>,
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

/// `topology = "ring:16"` (a core topology spec), or a table: `spec = "ring:16"`, or the
/// older `kind` plus the fields of every kind (the validator rejects fields that do not
/// belong to the kind; an internally tagged enum would lose the positions).
#[derive(Debug, Default)]
pub(crate) struct TopologyFile {
    pub spec: Option<Spanned<String>>,
    /// The spec given as the whole value (`topology = "…"`), positioned by the outer span.
    pub inline_spec: Option<String>,
    pub kind: Option<Spanned<TopologyKind>>,
    pub edges: Option<Spanned<Vec<(usize, usize)>>>,
    pub rows: Option<Spanned<usize>>,
    pub cols: Option<Spanned<usize>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopologyTable {
    spec: Option<Spanned<String>>,
    kind: Option<Spanned<TopologyKind>>,
    edges: Option<Spanned<Vec<(usize, usize)>>>,
    rows: Option<Spanned<usize>>,
    cols: Option<Spanned<usize>>,
}

impl<'de> Deserialize<'de> for TopologyFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> serde::de::Visitor<'de> for Either {
            type Value = TopologyFile;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a topology spec such as \"ring:16\", or a table")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<TopologyFile, E> {
                Ok(TopologyFile {
                    inline_spec: Some(s.to_string()),
                    ..TopologyFile::default()
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<TopologyFile, A::Error> {
                let t =
                    TopologyTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(TopologyFile {
                    spec: t.spec,
                    inline_spec: None,
                    kind: t.kind,
                    edges: t.edges,
                    rows: t.rows,
                    cols: t.cols,
                })
            }
        }
        d.deserialize_any(Either)
    }
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
    pub tasks: Spanned<u64>,
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
    Diffusion,
}

/// `kind` plus the fields of every kind, as for [`TopologyFile`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    pub kind: Spanned<PolicyKind>,
    pub compensate: Option<Spanned<bool>>,
    pub carry_out: Option<Spanned<crate::policy::CarryOut>>,
    pub status_interval: Option<Spanned<f64>>,
    pub algorithm: Option<Spanned<String>>,
    pub threshold: Option<Spanned<u64>>,
    pub interval: Option<Spanned<f64>>,
    pub lambda: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OutputFile {
    pub series: Option<bool>,
    pub series_interval: Option<Spanned<f64>>,
    pub check_conservation: Option<bool>,
}
