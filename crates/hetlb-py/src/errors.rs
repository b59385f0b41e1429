//! Library errors as the package's exceptions, in one place.
//!
//! The exception classes are defined in Python (`hetlb/_errors.py`, so that each derives from
//! both `HetlbError` and the built-in class that fits) and imported here once, as Rust types
//! whose `new_err` makes the exception. [`Error`] carries a library error (the peer
//! balancer's, its configuration's, a rule's, a scenario's, an advice's) to Python: the
//! native functions return [`Result`], use `?` on any of them, and `impl From<Error> for
//! PyErr` chooses the class and the message.

use hetlb_core::BalanceError;
use hetlb_core::advice_request::RequestError;
use hetlb_core::rounds::RoundError;
use hetlb_core::topology::BuildError;
use hetlb_peer::{ConfigError, Holding, PeerFailure};
use hetlb_sim::ScenarioError as SimScenarioError;
use pyo3::prelude::*;

pyo3::import_exception!(hetlb._errors, HetlbError);
pyo3::import_exception!(hetlb._errors, InvalidInputError);
pyo3::import_exception!(hetlb._errors, InvalidTypeError);
pyo3::import_exception!(hetlb._errors, UnknownAlgorithmError);
pyo3::import_exception!(hetlb._errors, ScenarioError);
pyo3::import_exception!(hetlb._errors, HetlbFileError);
pyo3::import_exception!(hetlb._errors, LimitError);
pyo3::import_exception!(hetlb._errors, MPIError);
pyo3::import_exception!(hetlb._errors, PeerError);
pyo3::import_exception!(hetlb._errors, PeerTimeoutError);

/// What a native function returns: a value, or an [`Error`] that becomes an exception.
pub type Result<T> = std::result::Result<T, Error>;

/// An error on its way to Python.
#[derive(Debug)]
pub enum Error {
    /// An exception made already (by Python, or with one of the classes above).
    Raised(PyErr),
    /// The peer balancer's error, or its configuration's: `PeerError` (with the failed rank
    /// and what this rank holds), `PeerTimeoutError`, `MPIError`, or for a configuration
    /// `InvalidInputError` naming the option as its Python keyword.
    Peer(hetlb_peer::PeerError),
    /// A scenario that does not parse or validate (`ScenarioError`, `HetlbFileError`,
    /// `LimitError`); `origin` is its path, when it came from a file.
    Scenario {
        /// The scenario's path, put in front of the message.
        origin: Option<String>,
        /// The simulator's error.
        error: SimScenarioError,
    },
    /// A rule that refused the loads or its options (`InvalidInputError` naming the
    /// argument, `LimitError` above the memory limit); `run` says which (`cwa on ring:8`).
    Balance {
        /// The rule on its network.
        run: String,
        /// The rule's error.
        error: BalanceError,
    },
    /// An advice refused (`InvalidInputError`, `LimitError`, `HetlbFileError` for a `file:`
    /// topology that cannot be read, as `file_topology` says).
    Advice {
        /// The request's error.
        error: RequestError,
        /// Whether the topology asked for is a `file:` spec.
        file_topology: bool,
    },
    /// A document that could not be serialised (`HetlbError`).
    Serialise(serde_json::Error),
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Raised(e)
    }
}

impl From<hetlb_peer::PeerError> for Error {
    fn from(e: hetlb_peer::PeerError) -> Self {
        Error::Peer(e)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Peer(e.into())
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Serialise(e)
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        match e {
            Error::Raised(e) => e,
            Error::Peer(hetlb_peer::PeerError::Config(c)) => config_error(&c),
            Error::Peer(e) => peer_error(&e),
            Error::Scenario { origin, error } => {
                let message = match origin {
                    Some(path) => format!("{path}: {error}"),
                    None => error.to_string(),
                };
                if error.field == "file" {
                    HetlbFileError::new_err(message)
                } else if error.message.contains("of memory") {
                    LimitError::new_err(message)
                } else {
                    ScenarioError::new_err(message)
                }
            }
            Error::Balance { run, error } => match error {
                BalanceError::Round(RoundError::TooManyTransfers { .. }) => LimitError::new_err(
                    format!("{run}: {error} (raise the limit with max_memory_bytes)"),
                ),
                _ => InvalidInputError::new_err(format!(
                    "{}: {error}",
                    error.argument().replace('-', "_")
                )),
            },
            Error::Advice {
                error,
                file_topology,
            } => match error {
                RequestError::Memory { .. } => {
                    LimitError::new_err(format!("{error} (raise it with max_memory_bytes)"))
                }
                RequestError::Invalid {
                    argument: "topology",
                    ..
                } if file_topology => HetlbFileError::new_err(error.to_string()),
                other => InvalidInputError::new_err(other.to_string()),
            },
            Error::Serialise(e) => HetlbError::new_err(format!("serialising: {e}")),
        }
    }
}

/// An option of the balancer's table as a Python keyword: its name, with `_` after a name
/// Python reserves (`lambda_`), as `hetlb.Balancer` takes it.
pub fn keyword(option: &str) -> String {
    let reserved = Python::attach(|py| {
        py.import("keyword")
            .and_then(|k| k.call_method1("iskeyword", (option,)))
            .and_then(|r| r.extract::<bool>())
            .unwrap_or(false)
    });
    if reserved {
        format!("{option}_")
    } else {
        option.to_string()
    }
}

/// A configuration's error: the option named as its Python keyword.
fn config_error(c: &ConfigError) -> PyErr {
    match c {
        ConfigError::UnknownRule { .. } => UnknownAlgorithmError::new_err(format!("rule: {c}")),
        ConfigError::UnknownOption { name, known } => {
            let known: Vec<String> = known.split(", ").map(keyword).collect();
            InvalidTypeError::new_err(format!(
                "{name}: not an option of the balancer (options: {})",
                known.join(", ")
            ))
        }
        ConfigError::Topology(b) if matches!(**b, BuildError::Read { .. }) => {
            HetlbFileError::new_err(format!("topology: {}", c.reason()))
        }
        _ => match c.option_name() {
            Some(name) => InvalidInputError::new_err(format!("{}: {}", keyword(name), c.reason())),
            None => InvalidInputError::new_err(c.to_string()),
        },
    }
}

/// A failed collective call: `PeerError(message, failed_rank, holding, items_aside)`, or
/// `PeerTimeoutError` for a peer that fell silent; `MPIError` for the transport's errors.
fn peer_error(e: &hetlb_peer::PeerError) -> PyErr {
    let (holding, aside) = match e.holding() {
        Holding::Before => ("before", 0),
        Holding::InDoubt { items_aside } => ("in_doubt", items_aside),
        _ => ("unknown", 0),
    };
    let args = (e.to_string(), e.culprit(), holding, aside);
    match e {
        hetlb_peer::PeerError::Transport(_) => MPIError::new_err(e.to_string()),
        hetlb_peer::PeerError::PeerFailed {
            failure: PeerFailure::Silent { .. } | PeerFailure::NotArrived { .. },
            ..
        } => PeerTimeoutError::new_err(args),
        _ => PeerError::new_err(args),
    }
}
