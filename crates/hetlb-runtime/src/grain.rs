//! The granularity of a run: eq. (1) of Aldasht, Ortega & Puntonet with a seeded `rand()`, and
//! the number of tasks a workload is cut into ([`Grain`]).

use hetlb_core::rules::self_scheduling::{Policy, SchedulingError, granularity};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

/// The value of `rand()` in eq. (1) for `seed`: uniform in `(0, 1]`, the same on every
/// machine and every rank.
///
/// # Example
/// ```
/// use hetlb_runtime::grain::draw;
/// let r = draw(1);
/// assert!(r > 0.0 && r <= 1.0);
/// assert_eq!(r, draw(1));
/// ```
pub fn draw(seed: u64) -> f64 {
    1.0 - Pcg64::seed_from_u64(seed).random::<f64>()
}

/// `G(P)` by eq. (1) with the seeded draw: `(G, rand())`.
///
/// # Errors
/// As [`granularity`].
///
/// # Example
/// ```
/// use hetlb_runtime::grain::paper_granularity;
/// let (g, _) = paper_granularity(3, 9, 1000, 1).unwrap();
/// assert_eq!(g % 36, 0); // a multiple of P(P−1)/2
/// ```
pub fn paper_granularity(
    n: u32,
    processors: usize,
    size: u64,
    seed: u64,
) -> Result<(u64, f64), SchedulingError> {
    let r = draw(seed);
    Ok((granularity(n, processors, r, size)?, r))
}

/// How many tasks a workload is cut into, and how that number was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Grain {
    /// Tasks `G`.
    pub tasks: u64,
    /// How `G` was chosen, for people.
    pub source: String,
}

impl Grain {
    /// One task per unit of `size` (the synthetic workload).
    pub fn per_unit(size: u64) -> Self {
        Self {
            tasks: size,
            source: "one task per unit".into(),
        }
    }

    /// The tasks of a matrix product of order `size` on `workers` processors: `given`, or
    /// eq. (1) of Aldasht, Ortega & Puntonet with `grain_n` and a `rand()` seeded by `seed`;
    /// raised to what every policy of `policies` needs to give every processor work, cut to
    /// one row per task at most.
    ///
    /// # Errors
    /// A `grain_n` outside `1..=3`, as [`paper_granularity`].
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::self_scheduling::Policy;
    /// use hetlb_runtime::grain::Grain;
    /// let g = Grain::matmul(Some(2), 3, 1, 4, 100, &[Policy::Efp]).unwrap();
    /// assert_eq!(g.tasks, 7); // P(P−1)/2 + 1, so that every processor gets work
    /// assert!(g.source.starts_with("given, raised from 2 to 7"));
    /// ```
    pub fn matmul(
        given: Option<u64>,
        grain_n: u32,
        seed: u64,
        workers: usize,
        size: u64,
        policies: &[Policy],
    ) -> Result<Self, SchedulingError> {
        let (g, mut source) = match given {
            Some(g) => (g, "given".to_string()),
            None => {
                let (g, draw) = paper_granularity(grain_n, workers, size, seed)?;
                (g, format!("eq. (1): n = {grain_n}, rand() = {draw:.4}"))
            }
        };
        // Every processor must get work, or the run measures only some of them.
        let needed = policies
            .iter()
            .map(|p| p.minimum_tasks(workers))
            .max()
            .unwrap_or(1);
        let mut tasks = g;
        if tasks < needed {
            tasks = needed;
            source += &format!(", raised from {g} to {needed} so that every processor gets work");
        }
        if tasks > size {
            source += &format!(", cut from {tasks} to {size} (one row per task at most)");
            tasks = size;
        }
        Ok(Self { tasks, source })
    }
}
