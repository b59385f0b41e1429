//! Aldasht, Ortega & Puntonet, *Dynamic load balancing in heterogeneous clusters: exploitation
//! of the processing power*: Tables 2–6 (rows and `T_exec`/`T_comp`/`T_comm`/`T_wait` per
//! processor, matrix orders 100 to 2000 on one fast and eight slow processors).
//!
//! The tables live with the runtime that runs the same experiment (`hetlb run matmul` prints
//! them too); they are re-exported here so that every published number of `hetlb reproduce`
//! is reachable from [`crate::paper`].

pub use hetlb_runtime::paper::{PaperRow, PaperTable, TABLES, table_for};

/// What the paper gives for Figs. 3 and 9–11: captions only.
pub const FIGURES: &str = "Figs. 3 and 9–11 of Aldasht, Ortega & Puntonet survive only as captions (time against \
    the matrix order; time, efficiency and speedup against the number of processors for \
    1000 × 1000, static against EFP): there are no published numbers to compare those rows with.";

/// The processors of the paper's tables: one master and eight workers.
pub const PROCESSORS: usize = 9;
