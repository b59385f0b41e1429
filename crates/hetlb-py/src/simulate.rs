//! `hetlb.simulate(...)`: `hetlb simulate FILE --format json` as a function. The scenario,
//! the run and the report are the simulator's (`hetlb_sim::Scenario`); the JSON is the
//! report serialised as the CLI prints it.

use crate::errors::{Kind, raise};
use hetlb_sim::{Scenario, ScenarioError};
use pyo3::prelude::*;
use std::path::Path;

fn scenario_error(py: Python<'_>, origin: Option<&Path>, e: &ScenarioError) -> PyErr {
    let kind = if e.field == "file" {
        Kind::File
    } else if e.message.contains("of memory") {
        Kind::Limit
    } else {
        Kind::Scenario
    };
    let msg = match origin {
        Some(p) => format!("{}: {e}", p.display()),
        None => e.to_string(),
    };
    raise(py, kind, msg)
}

/// Runs one scenario (`path` to a TOML file, or its `text`) and returns the report as JSON
/// text (`hetlb simulate --format json`).
#[pyfunction]
#[pyo3(signature = (path=None, text=None, seed=None, check=false, series=false,
    max_memory_bytes=8u64 << 30))]
pub fn simulate(
    py: Python<'_>,
    path: Option<std::path::PathBuf>,
    text: Option<String>,
    seed: Option<u64>,
    check: bool,
    series: bool,
    max_memory_bytes: u64,
) -> PyResult<String> {
    let limit = u128::from(max_memory_bytes);
    let mut scenario = match (&path, &text) {
        (Some(p), None) => {
            Scenario::from_path_within(p, limit).map_err(|e| scenario_error(py, Some(p), &e))?
        }
        (None, Some(t)) => {
            Scenario::from_toml_within(t, limit).map_err(|e| scenario_error(py, None, &e))?
        }
        _ => {
            return Err(raise(
                py,
                Kind::InvalidInput,
                "scenario: give a path or the TOML text, one of them".into(),
            ));
        }
    };
    let origin = path
        .as_ref()
        .map_or_else(|| "scenario".to_string(), |p| p.display().to_string());
    if let Some(seed) = seed {
        scenario.setup.seed = seed;
    }
    scenario.setup.check_conservation |= check;
    let need = scenario.memory_estimate();
    if need > limit {
        return Err(raise(
            py,
            Kind::Limit,
            format!(
                "{origin}: the run needs about {need} bytes of memory, above the limit of \
                 {limit} (raise it with max_memory_bytes)"
            ),
        ));
    }
    let run = py.detach(|| scenario.run());
    let mut report = run.map_err(|e| raise(py, Kind::Other, format!("{origin}: {e}")))?;
    if !(report.makespan.is_finite() && report.total_idle.is_finite()) {
        return Err(raise(
            py,
            Kind::Other,
            format!(
                "{origin}: the run's times are not finite numbers (makespan {}): rates or times \
                 too far apart for a double",
                report.makespan
            ),
        ));
    }
    if !series {
        report.series.clear();
        report.transit_series.clear();
    }
    serde_json::to_string(&report).map_err(|e| raise(py, Kind::Other, format!("serialising: {e}")))
}
