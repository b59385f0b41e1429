//! The master-worker on threads and simulator scenarios on real workers, one test program (one
//! build and one link instead of three; the modules' tests run side by side): `cargo test -p
//! hetlb-runtime --features full --test runtime [MODULE::]`. Each module needs its feature
//! (`master-worker`, `scenario`); the MPI tests are a separate program run under `mpiexec`
//! (`--features mpi,full --test mpi`).

#[cfg(feature = "scenario")]
mod scenario;
#[cfg(feature = "scenario")]
mod scenario_limits;
#[cfg(feature = "master-worker")]
mod threads;
