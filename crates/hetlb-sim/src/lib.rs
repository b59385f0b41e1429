//! # hetlb-sim
//!
//! A discrete-event simulator for load balancing on heterogeneous networks: nodes executing
//! FIFO task queues at their own rates (deterministic, or Poisson completions), links with a
//! transfer rate and a communication delay (deterministic or exponential), one-shot
//! injections of external load, Poisson arrivals, and balancing policies that call the same
//! rules as the rest of hetlb.
//!
//! * [`queue`] — the future-event list (time, then insertion order).
//! * [`engine`] — the engine, generic over [`model::NodeModel`], [`model::LinkModel`] and
//!   [`policy::Policy`]; see `src/engine/README.md`.
//! * [`model`], [`network`] — the node and link models; the network is the core's
//!   [`Network`](hetlb_core::topology::Network), its links numbered by [`network::LinkTable`].
//! * [`policy`] — no balancing, the delay-aware policy of Mirtaheri & Grandinetti,
//!   threshold-triggered hypercube balancing of Rim et al. (§4).
//! * [`scenario`] — scenarios in TOML, validated, with errors naming the field and line.
//! * [`report`] — what a run produces.
//! * [`rng`] — one seeded random stream per node and purpose.
//!
//! ```
//! use hetlb_sim::scenario::Scenario;
//! let scenario = Scenario::from_toml(r#"
//!     topology = "path:2"
//!     [nodes]
//!     count = 2
//!     rate = 10.0
//!     initial = 10
//!     [[injections]]
//!     node = 0
//!     time = 0.5
//!     tasks = 20
//! "#).unwrap();
//! let report = scenario.run().unwrap();
//! assert!((report.makespan - 3.0).abs() < 1e-9); // 0.5 + (10 - 5 + 20) / 10
//! ```

pub mod engine;
pub mod model;
pub mod network;
pub mod policy;
mod prefetch;
pub mod queue;
pub mod report;
pub mod rng;
pub mod scenario;

pub use engine::{Engine, SimError};
pub use report::Report;
pub use scenario::{Scenario, ScenarioError};
