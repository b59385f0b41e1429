//! # hetlb-core
//!
//! Exact integer load-balancing rules for heterogeneous clusters, the plans they produce and
//! the metrics that judge them. The simulator, the experiments and the runtime all drive these
//! same rules; the only I/O is one bounded reader of topology and load files
//! ([`text_file`]). The large kernels — the in-place exchange and the diffusion rounds
//! — spread over rayon's threads, with the same result whatever their number.
//!
//! * [`model`] — integer loads, capacities, validation errors.
//! * [`topology`] — the [`Topology`](topology::Topology) trait, the implicit
//!   [`Hypercube`](topology::Hypercube), arbitrary [`Graph`](topology::Graph)s and their
//!   generators, and [`Network`](topology::Network)s named by a
//!   [`TopologySpec`](topology::TopologySpec) (`ring:16`, `torus:8x8`, …).
//! * [`rules`] — the balancing decisions: dimension exchange (DEM, improved DEM,
//!   heterogeneous DEM, OEM), cube walking (CWA, hybrid), and diffusion on any network
//!   (DISHET, first-order diffusion and its biased roundings, generalised dimension exchange).
//! * [`rounds`] — the synchronous round engine of the diffusion rules, with its stopping rule.
//! * [`network_algorithm`] — the older names of the one vocabulary (type aliases).
//! * [`exchange`] — engines applying a pair rule to a cube: a full [`Plan`] or an in-place,
//!   cache-blocked, vectorised (runtime CPU dispatch) and threaded balance.
//! * [`plan`], [`metrics`] — what was decided and what it costs.
//! * [`allocation`] — exact proportional shares and the optimal integer allocation.
//!
//! ```
//! use hetlb_core::{balance, Algorithm, BalanceOptions, Metrics};
//! let plan = balance(Algorithm::Oem, &[4, 7, 0, 9, 2, 2, 8, 1], &BalanceOptions::default()).unwrap();
//! let metrics = Metrics::of(&plan, None);
//! assert!(metrics.max_difference <= 2); // ⌈log2(8)/2⌉
//! assert_eq!(plan.final_loads.iter().sum::<u64>(), 33);
//! ```

#[macro_use]
mod simd;

pub mod advice;
pub mod advice_request;
pub mod algorithm;
pub mod allocation;
pub mod destinations;
pub mod embedding;
pub mod exchange;
pub mod input;
pub mod limit;
pub mod metrics;
pub mod model;
pub mod network_algorithm;
pub mod plan;
pub mod policy;
pub mod report;
pub mod rounds;
pub mod routing;
pub mod rules;
pub mod summary;
pub mod table;
pub mod text_file;
pub mod topology;
pub mod transmission;
pub mod units;

pub use algorithm::{
    Algorithm, BalanceError, BalanceOptions, Family, balance, balance_on, balance_on_within,
    balance_summarised,
};
pub use metrics::Metrics;
pub use model::{Capacities, ModelError};
pub use plan::{Phase, Plan, Transfer};
