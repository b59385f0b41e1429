//! `hetlb.simulate(...)`: `hetlb simulate FILE --format json` as a function. The scenario,
//! the run and the report are the simulator's (`hetlb_sim::Scenario`); the JSON is the
//! report serialised as the CLI prints it.

use crate::errors::{Error, HetlbError, InvalidInputError, LimitError, Result};
use hetlb_sim::Scenario;
use pyo3::prelude::*;

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
) -> Result<String> {
    let limit = u128::from(max_memory_bytes);
    let read = match (&path, &text) {
        (Some(p), None) => Scenario::from_path_within(p, limit),
        (None, Some(t)) => Scenario::from_toml_within(t, limit),
        _ => {
            return Err(InvalidInputError::new_err(
                "scenario: give a path or the TOML text, one of them",
            )
            .into());
        }
    };
    let mut scenario = read.map_err(|error| Error::Scenario {
        origin: path.as_ref().map(|p| p.display().to_string()),
        error,
    })?;
    let origin = path
        .as_ref()
        .map_or_else(|| "scenario".to_string(), |p| p.display().to_string());
    if let Some(seed) = seed {
        scenario.setup.seed = seed;
    }
    scenario.setup.check_conservation |= check;
    let need = scenario.memory_estimate();
    if need > limit {
        return Err(LimitError::new_err(format!(
            "{origin}: the run needs about {need} bytes of memory, above the limit of {limit} \
             (raise it with max_memory_bytes)"
        ))
        .into());
    }
    let run = py.detach(|| scenario.run());
    let mut report = run.map_err(|e| HetlbError::new_err(format!("{origin}: {e}")))?;
    if !(report.makespan.is_finite() && report.total_idle.is_finite()) {
        return Err(HetlbError::new_err(format!(
            "{origin}: the run's times are not finite numbers (makespan {}): rates or times too \
             far apart for a double",
            report.makespan
        ))
        .into());
    }
    if !series {
        report.series.clear();
        report.transit_series.clear();
    }
    Ok(serde_json::to_string(&report)?)
}
