//! Peer rebalancing: an embeddable collective that moves the application's own items between
//! ranks under the decentralised rules — Chau & Fu's DEM family, the OEM, CWA and hybrid of
//! Rim, Jang & Kim (2003) with phased, overlapped or pipelined transmission, DISHET and the
//! diffusion rules (Neelakantan 2012).
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
//! * The decision is the core's, unchanged ([`hetlb_core::algorithm::balance_on`]):
//!   with unit items every rank's count after the call equals the `final` of `hetlb balance`
//!   for the same rule, loads, capacities and topology.
//! * Speeds are equal, fixed, or measured from what the application reports
//!   ([`Balancer::record`], [`SpeedMeter`]).
//! * Moving is copy-then-release and atomic: whatever fails, every rank commits the move or
//!   every rank rolls it back, and every item is held by exactly one rank that is still
//!   running (a rank that crashes takes its own items with it). See the design note.
//! * Any transport of [`hetlb_transport`]: threads of one process
//!   ([`hetlb_transport::threads::group`]) or MPI processes (`hetlb_transport::mpi::Mpi`,
//!   feature `mpi`; the application's communicator, duplicated).
//! * Between calls, [`Balancer::barrier`] and [`Balancer::check`] find a rank that stopped.
//! * Options are one table ([`options`]): set by name from text in every face, or by the
//!   typed builder of [`BalancerConfig`].
//!
//! ```
//! use hetlb_peer::{Balancer, BalancerConfig};
//! use hetlb_transport::threads;
//! let handles: Vec<_> = threads::group(2)
//!     .into_iter()
//!     .map(|m| std::thread::spawn(move || {
//!         let mut items: Vec<u64> = if m.rank() == 0 { (0..10).collect() } else { vec![] };
//!         let config = BalancerConfig::new("cwa").unwrap().set("timeout", "5").unwrap();
//!         let mut b = Balancer::new(&m, config).unwrap();
//!         b.rebalance(&mut items).unwrap();
//!         items.len()
//!     }))
//!     .collect();
//! let counts: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
//! assert_eq!(counts, vec![5, 5]);
//! ```
//!
//! # Design
//! The protocol, the failure model and the reasons behind them are in `README.md` beside this
//! module; in short: every message carries the call's epoch; a rank waits only for the peers
//! it needs and judges only those; a rank that gives a call up before voting aborts it
//! everywhere; the votes are decided in one place (the group's ledger in shared memory, or a
//! coordinating rank), so every rank commits or every rank rolls back.

mod agreement;
mod balancer;
mod config;
mod decide;
mod error;
mod exchange;
mod faults;
mod gather;
mod geometry;
mod holdings;
mod item;
mod learning;
mod locality;
mod migrate;
pub mod options;
mod probe;
pub mod rank_graph;
mod report;
mod session;
mod shortfalls;
mod speed;
pub mod speed_check;
mod store;
mod sync_point;
pub mod trace;
mod wire;

pub use balancer::{Balancer, Deferred, RecordsBalancer};
pub use config::{AUTO, BalancerConfig, LEARNED_SAMPLES, default_candidates};
pub use decide::{CandidatePrediction, Migration, PlannedTransfer, imbalance};
pub use error::{ConfigError, Holding, PeerError, PeerFailure, PlanError};
#[cfg(feature = "fault-injection")]
pub use faults::Fault;
pub use item::Item;
pub use learning::Outcome;
pub use locality::Position;
pub use options::{DEFAULT_CHECK_BUDGET, DEFAULT_TIMEOUT, EntryTimeout, Options, Speeds};
pub use probe::PROBE_BYTES;
pub use report::Report;
pub use speed::SpeedMeter;
pub use store::{
    ByteChunk, Bytes, ItemKind, LoadFn, RecordBuffer, RecordError, Records, Storage, StoreError,
};
pub use sync_point::SyncPoint;
