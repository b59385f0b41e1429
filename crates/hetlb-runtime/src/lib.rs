//! # hetlb-runtime
//!
//! Real work on real workers, on threads of one process or on MPI processes, over the
//! transport of [`hetlb_transport`]. An application that only embeds `rebalance` needs none
//! of this crate: it links [`hetlb_peer`].
//!
//! * `master_worker`, `run_threads`, `run_mpi` (feature `master-worker`) — the EFP
//!   master-worker of Aldasht, Ortega & Puntonet (§§3–4) and its baselines, with the matmul
//!   and synthetic workloads and the paper's per-processor report.
//! * `scenario` (feature `scenario`) — a simulator scenario run on real workers.
//! * `workload::iterative` (feature `iterative`) — an iterative application balanced by
//!   [`hetlb_peer::Balancer`], its dumps and replays.
//!
//! Feature `full` enables the three runtimes, as the `hetlb` binary does; feature `mpi` runs
//! them on MPI processes.
//!
//! What `hetlb run` adds on top — the runs of a command driven in turn and judged, an MPI job
//! started for a program that leaves MPI to hetlb, the report beside the paper's published
//! tables — is in `hetlb-experiments` (its `drivers` and `tables::master_worker`).

#[cfg(feature = "master-worker")]
pub mod config;
#[cfg(feature = "master-worker")]
pub mod error;
#[cfg(feature = "master-worker")]
pub mod faults;
#[cfg(feature = "master-worker")]
pub mod grain;
#[cfg(feature = "master-worker")]
pub mod job;
#[cfg(feature = "master-worker")]
pub mod master_worker;
#[cfg(feature = "master-worker")]
mod message;
#[cfg(feature = "master-worker")]
mod processor;
#[cfg(feature = "master-worker")]
pub mod report;
#[cfg(feature = "master-worker")]
pub mod run;
#[cfg(feature = "scenario")]
pub mod scenario;
#[cfg(any(feature = "master-worker", feature = "iterative"))]
pub mod slowdown;
#[cfg(any(feature = "master-worker", feature = "scenario", feature = "iterative"))]
pub mod workload;

#[cfg(feature = "master-worker")]
pub use config::{Progress, RunConfig};
#[cfg(feature = "master-worker")]
pub use error::{RunConfigError, RuntimeError, TaskError};
#[cfg(feature = "master-worker")]
pub use faults::ProcessorFaults;
#[cfg(feature = "master-worker")]
pub use job::{ClosureJob, FnJob, Job};
#[cfg(feature = "master-worker")]
pub use report::{Dispatch, Failure, FailureKind, ProcessorReport, RunOutcome, RunReport};
#[cfg(all(feature = "mpi", feature = "master-worker"))]
pub use run::run_mpi;
#[cfg(feature = "master-worker")]
pub use run::{run_sequential, run_threads};
#[cfg(any(feature = "master-worker", feature = "iterative"))]
pub use slowdown::Slowdown;
