//! The drivers behind `hetlb run`: each runs a workload of [`hetlb_runtime`] the way the
//! command does — several runs in turn, checked and judged, on threads or on an MPI job that
//! hetlb started — and returns what the command prints.
//!
//! | command | driver |
//! |---|---|
//! | `hetlb run matmul`, `hetlb run synthetic` | [`hetlb_runtime::master_worker`] (its report drawn by [`crate::tables::master_worker`]); on MPI, `master_worker::on_mpi_job` |
//! | `hetlb run iterative` | [`iterative`] |
//! | `hetlb run scenario` | [`scenario`] |
//!
//! `mpi_job` (feature `mpi`) is an MPI job of a program that leaves MPI to hetlb, such as the
//! `hetlb` binary under `mpiexec`. An application that owns MPI needs none of this: it calls
//! the runtimes (or embeds `hetlb_peer`) directly.

pub mod iterative;
#[cfg(feature = "mpi")]
pub mod master_worker;
#[cfg(feature = "mpi")]
pub mod mpi_job;
pub mod scenario;
