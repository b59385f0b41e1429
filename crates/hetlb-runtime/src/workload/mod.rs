//! Ready-made jobs: the paper's matrix multiplication and a synthetic CPU-bound task.

pub mod matmul;
pub mod synthetic;
