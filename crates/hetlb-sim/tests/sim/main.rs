//! The simulator's scenarios, properties, determinism and errors, one test program (one build
//! and one link instead of five): `cargo test -p hetlb-sim --test sim [MODULE::]` runs all of
//! them or one module's.

mod determinism;
mod errors;
mod malformed_scenarios;
mod properties;
mod scenarios;
