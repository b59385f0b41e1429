//! `hetlb.advise(...)`: `hetlb advise` as a function — whether a move pays, with which rule
//! and which routing, before anything moves. The checks and the decision are the library's
//! (`hetlb_core::advice_request::answer`); this module converts the arguments and hands
//! the document `hetlb advise --format json` prints to Python.

use crate::convert::to_py;
use crate::errors::{Error, InvalidInputError, Result, UnknownAlgorithmError};
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::advice_request::{Request, answer};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

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
) -> Result<Py<PyAny>> {
    let bad = |m: String| InvalidInputError::new_err(m);
    let loads: Vec<u64> = loads.as_array().iter().copied().collect();
    let trigger: Trigger = trigger.parse().map_err(|e| bad(format!("trigger: {e}")))?;
    let routings = routing
        .iter()
        .map(|r| {
            r.parse::<Routing>()
                .map_err(|e| bad(format!("routing: {e}")))
        })
        .collect::<PyResult<Vec<_>>>()?;
    let algorithms = algorithms
        .map(|names| {
            names
                .iter()
                .map(|n| {
                    n.parse::<Algorithm>()
                        .map_err(|e| UnknownAlgorithmError::new_err(format!("algorithms: {e}")))
                })
                .collect::<PyResult<Vec<_>>>()
        })
        .transpose()?;
    let mut request = Request::new(&loads, &speeds);
    request.algorithms = algorithms;
    request.routings = routings;
    request.topology = topology;
    request.bytes_per_unit = bytes_per_unit;
    request.model = CostModel {
        seconds_per_message,
        seconds_per_byte,
    };
    request.trigger = trigger;
    request.max_memory_bytes = max_memory_bytes;
    let document = py
        .detach(|| answer(&request))
        .map_err(|error| Error::Advice {
            error,
            file_topology: topology.is_some_and(|t| t.starts_with("file:")),
        })?;
    to_py(py, &document)
}
