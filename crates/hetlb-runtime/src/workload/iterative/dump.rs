//! The dump of an iterative run: every rebalance as the rule saw it, one JSON object a line
//! (JSON Lines). Written by `hetlb run iterative --dump`, read by `hetlb replay`
//! ([`super::replay`]).
//!
//! ```text
//! {"step":1,"iteration":5,"algorithm":"cwa","topology":"hypercube:2","capacities":[…],
//!  "loads_before":[…],"planned_after":[…],"loads_after":[…],"measured_speeds":[…],
//!  "imbalance_before":1.5,"imbalance_after":1.0}
//! ```
//!
//! A reader needs `step`, `algorithm`, `topology`, `capacities`, `loads_before` and
//! `loads_after`; the other fields may be left out.

#[cfg(doc)]
use super::IterativeRun;
use super::Step;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Read, Write};
use thiserror::Error;

/// The longest line read (bytes): a step of 2^20 ranks takes about 40 MiB.
pub const MAX_LINE_BYTES: u64 = 64 << 20;
/// The most ranks a recorded step may have.
pub const MAX_RANKS: usize = 1 << 20;

/// One line of a dump: a rebalance as the rule saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DumpLine {
    /// The rebalance's number in the run, from 1.
    pub step: u64,
    /// Iterations done when it was called.
    #[serde(default)]
    pub iteration: u64,
    /// The rule.
    pub algorithm: String,
    /// The ranks' topology, as a spec (`hypercube:3`, `ring:6`, `file:PATH`, …).
    pub topology: String,
    /// The capacities the rule weighed (all 1 when it used none).
    pub capacities: Vec<f64>,
    /// Units per rank as the rule saw them.
    pub loads_before: Vec<u64>,
    /// The rule's final loads.
    #[serde(default)]
    pub planned_after: Vec<u64>,
    /// What each rank held after the move.
    pub loads_after: Vec<u64>,
    /// The speeds measured, when the rule was given measured speeds.
    #[serde(default)]
    pub measured_speeds: Option<Vec<f64>>,
    /// `max (load ÷ capacity) ÷ average` before, as the run computed it.
    #[serde(default)]
    pub imbalance_before: Option<f64>,
    /// The same after.
    #[serde(default)]
    pub imbalance_after: Option<f64>,
}

impl DumpLine {
    /// Rebalance number `step` (from 1) of a run.
    pub fn of(step: u64, s: &Step) -> Self {
        let r = &s.report;
        Self {
            step,
            iteration: s.iteration,
            algorithm: r.algorithm.clone(),
            topology: r.topology.clone(),
            capacities: r
                .capacities
                .clone()
                .unwrap_or_else(|| vec![1.0; r.loads_before.len()]),
            loads_before: r.loads_before.clone(),
            planned_after: r.planned_after.clone(),
            loads_after: r.loads_after.clone(),
            measured_speeds: r.measured_speeds.clone(),
            imbalance_before: Some(s.imbalance_before),
            imbalance_after: Some(s.imbalance_after),
        }
    }

    /// Checks that the line can be replayed: loads for 1 to [`MAX_RANKS`] ranks, as many
    /// loads after and capacities, every capacity positive and finite.
    ///
    /// # Errors
    /// [`DumpError::Invalid`] naming the field (`line` is left 0 for the caller to set).
    pub fn check(&self) -> Result<(), DumpError> {
        let bad = |message: String| Err(DumpError::Invalid { line: 0, message });
        let n = self.loads_before.len();
        if n == 0 {
            return bad("loads_before: empty".into());
        }
        if n > MAX_RANKS {
            return bad(format!(
                "loads_before: {n} ranks, more than the {MAX_RANKS} a replay handles"
            ));
        }
        if self.loads_after.len() != n {
            return bad(format!(
                "loads_after: {} values for {n} ranks",
                self.loads_after.len()
            ));
        }
        if self.capacities.len() != n {
            return bad(format!(
                "capacities: {} values for {n} ranks",
                self.capacities.len()
            ));
        }
        if let Some(i) = self
            .capacities
            .iter()
            .position(|c| !(c.is_finite() && *c > 0.0))
        {
            return bad(format!(
                "capacities: value {} must be positive and finite",
                i + 1
            ));
        }
        Ok(())
    }
}

/// Why a dump could not be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum DumpError {
    /// Reading failed.
    #[error("line {line}")]
    Io {
        /// The line (from 1).
        line: usize,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
    /// A line longer than [`MAX_LINE_BYTES`]: not a dump.
    #[error(
        "line {line}: longer than {} MiB; not a dump of `hetlb run iterative`",
        MAX_LINE_BYTES >> 20
    )]
    TooLong {
        /// The line (from 1).
        line: usize,
    },
    /// A line that is not a recorded rebalance.
    #[error("line {line}")]
    Json {
        /// The line (from 1).
        line: usize,
        /// What the JSON reader found.
        #[source]
        source: serde_json::Error,
    },
    /// A recorded rebalance that cannot be replayed ([`DumpLine::check`]).
    #[error("line {line}: {message}")]
    Invalid {
        /// The line (from 1).
        line: usize,
        /// The field at fault and why.
        message: String,
    },
}

/// Writes every rebalance of a run (its [`IterativeRun::steps`]) to `w`, one [`DumpLine`] a
/// line.
///
/// # Errors
/// The first failed write.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::iterative::{dump, run_threads, IterativeConfig};
/// use hetlb_peer::BalancerConfig;
/// use hetlb_runtime::Slowdown;
/// let mut cfg = IterativeConfig::default();
/// (cfg.cells, cfg.iterations, cfg.every, cfg.cost, cfg.payload) = (64, 4, 2, 5, 8);
/// cfg.slowdowns = vec![Slowdown::constant(1); 2];
/// let run = run_threads(&cfg, 2, Some(BalancerConfig::new("cwa").unwrap()), None, None).unwrap();
/// let mut text = Vec::new();
/// dump::write(&mut text, &run.steps).unwrap();
/// let lines = dump::read(&text[..]).collect::<Result<Vec<_>, _>>().unwrap();
/// assert_eq!(lines.len(), run.steps.len());
/// assert_eq!(lines[0].loads_after.iter().sum::<u64>(), 64);
/// ```
pub fn write(mut w: impl Write, steps: &[Step]) -> std::io::Result<()> {
    for (k, s) in steps.iter().enumerate() {
        serde_json::to_writer(&mut w, &DumpLine::of(k as u64 + 1, s))?;
        writeln!(w)?;
    }
    w.flush()
}

/// The recorded rebalances of a dump, in order, each [checked](DumpLine::check); blank
/// lines are skipped. Lines are numbered from 1, blank ones included.
pub fn read<R: BufRead>(reader: R) -> Lines<R> {
    Lines {
        reader,
        line: 0,
        text: String::new(),
        done: false,
    }
}

/// The iterator of [`read`].
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    line: usize,
    text: String,
    done: bool,
}

impl<R> Lines<R> {
    /// The number of the last line read (from 1; 0 before the first).
    pub fn line(&self) -> usize {
        self.line
    }
}

impl<R: BufRead> Iterator for Lines<R> {
    type Item = Result<DumpLine, DumpError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            self.line += 1;
            let line = self.line;
            self.text.clear();
            let read = match (&mut self.reader)
                .take(MAX_LINE_BYTES + 1)
                .read_line(&mut self.text)
            {
                Ok(n) => n,
                Err(source) => {
                    self.done = true;
                    return Some(Err(DumpError::Io { line, source }));
                }
            };
            if read == 0 {
                self.done = true;
                return None;
            }
            if read as u64 > MAX_LINE_BYTES {
                self.done = true;
                return Some(Err(DumpError::TooLong { line }));
            }
            if self.text.trim().is_empty() {
                continue;
            }
            let parsed = serde_json::from_str::<DumpLine>(&self.text)
                .map_err(|source| DumpError::Json { line, source })
                .and_then(|d| match d.check() {
                    Ok(()) => Ok(d),
                    Err(DumpError::Invalid { message, .. }) => {
                        Err(DumpError::Invalid { line, message })
                    }
                    Err(e) => Err(e),
                });
            if parsed.is_err() {
                self.done = true;
            }
            return Some(parsed);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minimal_line_is_read_and_bad_ones_are_named_by_line() {
        let text = "\n{\"step\":2,\"algorithm\":\"cwa\",\"topology\":\"ring:2\",\"capacities\":[1,2],\
                    \"loads_before\":[3,0],\"loads_after\":[1,2]}\n{\"step\":3}\n";
        let mut lines = read(text.as_bytes());
        let first = lines.next().unwrap().unwrap();
        assert_eq!((first.step, first.iteration), (2, 0));
        assert_eq!(first.imbalance_before, None);
        let e = lines.next().unwrap().unwrap_err();
        assert!(
            matches!(e, DumpError::Json { line: 3, .. }),
            "{e}: blank lines count"
        );
        let cause = std::error::Error::source(&e).unwrap().to_string();
        assert!(cause.contains("missing field `algorithm`"), "{cause}");
        assert!(lines.next().is_none());
    }

    #[test]
    fn lines_that_cannot_be_replayed_are_refused() {
        let line = |caps: &str, after: &str| {
            format!(
                "{{\"step\":1,\"algorithm\":\"cwa\",\"topology\":\"ring:2\",\"capacities\":{caps},\
                 \"loads_before\":[3,0],\"loads_after\":{after}}}"
            )
        };
        let first = |text: String| read(std::io::Cursor::new(text)).next().unwrap();
        let e = first(line("[1,0]", "[1,2]")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: capacities: value 2 must be positive and finite"
        );
        let e = first(line("[1,1]", "[1]")).unwrap_err();
        assert_eq!(e.to_string(), "line 1: loads_after: 1 values for 2 ranks");
        assert!(first(line("[1,1]", "[2,1]")).is_ok());
    }
}
