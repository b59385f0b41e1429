//! # hetlb-experiments
//!
//! The papers' experiments, recomputed: every number printed by `hetlb reproduce` comes from
//! here, next to the published number it is compared with ([`paper`]). Each reproduction is
//! one call returning a typed, serialisable result; a face (the command line, later Python or
//! C) only renders it.
//!
//! | reproduction | module | paper |
//! |---|---|---|
//! | `chau-table1`, `chau-table2` | [`chau`] over [`monte_carlo`] | Chau & Fu, *Load Balancing Between Heterogenous Computing Clusters*, Tables 1–2 |
//! | `chau-hetero` | [`chau_hetero`] | Chau & Fu, §5's claim for clusters of different sizes and speeds |
//! | `rim-table1` | [`rim_table1`] over [`enumeration`] | Rim, Jang & Kim (2003), Table 1 |
//! | `rim-dynamic` | [`rim_dynamic`] (simulator) | Rim, Jang & Kim (2003), §4, Figs. 7–9 |
//! | `rim-overhead` | [`overhead`] | Rim, Jang & Kim (2003), §§5.2 and 6.3 |
//! | `dishet` | [`dishet`] | Neelakantan (2012), §5: iterations |
//! | `dishet-response` | [`dishet::response`] (simulator) | Neelakantan (2012), §5: throughput and response time |
//! | `mirtaheri` | [`mirtaheri`] (simulator) | Mirtaheri & Grandinetti (2017), §5 and eq. 25 |
//! | `efp` | [`efp`] (real workers) | Aldasht, Ortega & Puntonet, *Dynamic load balancing in heterogeneous clusters*, Tables 2–6 and Figs. 3, 9–11 |
//!
//! [`tables`] holds what each reproduction shows a person (lines and tables, ours beside
//! the paper's) and its CSV, presentation-neutral, for every face to render.
//!
//! [`drivers`] holds the drivers behind `hetlb run`: the workloads of [`hetlb_runtime`] run in
//! turn, checked and judged, on threads or on an MPI job (feature `mpi`), and what they show
//! ([`tables::master_worker`] for the master-worker runs, beside the paper's Tables 2–6).
//!
//! [`histogram`] is the histogram the Monte-Carlo and exhaustive drivers produce; [`seed`]
//! gives every trial its own random stream, so that results are deterministic for a seed
//! whatever the thread count (histograms are merged by addition, simulations averaged in a
//! fixed order).
//!
//! The published numbers are targets, transcribed and printed beside ours; nothing is derived
//! from them.

pub mod chau;
pub mod chau_hetero;
pub mod dishet;
pub mod drivers;
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
pub mod tables;

pub use histogram::Histogram;
