//! Peer rebalancing: an embeddable collective that moves the application's own items between
//! ranks under the decentralised rules — Chau & Fu's DEM family (000_…), Rim et al.'s OEM,
//! CWA and hybrid with phased, overlapped or pipelined transmission (004_…), DISHET and the
//! diffusion rules (002_…).
//!
//! An application keeps its items (any serde type implementing [`Item`]) in a `Vec` on each
//! rank and, at a point of its loop, every rank calls [`Balancer::rebalance`] — as it would call
//! Zoltan's `LB_Partition` + `Migrate` or Charm++'s `AtSync`:
//!
//! ```text
//! rebalance:  all-gather (units, speed) in ⌈log₂ P⌉ steps  ──►  the core's rule on the loads
//!             (the code of `hetlb balance`)  ──►  this rank's transfers  ──►  items chosen and
//!             moved as the schedule says  ──►  acknowledgements  ──►  agreement  ──►  report
//! ```
//!
//! * The decision is the core's, unchanged ([`hetlb_core::network_algorithm::balance_on`]):
//!   with unit items every rank's count after the call equals the `final` of `hetlb balance`
//!   for the same rule, loads, capacities and topology.
//! * Speeds are equal, fixed, or measured from what the application reports
//!   ([`Balancer::record`], [`SpeedMeter`]).
//! * Moving is copy-then-release and transactional: an error during the move leaves every
//!   rank with exactly the items it held before (see [`migrate`'s design](self#design)).
//! * Two backends: [`threads`] (ranks are threads of one process) and `mpi` (feature `mpi`;
//!   the application's communicator, duplicated).
//!
//! # Design
//! The protocol, the failure model and the reasons behind them are in `README.md` beside this
//! module; in short: every message carries the call's epoch; a rank waits only for the peers
//! it needs and judges only those (silence beyond the timeout while taking part in the call, or
//! a dropped balancer); whoever notices a failure during the move tells everyone, and everyone
//! rolls back; after the move every rank tells every rank it is done, and a rank commits when
//! all live ranks are.

mod balancer;
mod comm;
mod config;
mod decide;
mod error;
mod gather;
mod holdings;
mod item;
pub mod measure;
mod migrate;
#[cfg(feature = "mpi")]
pub mod mpi;
mod report;
mod session;
mod speed;
pub mod threads;

pub use balancer::Balancer;
pub use comm::{Comm, DoneSummary, Liveness, Msg, RankState, Received};
pub use config::{BalancerConfig, DEFAULT_TIMEOUT, Fault, Speeds};
pub use decide::{Migration, PlannedTransfer, imbalance};
pub use error::{PeerError, PeerFailure};
pub use item::Item;
pub use report::Report;
pub use speed::SpeedMeter;
