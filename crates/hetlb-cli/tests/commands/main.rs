//! The end-to-end tests of the `hetlb` command, one module per subject, in one test binary
//! (one link instead of fifteen, and the modules' tests run in parallel; `cargo test -p
//! hetlb-cli --test commands MODULE::` runs one module).

mod common;

mod advise;
mod bad_inputs;
mod balance_topology;
mod bench;
mod cli;
mod faces_defects;
mod fuzz_run_scenario;
mod iterative;
mod options;
mod plot_layout;
mod readme;
mod run;
mod run_scenario;
mod simulate;
mod trace;
