//! Speeds that cannot be right.
//!
//! A rule that weighs measured speeds (`Speeds::Measured` in [`crate`]) trusts whatever
//! the application reports: units done and the seconds they took. A work loop the compiler
//! removed, or a step timed below the clock's resolution, reports millions or billions of
//! units a second, and the rule then sends everything to that rank. [`implausible`] names
//! such reports so that a report can warn about them.

use serde::Serialize;

/// Faster than this many units per second is taken as impossible: a unit of work would take
/// less than a nanosecond, a few CPU cycles.
pub const MAX_UNITS_PER_SECOND: f64 = 1e9;
/// Measured times shorter than this (seconds) are below what the clocks resolve reliably.
pub const MIN_SECONDS: f64 = 1e-6;
/// A speed more than this many times the median of the others is out of line.
pub const OUT_OF_LINE: f64 = 1000.0;

/// Why a measured speed cannot be right.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Implausible {
    /// The rank (or processor) that reported it.
    pub rank: usize,
    /// The speed, units per second.
    pub speed: f64,
    /// What is wrong with it.
    pub reason: String,
}

/// The speeds in `speeds` (units per second, one per rank; `None` where nothing was
/// measured) that cannot be right: not finite, above [`MAX_UNITS_PER_SECOND`], or more
/// than [`OUT_OF_LINE`] times the median of the measured ones.
///
/// # Example
/// ```
/// use hetlb_peer::speed_check::implausible;
/// assert!(implausible(&[Some(120.0), Some(95.0), Some(40.0)]).is_empty());
/// let bad = implausible(&[Some(120.0), Some(6.5e9), Some(100.0)]);
/// assert_eq!(bad.len(), 1);
/// assert_eq!(bad[0].rank, 1);
/// ```
pub fn implausible(speeds: &[Option<f64>]) -> Vec<Implausible> {
    let mut measured: Vec<f64> = speeds
        .iter()
        .flatten()
        .copied()
        .filter(|s| s.is_finite())
        .collect();
    measured.sort_by(f64::total_cmp);
    let median = measured.get(measured.len() / 2).copied();
    speeds
        .iter()
        .enumerate()
        .filter_map(|(rank, s)| {
            let speed = (*s)?;
            let reason = if !speed.is_finite() {
                "not a finite number (a step timed at zero seconds?)".to_string()
            } else if speed > MAX_UNITS_PER_SECOND {
                format!(
                    "more than {MAX_UNITS_PER_SECOND:e} units a second: a unit in under a \
                     nanosecond (was the work optimised away, or timed below the clock's \
                     resolution?)"
                )
            } else if median.is_some_and(|m| m > 0.0 && speed > OUT_OF_LINE * m) {
                format!(
                    "{:.0} times the median of the ranks' speeds",
                    speed / median.unwrap_or(1.0)
                )
            } else {
                return None;
            };
            Some(Implausible {
                rank,
                speed,
                reason,
            })
        })
        .collect()
}

/// The speed of `units` done in `seconds`, or `None` when nothing was done; a time below
/// [`MIN_SECONDS`] for work done gives an infinite speed, which [`implausible`] reports.
///
/// # Example
/// ```
/// use hetlb_peer::speed_check::speed;
/// assert_eq!(speed(100, 0.5), Some(200.0));
/// assert_eq!(speed(0, 0.5), None);
/// assert_eq!(speed(10, 0.0), Some(f64::INFINITY));
/// ```
pub fn speed(units: u64, seconds: f64) -> Option<f64> {
    if units == 0 {
        return None;
    }
    if seconds < MIN_SECONDS {
        return Some(f64::INFINITY);
    }
    Some(units as f64 / seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_and_out_of_line_speeds_are_named() {
        let bad = implausible(&[Some(1e3), None, Some(f64::INFINITY), Some(5e6), Some(1.2e3)]);
        let ranks: Vec<usize> = bad.iter().map(|b| b.rank).collect();
        assert_eq!(ranks, vec![2, 3]);
        assert!(bad[0].reason.contains("finite"));
        assert!(bad[1].reason.contains("median"));
        assert!(implausible(&[]).is_empty());
        assert!(implausible(&[Some(2e9)])[0].reason.contains("nanosecond"));
    }
}
