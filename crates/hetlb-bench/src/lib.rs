//! # hetlb-bench
//!
//! The hot kernels of hetlb timed against their floors in the same run: what `hetlb bench`
//! prints, as library calls returning typed reports.
//!
//! Every benchmark times a kernel and the floor it is measured against in interleaved
//! repetitions ([`timing::interleave`]: each repetition runs every case once, starting with a
//! different case each time, so that a burst of load from another process hits kernel and
//! floor alike), and reports both medians and their ratio ([`Comparison`]), never a single
//! time on its own.
//!
//! | module | kernel | floor |
//! |---|---|---|
//! | [`exchange`] | one in-place dem/oem balance of a 2^n-node cube | a plain pass (sum) over the same vector |
//! | [`diffusion`] | one diffusion and one DISHET round on a torus | one CSR sparse matrix–vector product |
//! | [`dispatch`] | dispatching empty tasks on the threads runtime | a bare request–reply loop between two threads |
//! | [`transmission`] | the pipelined (and phased) schedule of a plan | the overlapped schedule of the same plan |
//! | [`enumeration`] | Rim, Jang & Kim's exhaustive enumeration | planning every vector one by one |
//! | [`simulator`] | the discrete-event engine with each policy kind | the same system without balancing |
//! | [`rebalance`] | peer rebalancing on threads | direct channel sends, an all-reduce, the model |
//!
//! [`tables`] gives what `hetlb bench` shows of each report (lines, tables, CSV), for any
//! face to render.
//!
//! Criterion benchmarks of the same kernels live in `crates/*/benches/` for developers; the
//! MPI counterpart of [`rebalance`] is `examples/rebalance_mpi.rs` (feature `mpi`).
//!
//! ```
//! use hetlb_bench::transmission::{self, TransmissionConfig};
//! let cfg = TransmissionConfig::default().dims(4).repeat(1);
//! let report = transmission::run(&cfg, &mut |_, _| {}).unwrap();
//! assert_eq!(report.details.rows.len(), 9); // three plans, three schedules each
//! assert!(report.comparisons.iter().all(|c| c.kernel_floor_ratio > 0.0));
//! ```

pub mod auto;
pub mod call;
pub mod diffusion;
pub mod dispatch;
pub mod enumeration;
mod error;
pub mod exchange;
pub mod locality;
pub mod rebalance;
pub mod simulator;
pub mod tables;
pub mod timing;
pub mod transmission;

pub use error::BenchError;

/// Setters of a configuration's public fields, each `#[must_use]`: `Config::default()
/// .dims(8).repeat(3)`.
macro_rules! setters {
    ($t:ty { $($field:ident: $ty:ty),* $(,)? }) => {
        impl $t {
            $(
                #[doc = concat!("Sets `", stringify!($field), "`.")]
                #[must_use]
                pub fn $field(mut self, $field: $ty) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}
pub(crate) use setters;
pub use timing::{Comparison, Machine, Report};

/// A seeded pseudo-random vector of `2^dims` loads below `max_load` (xorshift: the same loads
/// on every machine and every run).
///
/// # Complexity
/// `O(2^dims)`.
///
/// # Example
/// ```
/// let loads = hetlb_bench::random_loads(3, 10);
/// assert_eq!(loads.len(), 8);
/// assert!(loads.iter().all(|&w| w < 10));
/// assert_eq!(loads, hetlb_bench::random_loads(3, 10));
/// ```
pub fn random_loads(dims: u32, max_load: u64) -> Vec<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..1usize << dims)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % max_load.max(1)
        })
        .collect()
}
