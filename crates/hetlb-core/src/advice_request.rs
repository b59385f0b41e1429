//! One `advise` call from plain arguments, as the faces take them (Python, C): the speeds
//! given once or per node, the network as a spec, the candidates as names, a memory limit;
//! every argument checked and named in the error; the answer as the document
//! `hetlb advise --format json` prints.

use crate::advice::{Advice, AdviseError, CostModel, Question, Trigger, advise};
use crate::routing::Routing;
use crate::topology::{Network, Topology, TopologySpec};
use crate::{Algorithm, text_file};
use serde::Serialize;
use thiserror::Error;

/// Bytes one node costs while advising (loads, speeds, a plan's vectors).
const BYTES_PER_NODE: u128 = 64;
/// Bytes one planned transfer costs.
const BYTES_PER_TRANSFER: u128 = 24;

/// An `advise` call's arguments.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Request<'a> {
    /// Units each node holds now.
    pub loads: &'a [u64],
    /// Units each node processes per second: one value for every node, or one per node.
    pub speeds: &'a [f64],
    /// Candidate rules (`None`: every rule that fits the network).
    pub algorithms: Option<Vec<Algorithm>>,
    /// Routings to compare (each candidate rule with each).
    pub routings: Vec<Routing>,
    /// The network's spec (`None`: the hypercube of the loads).
    pub topology: Option<&'a str>,
    /// Bytes of one unit on the wire.
    pub bytes_per_unit: u64,
    /// The cost of moving.
    pub model: CostModel,
    /// When a move goes ahead.
    pub trigger: Trigger,
    /// The most memory the call may use, in bytes.
    pub max_memory_bytes: u64,
}

impl<'a> Request<'a> {
    /// A request with the CLI's defaults: every rule, both routings, units of 8 bytes,
    /// `α = 10 µs`, `β = 1 ns`, the trigger `auto`, 8 GiB.
    pub fn new(loads: &'a [u64], speeds: &'a [f64]) -> Self {
        Self {
            loads,
            speeds,
            algorithms: None,
            routings: vec![Routing::Paper, Routing::Direct],
            topology: None,
            bytes_per_unit: 8,
            model: CostModel {
                seconds_per_message: 1e-5,
                seconds_per_byte: 1e-9,
            },
            trigger: Trigger::Auto {
                horizon: Trigger::DEFAULT_HORIZON,
                margin: Trigger::DEFAULT_MARGIN,
            },
            max_memory_bytes: 8 << 30,
        }
    }
}

/// The document `hetlb advise --format json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Document {
    /// The network, as a spec.
    pub topology: String,
    /// The trigger, as text.
    pub trigger: String,
    /// The cost model.
    pub cost_model: CostModel,
    /// Bytes of one unit.
    pub bytes_per_unit: u64,
    /// The advice.
    #[serde(flatten)]
    pub advice: Advice,
}

/// Why a request could not be answered; `argument()` names the argument at fault.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum RequestError {
    /// A value that cannot be used.
    #[error("{argument}: {message}")]
    Invalid {
        /// The argument.
        argument: &'static str,
        /// Why.
        message: String,
    },
    /// Above the memory limit.
    #[error(
        "loads: advising {candidates} candidates on {nodes} nodes needs about {bytes} bytes of \
         memory, above the limit of {limit}"
    )]
    Memory {
        /// Candidates.
        candidates: usize,
        /// Nodes.
        nodes: usize,
        /// Bytes needed.
        bytes: u128,
        /// The limit.
        limit: u64,
    },
    /// A rule or the model refused.
    #[error(transparent)]
    Advise(#[from] AdviseError),
}

impl RequestError {
    /// The argument the error is about.
    pub fn argument(&self) -> &'static str {
        match self {
            RequestError::Invalid { argument, .. } => argument,
            RequestError::Memory { .. } => "max_memory_bytes",
            RequestError::Advise(_) => "loads",
        }
    }
}

fn invalid(argument: &'static str, message: impl Into<String>) -> RequestError {
    RequestError::Invalid {
        argument,
        message: message.into(),
    }
}

/// `speeds` for `nodes` nodes: one value for every node, or one per node, each positive and
/// finite.
///
/// # Errors
/// [`RequestError::Invalid`] naming `speeds`.
///
/// ```
/// use hetlb_core::advice_request::per_node_speeds;
/// assert_eq!(per_node_speeds(&[2.0], 3).unwrap(), vec![2.0; 3]);
/// assert!(per_node_speeds(&[1.0, 2.0], 3).is_err());
/// assert!(per_node_speeds(&[1.0, 0.0], 2).is_err());
/// ```
pub fn per_node_speeds(speeds: &[f64], nodes: usize) -> Result<Vec<f64>, RequestError> {
    let speeds = match speeds {
        [one] => vec![*one; nodes],
        many if many.len() == nodes => many.to_vec(),
        many => {
            return Err(invalid(
                "speeds",
                format!(
                    "{} values for {nodes} loads (give one, or one per node)",
                    many.len()
                ),
            ));
        }
    };
    if let Some((i, s)) = speeds
        .iter()
        .enumerate()
        .find(|(_, s)| !s.is_finite() || **s <= 0.0)
    {
        return Err(invalid(
            "speeds",
            format!("value {} ({s}) must be positive and finite", i + 1),
        ));
    }
    Ok(speeds)
}

/// Checks `request` and answers it ([`advise`]).
///
/// # Errors
/// [`RequestError`] naming the argument at fault.
///
/// # Complexity
/// As [`advise`].
///
/// ```
/// use hetlb_core::advice_request::{answer, Request};
/// use hetlb_core::Algorithm;
/// let loads = [900, 0, 0, 0, 0, 0, 0, 0];
/// let mut r = Request::new(&loads, &[100.0]);
/// r.algorithms = Some(vec![Algorithm::Cwa]);
/// let doc = answer(&r).unwrap();
/// assert_eq!(doc.topology, "hypercube:3");
/// assert_eq!(doc.advice.candidates.len(), 2); // paper and direct routing
/// ```
pub fn answer(request: &Request<'_>) -> Result<Document, RequestError> {
    let loads = request.loads;
    if loads.is_empty() {
        return Err(invalid("loads", "no values given"));
    }
    let speeds = per_node_speeds(request.speeds, loads.len())?;
    request
        .model
        .validate()
        .map_err(|e| invalid("seconds_per_message/seconds_per_byte", e.to_string()))?;
    if request.routings.is_empty() {
        return Err(invalid("routing", "name at least one of paper, direct"));
    }
    let hypercube_rules = request
        .algorithms
        .as_ref()
        .is_none_or(|list| list.iter().any(|a| a.needs_hypercube()));
    let (network, label) = network(request.topology, loads.len(), hypercube_rules)?;
    let rules: Vec<Algorithm> = match &request.algorithms {
        Some(list) if list.is_empty() => return Err(invalid("algorithms", "name a rule")),
        Some(list) => list.clone(),
        None => Algorithm::all()
            .filter(|a| !a.needs_hypercube() || network.runs_hypercube_rules())
            .collect(),
    };
    let mut routings: Vec<Routing> = Vec::new();
    for &r in &request.routings {
        if !routings.contains(&r) {
            routings.push(r);
        }
    }
    let candidates: Vec<(Algorithm, Routing)> = rules
        .iter()
        .flat_map(|&a| routings.iter().map(move |&r| (a, r)))
        .collect();
    let per_candidate = loads.len() as u128 * 8 + 64;
    let bytes = loads.len() as u128 * BYTES_PER_NODE + per_candidate * candidates.len() as u128;
    let limit = u128::from(request.max_memory_bytes);
    if bytes > limit {
        return Err(RequestError::Memory {
            candidates: candidates.len(),
            nodes: loads.len(),
            bytes,
            limit: request.max_memory_bytes,
        });
    }
    let mut question = Question::new(loads, &speeds);
    question.bytes_per_unit = request.bytes_per_unit;
    question.model = request.model;
    question.trigger = request.trigger;
    question.max_transfers =
        u64::try_from((limit - bytes) / BYTES_PER_TRANSFER).unwrap_or(u64::MAX);
    let advice = advise(&network, &candidates, &question)?;
    Ok(Document {
        topology: label,
        trigger: request.trigger.to_string(),
        cost_model: request.model,
        bytes_per_unit: request.bytes_per_unit,
        advice,
    })
}

/// The network of `spec`, or the default for `nodes` nodes ([`Network::default_for`]), with
/// its label.
fn network(
    spec: Option<&str>,
    nodes: usize,
    hypercube_rules: bool,
) -> Result<(Network, String), RequestError> {
    let Some(spec) = spec else {
        return Network::default_for(nodes, hypercube_rules)
            .map_err(|e| invalid("loads", format!("{e}; give a topology for other networks")));
    };
    let parsed: TopologySpec = spec
        .parse()
        .map_err(|e| invalid("topology", format!("{e}")))?;
    let network = parsed
        .build_reading(None, Some(nodes), text_file::MAX_FILE_BYTES)
        .map_err(|e| invalid("topology", e.to_string()))?;
    if network.node_count() != nodes {
        return Err(invalid(
            "loads",
            format!(
                "{nodes} loads given for a network of {} nodes ({parsed})",
                network.node_count()
            ),
        ));
    }
    Ok((network, parsed.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Hypercube;

    #[test]
    fn every_argument_is_named() {
        let loads = [8, 0, 0, 0];
        let arg = |r: Request<'_>| answer(&r).unwrap_err().argument();
        assert_eq!(arg(Request::new(&loads, &[1.0, 2.0])), "speeds");
        assert_eq!(arg(Request::new(&loads, &[0.0])), "speeds");
        assert_eq!(arg(Request::new(&[], &[1.0])), "loads");
        // three loads: the hypercube rules run embedded on complete:3, dishet needs a network
        assert!(answer(&Request::new(&[1, 2, 3], &[1.0])).is_ok());
        let mut three = Request::new(&[1, 2, 3], &[1.0]);
        three.algorithms = Some(vec![Algorithm::Dishet]);
        assert_eq!(arg(three), "loads");
        let mut r = Request::new(&loads, &[1.0]);
        r.topology = Some("ring:x");
        assert_eq!(arg(r.clone()), "topology");
        r.topology = None;
        r.routings.clear();
        assert_eq!(arg(r.clone()), "routing");
        r.routings = vec![Routing::Direct];
        r.max_memory_bytes = 10;
        assert_eq!(arg(r), "max_memory_bytes");
    }

    #[test]
    fn the_answer_is_advise_on_the_same_question() {
        let loads = [40, 10, 10, 0];
        let speeds = [1.0, 2.0, 2.0, 4.0];
        let mut r = Request::new(&loads, &speeds);
        r.algorithms = Some(vec![Algorithm::Cwa, Algorithm::DemHetero]);
        let doc = answer(&r).unwrap();
        let net = Network::Hypercube(Hypercube::new(2).unwrap());
        let mut q = Question::new(&loads, &speeds);
        q.model = r.model;
        let candidates: Vec<(Algorithm, Routing)> = [Algorithm::Cwa, Algorithm::DemHetero]
            .iter()
            .flat_map(|&a| [(a, Routing::Paper), (a, Routing::Direct)])
            .collect();
        let direct = advise(&net, &candidates, &q).unwrap();
        assert_eq!(doc.advice, direct);
    }
}
