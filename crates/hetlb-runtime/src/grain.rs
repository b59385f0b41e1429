//! The granularity of a run: eq. (1) of Aldasht, Ortega & Puntonet with a seeded `rand()`.

use hetlb_core::rules::self_scheduling::{SchedulingError, granularity};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

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
