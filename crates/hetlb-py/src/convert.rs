//! Values handed to Python: JSON documents (parsed by Python's `json`, so that a dict equals
//! the CLI's `--format json` parsed the same way) and vectors as NumPy arrays.

use pyo3::prelude::*;

/// Parses `json` with Python's `json.loads`.
pub fn json_to_py(py: Python<'_>, json: &str) -> PyResult<Py<PyAny>> {
    Ok(py.import("json")?.call_method1("loads", (json,))?.unbind())
}

/// Serialises `value` and parses it with Python's `json.loads`.
pub fn to_py<T: serde::Serialize>(py: Python<'_>, value: &T) -> crate::errors::Result<Py<PyAny>> {
    let text = serde_json::to_string(value)?;
    Ok(json_to_py(py, &text)?)
}
