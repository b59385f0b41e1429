//! Peer rebalancing on threads and on the simulated transport, one test program (one build and
//! one link instead of seven; the modules' tests run side by side):
//! `cargo test -p hetlb-peer --test peer [MODULE::]` runs all of them or one module's. The MPI
//! tests are a separate program run under `mpiexec` (`--features mpi --test peer_mpi`).

mod auto;
mod capacities;
mod entry;
mod faults;
mod locality;
mod support;
mod threads;
mod trace;
