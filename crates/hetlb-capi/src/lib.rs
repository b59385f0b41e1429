//! hetlb's C interface: `libhetlb.so` / `libhetlb.a` and `include/hetlb.h`, for C, C++ and
//! Fortran (through `hetlb.f90`) MPI codes that embed hetlb's peer rebalancing.
//!
//! * [`hetlb_balance`]: a rule on a vector of loads, no MPI (the plan `hetlb balance`
//!   prints); [`hetlb_advise`]: whether a move pays, with which rule and routing (`hetlb
//!   advise`).
//! * With the `mpi` feature: `hetlb_balancer_create` on the application's communicator
//!   (duplicated), `hetlb_record` (measured speeds), `hetlb_rebalance` of fixed-size records
//!   in a `malloc`'ed array (moved as plain bytes by the same protocol as the Rust API, with
//!   the same guarantee: every record held by exactly one rank after any call, failures
//!   included), `hetlb_resolve`, and the two-step form (`hetlb_plan_create`,
//!   `hetlb_plan_exports`, `hetlb_plan_imports`, `hetlb_migrate`) for items that are not
//!   flat records.
//!
//! Every function returns 0 or a negative `HETLB_ERR_*` code ([`error`]) with the message in
//! the calling thread's [`hetlb_last_error`]; no panic crosses the boundary. The guide is
//! `docs/c-api.md`.

pub mod advise;
pub mod balance;
pub mod error;
mod ffi_util;
pub mod malloc_buffer;
pub mod memory;
pub mod options;

#[cfg(feature = "mpi")]
pub mod balancer;
#[cfg(feature = "mpi")]
mod collective;
#[cfg(feature = "mpi")]
pub mod records;
#[cfg(feature = "mpi")]
pub mod two_step;

pub use advise::hetlb_advise;
pub use balance::{hetlb_balance, hetlb_last_error, hetlb_version};
pub use error::*;
