//! Emulated heterogeneity: a processor with slowdown factor `s` runs every task's kernel `s`
//! times, so it really is `s` times slower at the same work.
//!
//! The factor belongs to the processor, never to the balancer: the master only ever sees the
//! times the processors report, exactly as on a real heterogeneous cluster. A factor can change
//! at a given moment of the run, to show the balancer following a processor that slows down.
//!
//! On a machine with fewer cores than processors, the threads share the cores: a processor's
//! speed is then its share of a core divided by its factor, and the share grows when other
//! processors go idle. The balancer measures whatever speed results.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// A processor's slowdown factor, optionally changing once during the run.
///
/// # Example
/// ```
/// use hetlb_runtime::Slowdown;
/// use std::time::Duration;
/// let s = Slowdown::constant(3).then(Duration::from_secs(2), 6);
/// assert_eq!(s.factor_at(Duration::from_secs(1)), 3);
/// assert_eq!(s.factor_at(Duration::from_secs(2)), 6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slowdown {
    /// Repetitions of each kernel from the start, at least 1.
    pub factor: u32,
    /// A later factor and the time since the start of the run when it takes effect.
    pub change: Option<(Duration, u32)>,
}

impl Default for Slowdown {
    fn default() -> Self {
        Self::constant(1)
    }
}

impl Slowdown {
    /// The same factor for the whole run.
    pub fn constant(factor: u32) -> Self {
        Self {
            factor,
            change: None,
        }
    }

    /// Switches to `factor` once `after` has passed since the start of the run.
    #[must_use]
    pub fn then(mut self, after: Duration, factor: u32) -> Self {
        self.change = Some((after, factor));
        self
    }

    /// The factor in force `elapsed` after the start of the run (at least 1).
    pub fn factor_at(&self, elapsed: Duration) -> u32 {
        match self.change {
            Some((after, f)) if elapsed >= after => f.max(1),
            _ => self.factor.max(1),
        }
    }
}
