//! Library errors as the package's exceptions (defined in `hetlb/_errors.py`, so that they
//! can derive from both `HetlbError` and the built-in class that fits).

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Which exception class of `hetlb._errors` to raise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `InvalidInputError` (a `ValueError`): values the library refuses.
    InvalidInput,
    /// `UnknownAlgorithmError` (a `ValueError`): a rule name that is not one of `algorithms()`.
    UnknownAlgorithm,
    /// `ScenarioError` (a `ValueError`): a scenario that does not parse or validate.
    Scenario,
    /// `HetlbFileError` (an `OSError`): a file that cannot be read.
    File,
    /// `LimitError` (a `MemoryError`): a run above the memory limit.
    Limit,
    /// `MPIError` (a `RuntimeError`): MPI missing, mismatched or unusable.
    Mpi,
    /// `PeerError`: a collective call failed (with the failed rank and what this rank holds).
    Peer,
    /// `PeerTimeoutError` (a `PeerError` and a `TimeoutError`): a peer stopped answering.
    PeerTimeout,
    /// `HetlbError`: anything else.
    Other,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::InvalidInput => "InvalidInputError",
            Kind::UnknownAlgorithm => "UnknownAlgorithmError",
            Kind::Scenario => "ScenarioError",
            Kind::File => "HetlbFileError",
            Kind::Limit => "LimitError",
            Kind::Mpi => "MPIError",
            Kind::Peer => "PeerError",
            Kind::PeerTimeout => "PeerTimeoutError",
            Kind::Other => "HetlbError",
        }
    }
}

/// The exception of `kind` with `message` and keyword attributes `attrs`.
pub fn raise_with(
    py: Python<'_>,
    kind: Kind,
    message: String,
    attrs: Option<&Bound<'_, PyDict>>,
) -> PyErr {
    let made = py
        .import("hetlb._errors")
        .and_then(|m| m.getattr(kind.class_name()))
        .and_then(|cls| cls.call((message.clone(),), attrs));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        // The package's own module is missing (a broken install): say so, with the message.
        Err(e) => pyo3::exceptions::PyRuntimeError::new_err(format!("{message} ({e})")),
    }
}

/// The exception of `kind` with `message`.
pub fn raise(py: Python<'_>, kind: Kind, message: String) -> PyErr {
    raise_with(py, kind, message, None)
}
