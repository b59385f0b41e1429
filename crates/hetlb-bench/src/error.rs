//! What can go wrong in a benchmark.

use thiserror::Error;

/// Why a benchmark could not run or its results could not be trusted.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum BenchError {
    /// A setting outside what the benchmark accepts; `setting` is the configuration's field
    /// (several joined by `/` when their combination is at fault).
    #[error("{setting}: {message}")]
    Setting {
        /// The field at fault.
        setting: &'static str,
        /// Why.
        message: String,
    },
    /// A setting the code below refused (a topology that cannot be built, a plan that
    /// cannot be transmitted, a thread pool that cannot start, …).
    #[error("{setting}")]
    Refused {
        /// The field at fault.
        setting: &'static str,
        /// The refusal.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The runtime failed while timed.
    #[error(transparent)]
    Runtime(#[from] hetlb_runtime::RuntimeError),
    /// The simulator failed while timed.
    #[error(transparent)]
    Simulation(#[from] hetlb_sim::SimError),
    /// Peer rebalancing failed while timed.
    #[error(transparent)]
    Peer(#[from] hetlb_peer::PeerError),
    /// A kernel could not be set up (an engine refusing its inputs, say).
    #[error(transparent)]
    Kernel(Box<dyn std::error::Error + Send + Sync>),
    /// A kernel or a floor did not do what it was timed doing (a result of the wrong size, a
    /// thread that failed): its time means nothing.
    #[error("{0}")]
    Check(String),
}

impl BenchError {
    /// A [`BenchError::Setting`].
    pub(crate) fn setting(setting: &'static str, message: impl Into<String>) -> Self {
        Self::Setting {
            setting,
            message: message.into(),
        }
    }

    /// A [`BenchError::Refused`].
    pub(crate) fn refused(
        setting: &'static str,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Refused {
            setting,
            source: Box::new(source),
        }
    }
}
