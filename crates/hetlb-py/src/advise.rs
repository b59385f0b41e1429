//! `hetlb.advise(...)`: `hetlb advise` as a function — whether a move pays, with which rule
//! and which routing, before anything moves. The decision is the library's
//! (`hetlb_core::advice::advise`); this module checks the arguments as the CLI does and
//! hands the advice to Python as the document `hetlb advise --format json` prints.

use crate::balance::network_of;
use crate::convert::to_py;
use crate::errors::{Kind, raise};
use hetlb_core::advice::{Advice, CostModel, Question, Trigger, advise as advise_core};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use hetlb_core::topology::Network;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use serde::Serialize;

/// The document `hetlb advise --format json` prints.
#[derive(Serialize)]
struct Document<'a> {
    topology: String,
    trigger: String,
    cost_model: CostModel,
    bytes_per_unit: u64,
    #[serde(flatten)]
    advice: &'a Advice,
}

/// Bytes one node costs while advising (loads, speeds, one plan's vectors), and per
/// candidate (its final loads), as the CLI counts them.
const BYTES_PER_NODE: u128 = 64;

/// `hetlb advise`: every candidate `(rule, routing)` planned on `loads` at the measured
/// `speeds`, predicted, and the one to follow.
#[pyfunction]
#[pyo3(signature = (loads, speeds, algorithms=None, routing=vec!["paper".to_string(), "direct".to_string()],
    topology=None, bytes_per_unit=8, seconds_per_message=1e-5, seconds_per_byte=1e-9,
    trigger="auto", max_memory_bytes=8u64 << 30))]
#[allow(clippy::too_many_arguments)]
pub fn advise(
    py: Python<'_>,
    loads: PyReadonlyArray1<'_, u64>,
    speeds: Vec<f64>,
    algorithms: Option<Vec<String>>,
    routing: Vec<String>,
    topology: Option<&str>,
    bytes_per_unit: u64,
    seconds_per_message: f64,
    seconds_per_byte: f64,
    trigger: &str,
    max_memory_bytes: u64,
) -> PyResult<Py<PyAny>> {
    let bad = |m: String| raise(py, Kind::InvalidInput, m);
    let loads: Vec<u64> = loads.as_array().iter().copied().collect();
    if loads.is_empty() {
        return Err(bad("loads: no values given".into()));
    }
    let speeds = match speeds.as_slice() {
        [one] => vec![*one; loads.len()],
        many if many.len() == loads.len() => many.to_vec(),
        many => {
            return Err(bad(format!(
                "speeds: {} values for {} loads (give one, or one per node)",
                many.len(),
                loads.len()
            )));
        }
    };
    if let Some((i, s)) = speeds
        .iter()
        .enumerate()
        .find(|(_, s)| !s.is_finite() || **s <= 0.0)
    {
        return Err(bad(format!(
            "speeds: value {} ({s}) must be positive and finite",
            i + 1
        )));
    }
    let trigger: Trigger = trigger.parse().map_err(|e| bad(format!("trigger: {e}")))?;
    let model = CostModel {
        seconds_per_message,
        seconds_per_byte,
    };
    model
        .validate()
        .map_err(|e| bad(format!("seconds_per_message/seconds_per_byte: {e}")))?;
    let mut routings: Vec<Routing> = Vec::new();
    for r in &routing {
        let r: Routing = r.parse().map_err(|e| bad(format!("routing: {e}")))?;
        if !routings.contains(&r) {
            routings.push(r);
        }
    }
    if routings.is_empty() {
        return Err(bad("routing: name at least one of 'paper', 'direct'".into()));
    }
    let first = match algorithms.as_deref() {
        Some([name, ..]) => name.parse().unwrap_or(Algorithm::Cwa),
        _ => Algorithm::Cwa,
    };
    let (network, label) = network_of(py, topology, loads.len(), first)?;
    let rules: Vec<Algorithm> = match algorithms {
        None => Algorithm::all()
            .filter(|a| !a.needs_hypercube() || matches!(network, Network::Hypercube(_)))
            .collect(),
        Some(names) => {
            let mut out: Vec<Algorithm> = Vec::new();
            for n in &names {
                let a: Algorithm = n.parse().map_err(|e| {
                    raise(py, Kind::UnknownAlgorithm, format!("algorithms: {e}"))
                })?;
                if !out.contains(&a) {
                    out.push(a);
                }
            }
            if out.is_empty() {
                return Err(bad("algorithms: name at least one rule".into()));
            }
            out
        }
    };
    let candidates: Vec<(Algorithm, Routing)> = rules
        .iter()
        .flat_map(|&a| routings.iter().map(move |&r| (a, r)))
        .collect();
    let per_candidate = loads.len() as u128 * 8 + 64;
    let fixed = loads.len() as u128 * BYTES_PER_NODE + per_candidate * candidates.len() as u128;
    let limit = u128::from(max_memory_bytes);
    if fixed > limit {
        return Err(raise(
            py,
            Kind::Limit,
            format!(
                "loads: advising {} candidates on {} nodes needs about {fixed} bytes of memory, \
                 above the limit of {limit} (raise it with max_memory_bytes)",
                candidates.len(),
                loads.len()
            ),
        ));
    }
    let mut question = Question::new(&loads, &speeds);
    question.bytes_per_unit = bytes_per_unit;
    question.model = model;
    question.trigger = trigger;
    question.max_transfers = u64::try_from((limit - fixed) / 24).unwrap_or(u64::MAX);
    let advice = py
        .detach(|| advise_core(&network, &candidates, &question))
        .map_err(|e| bad(e.to_string()))?;
    to_py(
        py,
        &Document {
            topology: label,
            trigger: trigger.to_string(),
            cost_model: model,
            bytes_per_unit,
            advice: &advice,
        },
    )
}
