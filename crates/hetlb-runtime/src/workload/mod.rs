//! Ready-made workloads: the paper's matrix multiplication and a synthetic CPU-bound task
//! (master-worker), and an iterative application balanced by peer rebalancing.

#[cfg(feature = "iterative")]
pub mod iterative;
#[cfg(feature = "master-worker")]
pub mod matmul;
pub mod synthetic;
