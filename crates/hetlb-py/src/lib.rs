//! The native part of the `hetlb` Python package (`hetlb._hetlb`, typed in
//! `python/hetlb/_hetlb.pyi`): thin wrappers over the library crates. The package's Python
//! modules check and convert the arguments, then call these functions; everything they
//! compute is the library's.
//!
//! * [`balance`] — `hetlb balance` (one load vector, one rule, one network).
//! * [`simulate`] — `hetlb simulate` (one discrete-event scenario).
//! * [`balancer`] — the peer balancer over an mpi4py communicator (feature `mpi`).
//! * [`errors`] — library errors as the package's exceptions, in one place.
//! * [`convert`] — JSON documents and vectors handed to Python.

use pyo3::prelude::*;

pub mod advise;
pub mod balance;
pub mod balancer;
pub mod convert;
pub mod errors;
pub mod simulate;

/// The rule names, as `hetlb balance --help` lists them.
#[pyfunction]
fn algorithms() -> Vec<&'static str> {
    hetlb_core::Algorithm::all().map(|a| a.name()).collect()
}

/// One rule's description: name, family, summary, source, bound, whether it weighs
/// capacities and whether it needs a hypercube.
#[pyfunction]
fn algorithm_info(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    let a: hetlb_core::Algorithm = name
        .parse()
        .map_err(|e| errors::UnknownAlgorithmError::new_err(format!("algorithm: {e}")))?;
    let json = serde_json::json!({
        "name": a.name(),
        "family": a.family(),
        "summary": a.summary(),
        "source": a.source(),
        "bound": a.bound(),
        "uses_capacities": a.uses_capacities(),
        "needs_hypercube": a.needs_hypercube(),
    });
    convert::json_to_py(py, &json.to_string())
}

/// True when this build has the MPI balancer (cargo feature `mpi`).
#[pyfunction]
fn has_mpi() -> bool {
    cfg!(feature = "mpi")
}

/// True when this build injects faults into a balancer's calls on request (the keyword
/// `fault=` of `hetlb.Balancer`, for tests; cargo feature `fault-injection`, never in a
/// default build).
#[pyfunction]
fn has_fault_injection() -> bool {
    cfg!(feature = "fault-injection")
}

/// The module `hetlb._hetlb`.
#[pymodule]
fn _hetlb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(algorithm_info, m)?)?;
    m.add_function(wrap_pyfunction!(has_mpi, m)?)?;
    m.add_function(wrap_pyfunction!(has_fault_injection, m)?)?;
    m.add_function(wrap_pyfunction!(balance::balance, m)?)?;
    m.add_function(wrap_pyfunction!(advise::advise, m)?)?;
    m.add_class::<balance::BalanceResult>()?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    balancer::register(m)?;
    Ok(())
}
