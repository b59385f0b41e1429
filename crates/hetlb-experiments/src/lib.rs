//! experiments
pub mod dishet;
