//! # hetlb-runtime
//!
//! Real work on real workers, on threads of one process or on MPI processes. Without features
//! the crate is what an application embeds: the transport and the peer balancer, depending on
//! neither the simulator nor the workloads.
//!
//! * [`transport`] — one transport for every runtime: groups of ranks and their typed
//!   endpoints, over threads (crossbeam channels, shared-memory liveness) or MPI (feature
//!   `mpi`; gossiped heartbeats).
//! * [`peer`] — peer rebalancing: an embeddable collective `rebalance` that moves the
//!   application's own items between ranks under the decentralised rules (DEM family, OEM,
//!   CWA, hybrid, DISHET and diffusion), decided by the same core code as `hetlb balance`,
//!   with an atomic agreement: every rank commits the move or every rank rolls it back.
//! * `master_worker`, `run_threads`, `run_mpi` (feature `master-worker`) — the EFP
//!   master-worker of Aldasht, Ortega & Puntonet (§§3–4) and its baselines, with the matmul
//!   and synthetic workloads and the paper's per-processor report.
//! * `scenario` (feature `scenario`) — a simulator scenario run on real workers.
//! * `workload::iterative` (feature `iterative`) — an iterative application balanced by peer
//!   rebalancing, its dumps and replays.
//!
//! Feature `full` enables the three runtimes, as the `hetlb` binary does.
//!
//! ```
//! use hetlb_runtime::peer::{Balancer, BalancerConfig};
//! use hetlb_runtime::transport::threads;
//! let handles: Vec<_> = threads::group(2)
//!     .into_iter()
//!     .map(|m| std::thread::spawn(move || {
//!         let mut items: Vec<u64> = if m.rank() == 0 { (0..10).collect() } else { vec![] };
//!         let mut b = Balancer::new(&m, BalancerConfig::new("cwa").unwrap()).unwrap();
//!         b.rebalance(&mut items).unwrap();
//!         items.len()
//!     }))
//!     .collect();
//! let counts: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
//! assert_eq!(counts, vec![5, 5]);
//! ```

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
pub mod message;
#[cfg(all(
    feature = "mpi",
    feature = "master-worker",
    feature = "scenario",
    feature = "iterative"
))]
pub mod mpi_job;
#[cfg(feature = "master-worker")]
pub mod paper;
pub mod peer;
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
pub mod speed_check;
pub mod transport;
#[cfg(any(feature = "master-worker", feature = "scenario", feature = "iterative"))]
pub mod workload;

#[cfg(feature = "master-worker")]
pub use config::{Progress, RunConfig};
#[cfg(feature = "master-worker")]
pub use error::{ConfigError, RuntimeError, TaskError};
#[cfg(feature = "master-worker")]
pub use faults::Faults;
#[cfg(feature = "master-worker")]
pub use job::{ClosureJob, FnJob, Job};
#[cfg(feature = "master-worker")]
pub use report::{Dispatch, Failure, FailureKind, Outcome, ProcessorReport, RunReport};
#[cfg(all(feature = "mpi", feature = "master-worker"))]
pub use run::run_mpi;
#[cfg(feature = "master-worker")]
pub use run::{run_sequential, run_threads};
#[cfg(any(feature = "master-worker", feature = "iterative"))]
pub use slowdown::Slowdown;
