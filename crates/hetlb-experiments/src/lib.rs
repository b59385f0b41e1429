//! # hetlb-experiments
//!
//! The papers' experiments, recomputed: every number printed by `hetlb reproduce` comes from
//! here, next to the published number it is compared with ([`paper`]).
//!
//! * [`chau_hetero`] — Chau & Fu's closing claim for clusters of different sizes and speeds,
//!   measured against the optimal integer allocation (000_…, §§4–5).
//! * [`monte_carlo`] — Chau & Fu's Tables 1–2: random load vectors, histogram of the final max
//!   difference (000_…, §3).
//! * [`enumeration`] — Rim et al.'s Table 1: every non-decreasing load vector of a size and
//!   value range, exhaustively (004_…, §4).
//! * [`histogram`] — the histogram both produce.
//! * [`dishet`] — Neelakantan's DISHET experiments: random graphs, eight initial
//!   distributions, DISHET against diffusion, biasing and gdem (002_…, §5).
//!
//! Both drivers run on rayon and are deterministic for a seed whatever the thread count:
//! every trial has its own random stream, and histograms are merged by addition.

pub mod chau;
pub mod chau_hetero;
pub mod dishet;
pub mod efp;
pub mod enumeration;
pub mod histogram;
pub mod mirtaheri;
pub mod monte_carlo;
pub mod overhead;
pub mod paper;
pub mod rim_dynamic;
pub mod rim_table1;
pub mod seed;

pub use histogram::Histogram;
