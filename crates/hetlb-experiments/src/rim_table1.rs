//! Rim, Jang & Kim (2003), Table 1 (§4), by exhaustive enumeration ([`crate::enumeration`]),
//! beside the published columns; and the 64-processor column the paper does not have (loads
//! 0..=7, 1,329,890,705 vectors), which checks OEM's bound `⌈log N / 2⌉ = 3` exhaustively on
//! a size the paper could not.
//!
//! # Example
//! ```
//! use hetlb_core::Algorithm;
//! use hetlb_experiments::rim_table1::column;
//! let oem = column(Algorithm::Oem, 8, &|_| {}).unwrap();
//! assert_eq!(oem.vectors, 1_081_575); // C(25, 8)
//! assert_eq!(oem.matches_paper, Some(true));
//! assert_eq!(oem.bound_holds(), Some(true));
//! ```

use crate::enumeration::{EnumerationError, enumerate};
use crate::histogram::Histogram;
use crate::paper::rim::{RimColumn, rim_column};
use hetlb_core::Algorithm;
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;
use thiserror::Error;

/// The sizes of the paper's table (8, 16, 32 processors).
pub const PAPER_PROCS: [usize; 3] = [8, 16, 32];

/// The rows of the paper's table: differences 0..=3 and "≥ 4".
pub const ROWS: [&str; 5] = ["0", "1", "2", "3", ">=4"];

/// The value range for each size: loads `0..values` (the paper's for 8, 16 and 32
/// processors; for 64, loads 0..=7, beyond the paper), or `None` for another size.
pub fn values_for(procs: usize) -> Option<u32> {
    match procs {
        8 => Some(18),
        16 => Some(13),
        32 => Some(10),
        64 => Some(8),
        _ => None,
    }
}

/// The algorithm's proven bound on the max difference for `procs = 2^n` processors, if any:
/// `n` for DEM (§2.1), `⌈n/2⌉` for OEM (Theorem 1).
pub fn bound(algorithm: Algorithm, procs: usize) -> Option<u64> {
    let n = u64::from(procs.trailing_zeros());
    match algorithm {
        Algorithm::Dem | Algorithm::DemFixed => Some(n),
        Algorithm::Oem => Some(n.div_ceil(2)),
        _ => None,
    }
}

/// Where [`bound`] comes from: `⌈log N / 2⌉, Theorem 1` for OEM, `log N, §2.1` otherwise.
pub fn bound_source(algorithm: Algorithm) -> &'static str {
    if algorithm == Algorithm::Oem {
        "⌈log N / 2⌉, Theorem 1"
    } else {
        "log N, §2.1"
    }
}

/// The paper's name of a column's algorithm (`DEM`, `OEM`), if it has one.
pub fn paper_name(algorithm: Algorithm) -> Option<&'static str> {
    match algorithm {
        Algorithm::Dem => Some("DEM"),
        Algorithm::Oem => Some("OEM"),
        _ => None,
    }
}

/// The published column for `algorithm` on `procs` processors, if the paper has it.
pub fn published(algorithm: Algorithm, procs: usize) -> Option<&'static RimColumn> {
    paper_name(algorithm).and_then(|name| rim_column(procs, name))
}

/// A histogram in the paper's rows: counts of differences 0, 1, 2, 3 and ≥ 4.
pub fn bucketed(h: &Histogram) -> [u64; 5] {
    [
        h.count(0),
        h.count(1),
        h.count(2),
        h.count(3),
        h.count_at_least(4),
    ]
}

/// A published column, as printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PaperColumn {
    /// `DEM` or `OEM`.
    pub algorithm: &'static str,
    /// Difference → count; the last key is `">=4"`.
    pub histogram: BTreeMap<String, u64>,
}

impl From<&RimColumn> for PaperColumn {
    fn from(c: &RimColumn) -> Self {
        Self {
            algorithm: c.algorithm,
            histogram: ROWS.iter().map(|r| r.to_string()).zip(c.counts).collect(),
        }
    }
}

/// One column: one algorithm over every vector of one size, beside the paper's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Table1Row {
    /// The rule.
    pub algorithm: Algorithm,
    /// Processors.
    pub procs: usize,
    /// Loads are `0..values`.
    pub values: u32,
    /// Vectors enumerated.
    pub vectors: u64,
    /// Max difference → vectors.
    pub histogram: Histogram,
    /// Mean max difference.
    pub average: f64,
    /// The largest max difference found.
    pub max_difference: u64,
    /// The proven bound, where there is one (DEM: log N; OEM: ⌈log N / 2⌉).
    pub bound: Option<u64>,
    /// Wall-clock seconds of the enumeration.
    pub seconds: f64,
    /// The paper's column, where it has one.
    pub paper: Option<PaperColumn>,
    /// True when every published count (0, 1, 2, 3, ≥4) equals ours.
    pub matches_paper: Option<bool>,
}

impl Table1Row {
    /// The published column this row is compared with.
    pub fn published(&self) -> Option<&'static RimColumn> {
        published(self.algorithm, self.procs)
    }

    /// Whether the largest max difference stays within the proven bound, where there is one.
    pub fn bound_holds(&self) -> Option<bool> {
        self.bound.map(|b| self.max_difference <= b)
    }
}

/// Why a column cannot be computed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RimTable1Error {
    /// A size other than 8, 16, 32 (the paper's) or 64.
    #[error("no value range for {0} processors (8, 16, 32 or 64)")]
    Size(usize),
    /// The enumeration refused the size.
    #[error(transparent)]
    Enumeration(#[from] EnumerationError),
}

/// Enumerates every non-decreasing load vector of `procs` processors in the range of
/// [`values_for`] and balances it with `algorithm`; `progress` as [`enumerate`].
///
/// # Complexity
/// `C(K − 1 + P, P)` vectors; see [`enumerate`] for how the pair rules avoid visiting each.
///
/// # Errors
/// [`RimTable1Error::Size`] for a size without a range, or the enumeration's error.
pub fn column(
    algorithm: Algorithm,
    procs: usize,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Table1Row, RimTable1Error> {
    let values = values_for(procs).ok_or(RimTable1Error::Size(procs))?;
    let started = Instant::now();
    let histogram = enumerate(algorithm, procs, values, progress)?;
    let seconds = started.elapsed().as_secs_f64();
    let column = published(algorithm, procs);
    Ok(Table1Row {
        algorithm,
        procs,
        values,
        vectors: histogram.total(),
        average: histogram.average(),
        max_difference: histogram.max_difference(),
        bound: bound(algorithm, procs),
        seconds,
        matches_paper: column.map(|c| c.counts == bucketed(&histogram)),
        paper: column.map(PaperColumn::from),
        histogram,
    })
}
