//! Chau & Fu, *Load Balancing Between Heterogenous Computing Clusters*, Tables 1–2 (§3):
//! the Monte-Carlo histograms of [`crate::monte_carlo`] beside the published ones, with a
//! two-sample test per column.
//!
//! # Example
//! ```
//! use hetlb_experiments::chau::{ChauTable, reproduce};
//! use hetlb_experiments::monte_carlo::MonteCarlo;
//! let which = ChauTable::Two;
//! let mc = MonteCarlo::new(which.algorithm()).dimensions(3..=4).trials(2000);
//! let rows = reproduce(which, &mc, &|_| {}).unwrap();
//! assert_eq!(rows.len(), 2);
//! let paper = rows[0].paper.as_ref().unwrap();
//! assert_eq!(paper.trials, 100_000);
//! assert!(rows.iter().all(|r| r.max_abs_z.is_some()));
//! ```

use crate::histogram::Histogram;
use crate::monte_carlo::{MonteCarlo, MonteCarloError, MonteCarloRow};
use crate::paper::chau::{CHAU_TABLE1, CHAU_TABLE2, ChauRow};
use hetlb_core::Algorithm;
use serde::Serialize;

/// Which of the two tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChauTable {
    /// Table 1: DEM (reproduced by the fixed-orientation rule, `dem-fixed`).
    One,
    /// Table 2: the improved DEM.
    Two,
}

impl ChauTable {
    /// The published rows.
    pub fn paper(self) -> &'static [ChauRow; 10] {
        match self {
            ChauTable::One => &CHAU_TABLE1,
            ChauTable::Two => &CHAU_TABLE2,
        }
    }

    /// The rule that reproduces the table.
    pub fn algorithm(self) -> Algorithm {
        match self {
            ChauTable::One => Algorithm::DemFixed,
            ChauTable::Two => Algorithm::DemImproved,
        }
    }

    /// `Chau & Fu, Table 1 (DEM)` or `… Table 2 (improved DEM)`.
    pub fn title(self) -> &'static str {
        match self {
            ChauTable::One => "Chau & Fu, Table 1 (DEM)",
            ChauTable::Two => "Chau & Fu, Table 2 (improved DEM)",
        }
    }
}

/// A published row, as a histogram.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PublishedRow {
    /// Trials (the sum of the printed counts).
    pub trials: u64,
    /// Max difference → trials.
    pub histogram: Histogram,
    /// The printed average.
    pub average: f64,
}

/// One dimension: ours, the paper's, and how far apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TableRow {
    /// The rule run.
    pub algorithm: Algorithm,
    /// Hypercube dimension.
    pub n: u32,
    /// Trials run.
    pub trials: u64,
    /// Max difference → trials.
    pub histogram: Histogram,
    /// Mean max difference.
    pub average: f64,
    /// The paper's row for this `n`, if it has one.
    pub paper: Option<PublishedRow>,
    /// Largest |z| over the columns of the two-sample test of proportions against the paper.
    pub max_abs_z: Option<f64>,
}

/// `row` beside the paper's row of the same dimension in `which`.
pub fn compare(which: ChauTable, row: MonteCarloRow) -> TableRow {
    let paper = which
        .paper()
        .iter()
        .find(|p| p.n == row.n)
        .map(|p| PublishedRow {
            trials: p.counts.iter().sum(),
            histogram: Histogram::from_dense(&p.counts),
            average: p.average,
        });
    let max_abs_z = paper
        .as_ref()
        .map(|p| max_abs_z(&row.histogram, &p.histogram));
    TableRow {
        algorithm: row.algorithm,
        n: row.n,
        trials: row.trials,
        histogram: row.histogram,
        average: row.average,
        paper,
        max_abs_z,
    }
}

/// Runs `mc` and sets every row beside the paper's ([`compare`]); `progress` as
/// [`MonteCarlo::run`]. `mc.algorithm` need not be the table's own: any rule can be held to
/// the published numbers.
///
/// # Errors
/// [`MonteCarloError`] as [`MonteCarlo::run`].
pub fn reproduce(
    which: ChauTable,
    mc: &MonteCarlo,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Vec<TableRow>, MonteCarloError> {
    Ok(mc
        .run(progress)?
        .into_iter()
        .map(|r| compare(which, r))
        .collect())
}

/// The two-sample z statistic of each column's proportion (difference `d`, for `d` up to the
/// largest in either histogram); the largest in absolute value. A column empty in both counts
/// 0.
///
/// # Example
/// ```
/// use hetlb_experiments::Histogram;
/// use hetlb_experiments::chau::max_abs_z;
/// let a = Histogram::from_dense(&[50, 50]);
/// assert_eq!(max_abs_z(&a, &a), 0.0);
/// let b = Histogram::from_dense(&[60, 40]);
/// assert!(max_abs_z(&a, &b) > 1.0);
/// ```
pub fn max_abs_z(ours: &Histogram, paper: &Histogram) -> f64 {
    let (t1, t2) = (ours.total() as f64, paper.total() as f64);
    let top = ours.max_difference().max(paper.max_difference());
    (0..=top)
        .map(|d| {
            let (c1, c2) = (ours.count(d) as f64, paper.count(d) as f64);
            let p = (c1 + c2) / (t1 + t2);
            let sigma = (p * (1.0 - p) * (1.0 / t1 + 1.0 / t2)).sqrt();
            if sigma == 0.0 {
                0.0
            } else {
                ((c1 / t1 - c2 / t2) / sigma).abs()
            }
        })
        .fold(0.0, f64::max)
}
