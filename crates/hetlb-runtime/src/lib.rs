//! # hetlb-runtime
//!
//! Real work on real workers, on threads of one process or on MPI processes:
//!
//! * the EFP master-worker of Aldasht, Ortega & Puntonet (§§3–4) and its baselines;
//! * [`peer`] — peer rebalancing: an embeddable collective `rebalance` that moves the
//!   application's own items between ranks under the decentralised rules (DEM family, OEM,
//!   CWA, hybrid, DISHET and diffusion), decided by the same core code as `hetlb balance`.
//!
//! * [`transport`] — the [`Transport`](transport::Transport) trait; the threads backend
//!   (crossbeam channels, the default) and the MPI backend (feature `mpi`).
//! * [`Job`] — what is computed: [`ClosureJob`] (a closure, threads), [`FnJob`] (a registered
//!   function on a serialisable input, MPI), [`workload::matmul`] (the paper's benchmark) and
//!   [`workload::synthetic`].
//! * [`run_threads`], `run_mpi`, [`run_sequential`] — the entry points.
//! * [`RunReport`] — the paper's per-processor table (rows, `T_exec`, `T_comp`, `T_comm`,
//!   `T_wait`), the makespan and the efficiency against the ideal; [`paper`] holds the
//!   published tables to compare with.
//!
//! The decisions — granularity `G(P)` (eq. (1)), roles, staggered first round, speed factor,
//! batch sizes — are [`hetlb_core::rules::self_scheduling`]; this crate measures and moves
//! messages. Heterogeneity on one machine is emulated by [`Slowdown`] factors that the
//! balancer never reads: it only sees measured times.
//!
//! ```
//! use hetlb_runtime::{run_threads, RunConfig, Slowdown};
//! use hetlb_runtime::workload::matmul::MatmulJob;
//! use hetlb_core::rules::self_scheduling::Policy;
//! use std::sync::Arc;
//!
//! let job = Arc::new(MatmulJob::new(60, 12, 1));
//! let mut cfg = RunConfig::new(Policy::Efp);
//! cfg.slowdowns = vec![Slowdown::constant(1), Slowdown::constant(2), Slowdown::constant(2)];
//! let out = run_threads(Arc::clone(&job), 3, &cfg).unwrap();
//! let c = job.assemble(&out.outputs).unwrap();
//! assert!(c.max_abs_diff(&job.reference()) < 1e-9);
//! assert_eq!(out.report.processors.iter().map(|p| p.rows).sum::<u64>(), 60);
//! ```

pub mod config;
pub mod error;
pub mod faults;
pub mod grain;
pub mod job;
pub mod master_worker;
pub mod message;
#[cfg(feature = "mpi")]
pub mod mpi_job;
pub mod paper;
pub mod peer;
mod processor;
pub mod report;
pub mod run;
pub mod scenario;
pub mod slowdown;
pub mod speed_check;
pub mod transport;
pub mod workload;

pub use config::{Progress, RunConfig};
pub use error::{ConfigError, RuntimeError, TaskError};
pub use faults::Faults;
pub use job::{ClosureJob, FnJob, Job};
pub use report::{Dispatch, Failure, FailureKind, Outcome, ProcessorReport, RunReport};
#[cfg(feature = "mpi")]
pub use run::run_mpi;
pub use run::{run_sequential, run_threads};
pub use slowdown::Slowdown;
